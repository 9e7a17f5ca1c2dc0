import { describe, expect, it } from "vitest";
import type { RunRead } from "../client/types";
import { CLONE_PARAM, cloneBody, cloneDraft, cloneHref, cloneName, cloneSource } from "./clone";

const run = {
  id: "0d5c4f1e-1111-4222-8333-444455556666",
  name: "nvme: 4k randread",
  agent_id: "agent-1",
  target_path: "/srv/bench",
  workload_id: "wl-1",
  environment_id: "env-1",
  meter: "",
  idle_s: 30,
  destructive: true,
  workload: {
    spec_version: 2,
    passes: 1,
    discard_passes: 0,
    jobs: [{ name: "rand4k", rw: "randread", bs_bytes: 4096, direct: true }],
  },
} as unknown as RunRead;

describe("clone and re-run", () => {
  it("puts the source run in the New run form's URL and reads it back", () => {
    const href = cloneHref(run.id);
    expect(href).toBe(`/runs/new?${CLONE_PARAM}=${run.id}`);
    expect(cloneSource(href.split("?")[1] ?? "")).toBe(run.id);
    expect(cloneSource(new URLSearchParams(""))).toBeNull();
    expect(cloneSource("from=%20")).toBeNull();
  });

  it("prefills everything the run ran with, the exact workload, and never the destructive confirmation", () => {
    const d = cloneDraft(run);
    expect(d.workload).toEqual({
      passes: 1,
      discard_passes: 0,
      jobs: [{ name: "rand4k", rw: "randread", bs_bytes: 4096, direct: true }],
    });
    expect("spec_version" in d.workload).toBe(false);
    expect(d.workload).not.toBe(run.workload); // a copy: editing the form leaves the run alone
    expect(d).toMatchObject({
      agent_id: "agent-1",
      target_path: "/srv/bench",
      source_workload_id: "wl-1",
      environment_id: "env-1",
      meter: "",
      idle_s: 30,
      name: "re-run of nvme: 4k randread",
      source_run_id: run.id,
    });
    const body = cloneBody(d);
    expect(body.destructive).toBe(false);
    expect(body.workload_id).toBeNull();
    expect(body.workload).toEqual(d.workload);
  });

  it("re-runs a multi-target run on the same targets, in order", () => {
    const multi = {
      ...run,
      targets: [
        { target_path: "/srv/bench" },
        { target_path: "/srv/b" },
        { target_path: "/srv/c" },
      ],
    } as unknown as RunRead;
    const d = cloneDraft(multi);
    expect(d.more_targets).toEqual(["/srv/b", "/srv/c"]);
    const body = cloneBody(d);
    expect(body.targets).toEqual([
      { target_path: "/srv/bench" },
      { target_path: "/srv/b" },
      { target_path: "/srv/c" },
    ]);
    expect(body.target_path).toBeUndefined();
    expect(cloneBody(cloneDraft(run)).targets).toBeUndefined();
  });

  it("does not stack re-run prefixes", () => {
    expect(cloneName("re-run of re-run of x")).toBe("re-run of x");
    expect(cloneName("y".repeat(300))).toHaveLength(200);
  });
});
