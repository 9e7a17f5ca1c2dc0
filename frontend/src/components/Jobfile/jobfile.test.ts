// fio job files in New run (ADR 0029): what the UI derives from the engine's parse, and the run
// the form queues from a pasted job file (its text sent byte for byte, never the parse).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { deriveRunPlan } from "../../routes/newRun/plan";
import { initialState, newRunReducer } from "../../routes/newRun/state";
import { policyAgent } from "../../test/fixtures";
import {
  effectiveOptions,
  groupsOf,
  type JobfileParse,
  jobfileWrites,
  optionsText,
  ownOptions,
  utf8Bytes,
} from "./jobfile";

const parse = (
  jobs: [string, number, Record<string, string>][],
  global: Record<string, string> = {},
): JobfileParse => ({
  global_options: global,
  jobs: jobs.map(([name, group, options]) => ({ name, group, options, line: null })),
  replaced: [],
});

describe("the engine's parse of a job file", () => {
  it("writes when any job's rw (or readwrite, or the global one) is not a read", () => {
    expect(jobfileWrites(parse([["a", 0, {}]]))).toBe(false); // fio's default: read
    expect(jobfileWrites(parse([["a", 0, { rw: "randread" }]]))).toBe(false);
    expect(jobfileWrites(parse([["a", 0, {}]], { rw: "randwrite" }))).toBe(true);
    expect(jobfileWrites(parse([["a", 0, { readwrite: "trim" }]]))).toBe(true);
    expect(jobfileWrites(parse([["a", 0, { rw: "read:8k" }]]))).toBe(false); // a skip pattern
    expect(
      jobfileWrites(
        parse([
          ["a", 0, { rw: "read" }],
          ["b", 1, { rw: "rw" }],
        ]),
      ),
    ).toBe(true);
    expect(jobfileWrites(null)).toBe(false);
  });

  it("reads every rw form as libs/policy does (its vectors: libs/policy/testdata/rw_modes.json)", () => {
    const file = join(
      dirname(fileURLToPath(import.meta.url)),
      ...["..", "..", "..", "..", "libs", "policy", "testdata", "rw_modes.json"],
    );
    const { cases } = JSON.parse(readFileSync(file, "utf8")) as {
      cases: { rw: string; writes: boolean }[];
    };
    expect(cases.length).toBeGreaterThan(10);
    for (const c of cases)
      expect([c.rw, jobfileWrites(parse([["a", 0, { rw: c.rw }]]))]).toEqual([c.rw, c.writes]);
  });

  it("reads a job's options as fio does: its own over the global ones", () => {
    const p = parse([["a", 0, { bs: "8k" }]], { bs: "4k", rw: "read" });
    const [first] = p.jobs;
    if (!first) throw new Error("no job");
    expect(effectiveOptions(p, first)).toEqual({ bs: "8k", rw: "read" });
    // the engine lists a job's options with [global]'s merged in: its own are what differ
    const merged = parse([["a", 0, { rw: "read", bs: "8k", size: "1m" }]], {
      rw: "read",
      bs: "4k",
    });
    const [job] = merged.jobs;
    if (!job) throw new Error("no job");
    expect(ownOptions(merged, job)).toEqual({ bs: "8k", size: "1m" });
  });

  it("groups the jobs that start together, in order", () => {
    const p = parse([
      ["a", 0, {}],
      ["b", 0, {}],
      ["c", 1, { stonewall: "" }],
    ]);
    expect(groupsOf(p).map((g) => [g.group, g.jobs.map((j) => j.name)])).toEqual([
      [0, ["a", "b"]],
      [1, ["c"]],
    ]);
  });

  it("shows options as written, a bare flag by its name", () => {
    expect(optionsText({ rw: "randread", time_based: "", bs: "4k" })).toBe(
      "rw=randread time_based bs=4k",
    );
  });

  it("counts the server's limit in UTF-8 bytes", () => {
    expect(utf8Bytes("é")).toBe(2);
  });
});

describe("New run with a fio job file", () => {
  const TEXT = "; mine\r\n[global]\r\nrw=randwrite\r\n\r\n[a]\r\nsize=1m\r\n";
  const ctx = { agents: [policyAgent()], workloads: [], teams: [] };
  const typed = newRunReducer(
    newRunReducer(initialState(new URLSearchParams()), { type: "mode", mode: "jobfile" }),
    { type: "jobfile", text: TEXT },
  );

  it("sends the text exactly as typed, as an inline jobfile workload", () => {
    const sub = deriveRunPlan(typed, ctx).submission;
    expect("body" in sub && sub.body.workload).toEqual({
      kind: "jobfile",
      jobs: [],
      passes: 1,
      discard_passes: 0,
      shortened_by: null,
      jobfile: { text: TEXT },
    });
    expect("body" in sub && [sub.body.workload_id, sub.body.shorten]).toEqual([null, null]);
  });

  it("asks for a job file before sending anything", () => {
    const empty = newRunReducer(typed, { type: "jobfile", text: "  \n" });
    const sub = deriveRunPlan(empty, ctx).submission;
    expect("errors" in sub && sub.errors.jobfile?.message).toMatch(/paste a fio job file/);
  });

  it("offers every target kind and refuses a writing job file on a read-only one", () => {
    const writes = parse([["a", 0, {}]], { rw: "randwrite" });
    const onFile = { ...typed, target: "/data/ref.bin" };
    const plan = deriveRunPlan(onFile, { ...ctx, jobfileParse: writes });
    expect(plan.directoriesOnly).toBe(false);
    expect(plan.target?.path).toBe("/data/ref.bin");
    expect(plan.writes).toBe(true);
    expect("errors" in plan.submission && plan.submission.errors.jobfile?.message).toBeTruthy();
    const reads = deriveRunPlan(onFile, {
      ...ctx,
      jobfileParse: parse([["a", 0, { rw: "read" }]]),
    });
    expect("body" in reads.submission).toBe(true);
  });

  it("waits for the typed confirmation before writing to a destructive device", () => {
    const dev = "/dev/disk/by-id/nvme-Samsung_SSD_990_PRO_S7DNNJ0X123456";
    const writes = parse([["a", 0, { rw: "write" }]]);
    const plan = deriveRunPlan({ ...typed, target: dev }, { ...ctx, jobfileParse: writes });
    expect(plan.submission).toMatchObject({ confirm: true, body: { destructive: false } });
  });
});
