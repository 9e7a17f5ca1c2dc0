// The New run form's reducer: the transitions whose effect is more than setting one field.
import { describe, expect, it } from "vitest";
import type { CloneDraft } from "../../lib/clone";
import { newJob } from "./jobs";
import { initialState, type NewRunState, newRunReducer } from "./state";

const empty = () => initialState(new URLSearchParams());
const run = (s: NewRunState, ...actions: Parameters<typeof newRunReducer>[1][]) =>
  actions.reduce(newRunReducer, s);

describe("newRunReducer", () => {
  it("starts at a built-in workload, ?workload= preselected, one default job", () => {
    const s = initialState(new URLSearchParams("workload=w-1"));
    expect(s).toMatchObject({ mode: "builtin", workloadId: "w-1", meter: undefined });
    expect(s.jobs).toEqual([newJob()]);
  });

  it("another agent forgets the target and meter picked on the last one", () => {
    const s = run(
      empty(),
      { type: "target", path: "/x" },
      { type: "meter", meter: "" },
      { type: "agent", id: "a2" },
    );
    expect(s).toMatchObject({ agentId: "a2", target: "", meter: undefined });
  });

  it("adds a copy of the last job unnamed, moves and removes jobs", () => {
    const named = { ...newJob(), name: "first", bs: "1m" };
    let s = run(empty(), { type: "job.update", index: 0, job: named }, { type: "job.add" });
    expect(s.jobs[1]).toEqual({ ...named, name: "" });
    s = run(s, { type: "job.update", index: 1, job: { ...named, name: "second" } });
    s = run(s, { type: "job.move", index: 1, delta: -1 });
    expect(s.jobs.map((j) => j.name)).toEqual(["second", "first"]);
    s = run(s, { type: "job.remove", index: 0 });
    expect(s.jobs.map((j) => j.name)).toEqual(["first"]);
  });

  it("prefills from a cloned run once; later edits are not overwritten by the same run", () => {
    const draft: CloneDraft = {
      agent_id: "a1",
      target_path: "/srv/bench",
      workload: {
        kind: "block",
        passes: 2,
        discard_passes: 1,
        shortened_by: 0.1,
        jobs: [
          {
            name: "j",
            rw: "randread",
            bs_bytes: 4096,
            size_bytes: 1 << 26,
            runtime_s: 3,
          } as never,
        ],
      } as never,
      source_workload_id: null,
      name: "copy of x",
      environment_id: null,
      meter: "",
      idle_s: 0,
      source_run_id: "r1",
    };
    let s = run(empty(), { type: "cloned", draft });
    expect(s).toMatchObject({
      mode: "custom",
      clonedFrom: "r1",
      agentId: "a1",
      target: "/srv/bench",
      name: "copy of x",
      meter: "",
      idle: "0",
      kept: { passes: 2, discard_passes: 1, shortened_by: 0.1 },
    });
    expect(s.jobs.map((j) => [j.name, j.bs, j.runtime])).toEqual([["j", "4k", "3"]]);
    s = run(s, { type: "name", name: "mine" }, { type: "cloned", draft });
    expect(s.name).toBe("mine");
  });

  it("submitting clears old errors; a refusal by the server closes the confirmation", () => {
    const body = { agent_id: "a1" } as never;
    let s = run(empty(), { type: "invalid", errors: { idle: { message: "x", source: "client" } } });
    expect(Object.keys(s.errors)).toEqual(["idle"]);
    s = run(s, { type: "submitted", confirming: body });
    expect(s).toMatchObject({ errors: {}, formError: null, confirming: body });
    s = run(s, { type: "rejected", errors: {}, formError: "conflict" });
    expect(s).toMatchObject({ confirming: null, formError: "conflict" });
    s = run(s, { type: "submitted", confirming: body }, { type: "confirm.cancel" });
    expect(s.confirming).toBeNull();
  });
});

describe("a multi-target run's other targets", () => {
  it("adds, changes and removes them in place, and forgets them on another agent", () => {
    let s = initialState(new URLSearchParams());
    s = newRunReducer(s, { type: "more.add", path: "/a" });
    s = newRunReducer(s, { type: "more.add", path: "/b" });
    s = newRunReducer(s, { type: "more.set", index: 0, path: "/c" });
    expect(s.more).toEqual(["/c", "/b"]);
    s = newRunReducer(s, { type: "more.remove", index: 0 });
    expect(s.more).toEqual(["/b"]);
    expect(newRunReducer(s, { type: "agent", id: "a2" }).more).toEqual([]);
  });
});
