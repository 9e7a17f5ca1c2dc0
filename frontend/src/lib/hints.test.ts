// Issue 25's hints and labels: the preset's name in lists, job names in brief, the queue-depth
// note fio prints, the meter command for the host's install, one latency unit per table.
import { describe, expect, it } from "vitest";
import { appendedNote } from "../components/FileWorkload/FileWorkloadPanel";
import { latencyUnitNs } from "./compare";
import { addMeterHint, meterSetCommand } from "./energy";
import { depthCapNote, isShortJob, namesInBrief, workloadLabel } from "./workload";

const jobs = Array.from({ length: 110 }, (_, i) => ({ name: `job-${i}` }));

describe("lists name the preset, never 110 jobs", () => {
  it("a preset run by its name, another workload in brief", () => {
    expect(workloadLabel({ preset: "kernel-help", workload: { jobs } as never })).toEqual({
      label: "kernel-help",
      preset: true,
    });
    const inline = workloadLabel({ preset: null, workload: { jobs } as never });
    expect(inline).toEqual({ label: "110 jobs: job-0, job-1, job-2, +107 more", preset: false });
    expect(namesInBrief(jobs.slice(0, 2))).toBe("job-0, job-1");
  });
});

describe("the short-run mark", () => {
  it("marks a job under 10 s, not a 10 s job timed at 9,999 ms", () => {
    expect(isShortJob({ runtime_ns: 3e9 })).toBe(true);
    expect(isShortJob({ runtime_ns: 9.999e9 })).toBe(false);
  });
});

describe("iodepth on a synchronous engine", () => {
  it("says the depth is capped at 1 on psync, nothing on io_uring or at depth 1", () => {
    expect(depthCapNote({ iodepth: 8, ioengine: "psync" })).toContain(
      "iodepth 8 with psync, a synchronous engine: the queue depth is capped at 1",
    );
    expect(depthCapNote({ iodepth: 8, ioengine: "io_uring" })).toBeNull();
    expect(depthCapNote({ iodepth: 1, ioengine: "psync" })).toBeNull();
  });
});

describe("the meter command for this install", () => {
  it("make up's agent: the checkout's venv and state directory; compose: its container", () => {
    expect(meterSetCommand("local-box")).toMatch(
      /^\.venv\/bin\/iowatt-agent meters set NAME SPEC --state-dir \.iowatt\/agent/,
    );
    expect(meterSetCommand("compose-box", "wall")).toBe(
      "docker compose exec agent iowatt-agent meters set wall SPEC",
    );
    expect(meterSetCommand("db-host-1")).toBe("sudo iowatt-agent meters set NAME SPEC");
    expect(addMeterHint("local-box")).toContain("--state-dir .iowatt/agent");
    expect(addMeterHint("local-box")).not.toContain("(iowatt-agent meters set");
  });
});

describe("one latency unit per table", () => {
  it("one slow run among 30 does not make the rest 0.001 ms", () => {
    const fast = Array.from({ length: 29 }, () => 1_000); // 1 µs
    expect(latencyUnitNs([[...fast, 5_000_000]])).toBe(1e3); // µs: 1 … 5,000 µs
    expect(latencyUnitNs([[2e6, 3e4]])).toBe(1e6); // 2 and 0.03 ms: the largest's unit
    expect(latencyUnitNs([[1_000, 5e9]])).toBe(1e6); // 1 µs beside 5 s: ms, 5,000,000 µs is too long
    expect(latencyUnitNs([[null, 0]])).toBe(0);
  });
});

describe("PostMark's appends", () => {
  it("says why a fixed-size file set appended nothing", () => {
    const p = { files_appended: 0, transactions: 50_000, size_low_bytes: 334848 };
    expect(appendedNote({ ...p, size_high_bytes: 334848 })).toContain("nothing to add");
    expect(appendedNote({ ...p, size_high_bytes: 400000 })).toBe("with transactions");
  });
});
