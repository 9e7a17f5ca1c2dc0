import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { limits, POLICY } from "../test/fixtures";
import {
  commonMeters,
  confirmationPhrase,
  confirmsDevice,
  type HostPolicy,
  limitsText,
  MAX_TARGETS,
  needsDestructiveConfirm,
  type PolicyTarget,
  workloadWrites,
  writeRefusal,
} from "./policy";

const [dir, file, nvme, hdd] = POLICY.targets as PolicyTarget[];

describe("host policy rules", () => {
  it("knows which fio rw values write", () => {
    expect(workloadWrites([{ rw: "read" }, { rw: "randread" }])).toBe(false);
    for (const rw of ["write", "randwrite", "rw", "randrw"] as const)
      expect(workloadWrites([{ rw: "read" }, { rw }])).toBe(true);
    expect(workloadWrites(undefined)).toBe(false);
  });

  it("refuses writes where libs/policy would (file.read_only, device.not_destructive)", () => {
    expect(dir && writeRefusal(dir)).toBeNull();
    expect(nvme && writeRefusal(nvme)).toBeNull();
    expect(file && writeRefusal(file)).toContain("--allow-write");
    expect(hdd && writeRefusal(hdd)).toContain("--destructive");
    // A writable device the host did not mark destructive is still refused.
    expect(writeRefusal({ ...(nvme as PolicyTarget), destructive: false })).toContain(
      "--destructive",
    );
  });

  it("asks for confirmation only for writes on a destructive device", () => {
    expect(needsDestructiveConfirm(nvme, true)).toBe(true);
    expect(needsDestructiveConfirm(nvme, false)).toBe(false);
    expect(needsDestructiveConfirm(dir, true)).toBe(false);
    expect(needsDestructiveConfirm(undefined, true)).toBe(false);
  });

  it("confirms with the exact model or the serial's SHA-256, else the path", async () => {
    const t = nvme as PolicyTarget;
    expect(await confirmsDevice(t, "Samsung SSD 990 PRO 2TB")).toBe(true);
    expect(await confirmsDevice(t, "Samsung SSD 990 PRO 2TB ")).toBe(false);
    expect(await confirmsDevice(t, "S7DNNJ0X123456")).toBe(true);
    expect(await confirmsDevice(t, "")).toBe(false);
    expect(await confirmsDevice(t, t.path)).toBe(false);
    const bare = { ...t, model: null, serial_sha256: null };
    expect(confirmationPhrase(bare)).toBe(t.path);
    expect(await confirmsDevice(bare, t.path)).toBe(true);
  });

  it("offers a campaign only the meter names every host has", () => {
    const other: HostPolicy = { ...POLICY, meters: [{ name: "plug", driver: "x", tier: "plug" }] };
    expect(commonMeters([POLICY, other])).toEqual(["plug"]);
    expect(commonMeters([POLICY])).toEqual(["bmc", "plug"]);
    expect(commonMeters([POLICY, null])).toEqual([]);
  });

  it("shows the host's limits with units", () => {
    expect(
      limitsText({
        max_threads: 64,
        max_iodepth: null,
        max_bs_bytes: 64 * 1024 * 1024,
        max_bytes_written: null,
        max_runtime_s: 21600,
        max_memory_bytes: 8 * 1024 ** 3,
        max_files: "auto",
      }),
    ).toBe("threads ≤ 64 · block size ≤ 64 MiB · runtime ≤ 6 h · memory ≤ 8 GiB");
    expect(limitsText(limits({ max_files: 1000 }))).toBe("files ≤ 1000");
    expect(limitsText(null)).toBe("");
  });
});

describe("a run's limit of targets", () => {
  it("is the server's (libs/policy MAX_TARGETS, RunCreate.targets' maxItems in the OpenAPI)", () => {
    const here = dirname(fileURLToPath(import.meta.url));
    const api = JSON.parse(readFileSync(join(here, "../../openapi.json"), "utf8"));
    const targets = api.components.schemas.RunCreate.properties.targets.anyOf.find(
      (s: { type?: string }) => s.type === "array",
    );
    expect(MAX_TARGETS).toBe(targets.maxItems);
  });
});
