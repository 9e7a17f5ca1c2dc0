// The workload kinds as the UI sees them against libs/workload's one list
// (libs/workload/testdata/kinds.json; tests/workload/test_kinds.py holds the server's, the agent's
// and libs/policy's registries to it; ADR 0027): the OpenAPI the client is generated from offers
// exactly those kinds, and the UI names each one.
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { WorkloadSpec } from "../client/types";
import { describeWorkload } from "./workload";

const here = dirname(fileURLToPath(import.meta.url));
const read = (path: string) => JSON.parse(readFileSync(join(here, path), "utf8"));
const vectors = read("../../../libs/workload/testdata/kinds.json") as {
  kinds: { kind: string; mode: string | null }[];
};
const kinds = vectors.kinds.map((k) => k.kind);
const schemas = read("../../openapi.json").components.schemas as Record<
  string,
  { properties: Record<string, { enum?: string[] }> }
>;

describe("libs/workload's workload kinds in the UI", () => {
  it("lists each kind once", () => {
    expect(new Set(kinds).size).toBe(kinds.length);
  });
  it("is generated from an OpenAPI offering exactly those kinds", () => {
    expect(schemas["WorkloadSpec-Input"]?.properties.kind?.enum).toEqual(kinds);
    expect(schemas["WorkloadSpec-Output"]?.properties.kind?.enum).toEqual(kinds);
    expect(schemas.SharedWorkload?.properties.kind?.enum).toEqual(kinds);
  });
  it("names every kind but block by itself, each differently", () => {
    const names = kinds
      .filter((k) => k !== "block")
      .map((kind) => describeWorkload({ kind: kind as WorkloadSpec["kind"], jobs: [] }));
    expect(names).not.toContain("—");
    expect(new Set(names).size).toBe(names.length);
  });
});
