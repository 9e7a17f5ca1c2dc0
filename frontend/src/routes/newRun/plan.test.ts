// deriveRunPlan: what the New run form offers, estimates and sends, from its state and what the
// server lists; one case per branch (the component only renders this and dispatches).
import { describe, expect, it } from "vitest";
import type { RunCreate, WorkloadRead } from "../../client/types";
import { POSTMARK_DEFAULTS } from "../../lib/fileWorkload";
import { ptsSpec } from "../../lib/pts";
import { DEFAULT_IDLE_S, OVERHEAD_S_PER_JOB, OVERHEAD_S_PER_RUN } from "../../lib/workload";
import { policyAgent } from "../../test/fixtures";
import { newJob } from "./jobs";
import { deriveRunPlan, idleDefaultText, type RunPlanContext, targetErrors } from "./plan";
import { initialState, type NewRunState, newRunReducer } from "./state";

const DIR = "/srv/bench";
const FILE = "/data/ref.bin";
const NVME = "/dev/disk/by-id/nvme-Samsung_SSD_990_PRO_S7DNNJ0X123456";
const HDD = "/dev/disk/by-id/ata-ST4000NM000A_WS20ABCD";

const job = (rw: string, over: object = {}) => ({
  name: rw,
  rw,
  bs_bytes: 4096,
  size_bytes: 1 << 24,
  iodepth: 1,
  numjobs: 1,
  runtime_s: 10,
  ...over,
});
const preset = (id: string, jobs: object[]): WorkloadRead =>
  ({ id, name: id, description: "", builtin: true, spec: { kind: "block", jobs } }) as never;
const READ = preset("w-read", [job("randread")]);
const MIXED = preset("w-mixed", [job("read"), job("randrw")]);
const SIZED = preset("w-sized", [job("read", { runtime_s: null, io_size_bytes: 100 << 20 })]);
const PM = {
  id: "w-pm",
  name: "postmark",
  description: "",
  builtin: true,
  spec: { kind: "postmark", jobs: [], postmark: POSTMARK_DEFAULTS, vdbench: null, facts: null },
} as never as WorkloadRead;

const ctx = (over: Partial<RunPlanContext> = {}): RunPlanContext => ({
  agents: [policyAgent()],
  workloads: [READ, MIXED, SIZED],
  teams: [],
  ...over,
});
const state = (over: Partial<NewRunState> = {}): NewRunState => ({
  ...initialState(new URLSearchParams()),
  ...over,
});
const bodyOf = (s: NewRunState, c = ctx()): RunCreate => {
  const sub = deriveRunPlan(s, c).submission;
  if (!("body" in sub)) throw new Error(`not one run: ${JSON.stringify(sub)}`);
  return sub.body;
};
const errorsOf = (s: NewRunState, c = ctx()) => {
  const sub = deriveRunPlan(s, c).submission;
  return "errors" in sub ? sub.errors : null;
};

describe("deriveRunPlan: host and target", () => {
  it("offers online agents only and falls back to the first", () => {
    const off = policyAgent({ id: "a0", online: false });
    const p = deriveRunPlan(state(), ctx({ agents: [off, policyAgent()] }));
    expect(p.online.map((a) => a.id)).toEqual(["a1"]);
    expect(p.agentId).toBe("a1");
    expect(p.target?.path).toBe(DIR);
  });

  it("keeps the chosen agent and target", () => {
    const a2 = policyAgent({ id: "a2" });
    const p = deriveRunPlan(
      state({ agentId: "a2", target: FILE }),
      ctx({ agents: [policyAgent(), a2] }),
    );
    expect(p.agentId).toBe("a2");
    expect(p.target?.path).toBe(FILE);
  });

  it("with no agent online: no policy, no target, and the target's error", () => {
    const p = deriveRunPlan(state(), ctx({ agents: [policyAgent({ online: false })] }));
    expect(p.agentId).toBe("");
    expect(p.policy).toBeNull();
    expect(p.target).toBeUndefined();
    expect(p.meter).toBe("");
    expect(errorsOf(state(), ctx({ agents: [] }))).toEqual({
      target: { message: "the host allows no target yet (see above)", source: "client" },
    });
  });

  it("a file-set workload offers directories only, so a chosen file falls back to one", () => {
    const c = ctx({ workloads: [PM, READ] });
    const p = deriveRunPlan(state({ target: FILE }), c);
    expect(p.directoriesOnly).toBe(true);
    expect(p.target?.path).toBe(DIR);
    // custom jobs: any target the host allows
    const custom = deriveRunPlan(state({ target: FILE, mode: "custom" }), c);
    expect(custom.directoriesOnly).toBe(false);
    expect(custom.target?.path).toBe(FILE);
  });

  it("the host's default meter unless one (or none) was picked", () => {
    expect(deriveRunPlan(state(), ctx()).meter).toBe("bmc");
    expect(deriveRunPlan(state({ meter: "" }), ctx()).meter).toBe("");
    expect(bodyOf(state({ meter: "plug" })).meter).toBe("plug");
  });

  it("calls the user a viewer only when no team lets them queue", () => {
    const viewer = { id: "t1", name: "T", role: "viewer" as const };
    const member = { id: "t2", name: "U", role: "member" as const };
    expect(deriveRunPlan(state(), ctx()).viewerOnly).toBe(false);
    expect(deriveRunPlan(state(), ctx({ teams: [viewer] })).viewerOnly).toBe(true);
    expect(deriveRunPlan(state(), ctx({ teams: [viewer, member] })).viewerOnly).toBe(false);
  });
});

describe("deriveRunPlan: writes the host refuses", () => {
  it("no refusal on a writable directory", () => {
    const p = deriveRunPlan(state({ workloadId: "w-mixed" }), ctx());
    expect(p.refusal).toBeNull();
    expect(p.refused.size).toBe(0);
    expect(p.workloadId).toBe("w-mixed");
    expect(p.writes).toBe(true);
  });

  it("a read-only file refuses writing presets: the chosen one falls back to a reading one", () => {
    const p = deriveRunPlan(state({ target: FILE, workloadId: "w-mixed" }), ctx());
    expect(p.refusal).toContain("--allow-write");
    expect([...p.refused]).toEqual(["w-mixed"]);
    expect(p.workloadId).toBe("w-read");
    expect(p.writes).toBe(false);
    expect(bodyOf(state({ target: FILE, workloadId: "w-mixed" })).workload_id).toBe("w-read");
  });

  it("when every preset writes, none is chosen and the workload's refusal is the error", () => {
    const s = state({ target: FILE, workloadId: "w-mixed" });
    const c = ctx({ workloads: [MIXED, PM] });
    const p = deriveRunPlan(s, c);
    expect(p.workloadId).toBe("");
    expect(p.workload).toBeUndefined();
    expect(p.writes).toBe(false);
    // nothing writes, so the run goes with no workload and the server names the field
    expect(bodyOf(s, c).workload_id).toBeNull();
  });

  it("a writing custom job on a refusing target: the error at that job's rw", () => {
    const jobs = [newJob(), { ...newJob(), rw: "randwrite" as const }];
    const errors = errorsOf(state({ mode: "custom", target: HDD, jobs }));
    expect(Object.keys(errors ?? {})).toEqual(["jobs.1.rw"]);
    expect(errors?.["jobs.1.rw"]?.message).toContain("--destructive");
  });

  it("a write to a destructive device waits for the typed confirmation; a read does not", () => {
    const write = deriveRunPlan(state({ target: NVME, workloadId: "w-mixed" }), ctx());
    expect(write.submission).toMatchObject({ confirm: true, body: { destructive: false } });
    const read = deriveRunPlan(state({ target: NVME, workloadId: "w-read" }), ctx());
    expect(read.submission).toMatchObject({ confirm: false });
  });
});

describe("deriveRunPlan: presets, shortening and scale", () => {
  it("a preset at full length: its jobs' runtimes, the default idle, the overheads", () => {
    const p = deriveRunPlan(state(), ctx());
    expect(p.workloadId).toBe("w-read");
    expect(p.estimate).toEqual({
      loadS: 10,
      idleS: 2 * DEFAULT_IDLE_S,
      overheadS: OVERHEAD_S_PER_RUN + OVERHEAD_S_PER_JOB,
      totalS: 10 + 2 * DEFAULT_IDLE_S + OVERHEAD_S_PER_RUN + OVERHEAD_S_PER_JOB,
      assumedRate: 0,
      metered: true,
      idleFrom: "default",
    });
    // no meter ("none"): the agent takes no idle baseline, the estimate counts none
    expect(deriveRunPlan(state({ meter: "" }), ctx()).estimate).toMatchObject({
      idleS: 0,
      metered: false,
    });
    expect(bodyOf(state())).toEqual({
      agent_id: "a1",
      target_path: DIR,
      name: null,
      workload: null,
      workload_id: "w-read",
      environment_id: null,
      meter: "bmc",
      idle_s: null,
      destructive: false,
      shorten: null,
    });
  });

  it("shortened: runtimes (at least 1 s) and size-bound I/O scaled in the estimate, the factor sent", () => {
    const p = deriveRunPlan(state({ shorten: "0.25" }), ctx());
    expect(p.shortenFactor).toBe(0.25);
    expect(p.estimate?.loadS).toBe(2.5);
    expect(bodyOf(state({ shorten: "0.25" })).shorten).toBe(0.25);
    const tiny = deriveRunPlan(state({ shorten: "0.01" }), ctx());
    expect(tiny.estimate?.loadS).toBe(1);
    // 100 MiB at the assumed 100 MiB/s: 1 s; ×0.1 → 0.1 s, and it says it assumed a rate
    const sized = deriveRunPlan(state({ workloadId: "w-sized", shorten: "0.1" }), ctx());
    expect(sized.estimate?.loadS).toBeCloseTo(0.1);
    expect(sized.estimate?.assumedRate).toBe(1);
  });

  it("a file-set workload: scaled (not shortened), no estimate, the scale sent only when changed", () => {
    const c = ctx({ workloads: [PM] });
    const p = deriveRunPlan(state({ shorten: "0.5" }), c);
    expect(p.scaled).toBe(true);
    expect(p.scaleText).toBe("1");
    expect(p.scaleFactor).toBeUndefined();
    expect(p.estimate).toBeUndefined();
    const body = bodyOf(state({ shorten: "0.5" }), c);
    expect(body.shorten).toBeNull();
    expect("scale" in body).toBe(false);
    expect(bodyOf(state({ scale: { workload: "w-pm", text: "2" } }), c).scale).toBe(2);
  });

  it("a scale typed for another workload is not this one's", () => {
    const p = deriveRunPlan(
      state({ scale: { workload: "w-other", text: "5" } }),
      ctx({ workloads: [PM] }),
    );
    expect(p.scaleText).toBe("1");
  });

  it("a scale that is not a number: the scale's error", () => {
    const c = ctx({ workloads: [PM] });
    expect(errorsOf(state({ scale: { workload: "w-pm", text: "big" } }), c)).toEqual({
      scale: { message: "enter a number above 0, at most 1000", source: "client" },
    });
  });
});

describe("deriveRunPlan: idle, name, environment", () => {
  it("counts the meter's idle baseline as its agent reports it; the run's own idle setting first", () => {
    const meters = [
      { name: "bmc", driver: "ipmi", tier: "bmc", idle_s: 12 },
      { name: "plug", driver: "shelly", tier: "plug", idle_s: 45 },
    ];
    const agent = policyAgent();
    const c = ctx({
      agents: [{ ...agent, policy: agent.policy ? { ...agent.policy, meters } : null }],
    });
    // the host's default meter (bmc): its 12 s before and after
    expect(deriveRunPlan(state(), c).estimate).toMatchObject({ idleS: 24, idleFrom: "meter" });
    expect(deriveRunPlan(state({ meter: "plug" }), c).estimate).toMatchObject({
      idleS: 90,
      idleFrom: "meter",
    });
    expect(deriveRunPlan(state({ idle: "5" }), c).estimate).toMatchObject({
      idleS: 10,
      idleFrom: "run",
    });
    expect(deriveRunPlan(state({ meter: "" }), c).estimate).toMatchObject({ idleS: 0 });
    expect(idleDefaultText(c.agents[0]?.policy ?? null, "plug")).toBe(
      "the meter's idle setting on its host (45 s)",
    );
    expect(idleDefaultText(policyAgent().policy, null)).toBe("the agent's default (30 s)");
    // an agent that does not report it: the default, and the line says so
    expect(deriveRunPlan(state(), ctx()).estimate).toMatchObject({
      idleS: 2 * DEFAULT_IDLE_S,
      idleFrom: "default",
    });
  });

  it("idle seconds go into the estimate and the body; empty is the agent's default", () => {
    const p = deriveRunPlan(state({ idle: "5" }), ctx());
    expect(p.estimate?.idleS).toBe(10);
    const body = bodyOf(state({ idle: "0", name: "  fast  ", environmentId: "e1" }));
    expect(body).toMatchObject({ idle_s: 0, name: "fast", environment_id: "e1" });
  });

  it("idle that is not seconds: the idle error, and the estimate uses the default", () => {
    for (const idle of ["-1", "soon"]) {
      expect(errorsOf(state({ idle }))).toEqual({
        idle: { message: "enter seconds (0 or more)", source: "client" },
      });
      expect(deriveRunPlan(state({ idle }), ctx()).estimate?.idleS).toBe(2 * DEFAULT_IDLE_S);
    }
  });
});

describe("deriveRunPlan: custom jobs", () => {
  it("builds the jobs into a block workload, kept passes and shortening sent back", () => {
    const s = state({
      mode: "custom",
      jobs: [newJob(), { ...newJob(), rw: "write", bs: "1m" }],
      kept: { passes: 3, discard_passes: 1, shortened_by: 0.5 },
    });
    const p = deriveRunPlan(s, ctx());
    expect(p.estimate?.loadS).toBe(20); // two jobs of the default 10 s (MIN_RUNTIME_S)
    expect(p.writes).toBe(true);
    const body = bodyOf(s);
    expect(body.workload_id).toBeNull();
    expect(body.shorten).toBeNull();
    expect(body.workload).toMatchObject({
      kind: "block",
      passes: 3,
      discard_passes: 1,
      shortened_by: 0.5,
      jobs: [
        { name: "randread-4k", bs_bytes: 4096 },
        { name: "write-1m", rw: "write", bs_bytes: 1 << 20 },
      ],
    });
  });

  it("without a kept workload: one pass, none discarded, not shortened", () => {
    expect(bodyOf(state({ mode: "custom" })).workload).toMatchObject({
      passes: 1,
      discard_passes: 0,
      shortened_by: null,
    });
  });

  it("a job's field error: no estimate and that field's error, nothing sent", () => {
    const s = state({ mode: "custom", jobs: [newJob(), { ...newJob(), bs: "lots" }] });
    const p = deriveRunPlan(s, ctx());
    expect(p.estimate).toBeUndefined();
    expect(Object.keys(errorsOf(s) ?? {})).toEqual(["jobs.1.bs"]);
  });
});

describe("deriveRunPlan: several targets at once", () => {
  const multi = policyAgent({
    inventory: {
      hostname: "box",
      os: null,
      cpu: null,
      mem_bytes: null,
      virtualization: null,
      block_devices: [],
      mounts: [],
      topology: null,
      policy: null,
      capabilities: {
        workload_kinds: [],
        tpch_dbms: [],
        multi_target: true,
        protocol: null,
        engine_version: null,
        engine_features: null,
      },
    },
  });
  const mctx = (over: Partial<RunPlanContext> = {}) => ctx({ agents: [multi], ...over });

  it("sends targets, the first target first, when the agent runs several", () => {
    const s = state({ target: DIR, more: [NVME] });
    const p = deriveRunPlan(s, mctx());
    expect(p.multiTarget).toBe(true);
    expect(p.chosen.map((t) => t.path)).toEqual([DIR, NVME]);
    const body = bodyOf(s, mctx());
    expect(body.targets).toEqual([{ target_path: DIR }, { target_path: NVME }]);
    expect(body.target_path).toBeUndefined();
    // one target: target_path as before, no list
    expect(bodyOf(state({ target: DIR }), mctx()).target_path).toBe(DIR);
    expect(bodyOf(state({ target: DIR }), mctx()).targets).toBeUndefined();
  });

  it("offers the next target not chosen yet, none once every one is", () => {
    expect(deriveRunPlan(state({ target: DIR }), mctx()).nextTarget?.path).toBe(FILE);
    expect(deriveRunPlan(state({ target: FILE, more: [DIR] }), mctx()).nextTarget?.path).toBe(NVME);
    const all = deriveRunPlan(state({ target: DIR, more: [FILE, NVME, HDD] }), mctx());
    expect(all.nextTarget).toBeUndefined();
  });

  it("stops offering at the run's limit of targets (MAX_TARGETS)", async () => {
    const { MAX_TARGETS } = await import("../../lib/policy");
    const paths = Array.from({ length: MAX_TARGETS + 1 }, (_, i) => `/srv/t${i}`);
    const wide = policyAgent({
      ...multi,
      policy: {
        ...multi.policy,
        targets: paths.map((path) => ({
          path,
          kind: "directory",
          writable: true,
          destructive: false,
        })),
      } as never,
    });
    const c = ctx({ agents: [wide] });
    const below = deriveRunPlan(
      state({ target: paths[0], more: paths.slice(1, MAX_TARGETS - 1) }),
      c,
    );
    expect(below.chosen).toHaveLength(MAX_TARGETS - 1);
    expect(below.nextTarget?.path).toBe(paths[MAX_TARGETS - 1]);
    const at = deriveRunPlan(state({ target: paths[0], more: paths.slice(1, MAX_TARGETS) }), c);
    expect(at.chosen).toHaveLength(MAX_TARGETS);
    expect(at.nextTarget).toBeUndefined();
  });

  it("refuses a target chosen twice beside its own row", () => {
    expect(errorsOf(state({ target: DIR, more: [NVME, DIR] }), mctx())).toEqual({
      "targets.2.target": { message: "already chosen above", source: "client" },
    });
  });

  it("says which target refuses a write, beside that target", () => {
    const s = state({ mode: "custom", jobs: [newJob()], target: DIR, more: [FILE] });
    const writing = { ...s, jobs: [{ ...s.jobs[0], rw: "randwrite" }] } as NewRunState;
    const e = errorsOf(writing, mctx());
    expect(Object.keys(e ?? {})).toEqual(["targets.1.target"]);
    expect(e?.["targets.1.target"]?.message).toContain("--allow-write");
  });

  it("asks for the typed key when any chosen device is destructive", () => {
    const s = state({ mode: "custom", jobs: [newJob()], target: DIR, more: [NVME] });
    const writing = { ...s, jobs: [{ ...s.jobs[0], rw: "randwrite" }] } as NewRunState;
    const sub = deriveRunPlan(writing, mctx()).submission;
    expect("confirm" in sub && sub.confirm).toBe(true);
  });

  it("runs one target on an older agent or a workload that is not block, and says why", () => {
    const old = deriveRunPlan(state({ target: DIR, more: [NVME] }), ctx());
    expect(old.multiTarget).toBe(false);
    expect(old.chosen.map((t) => t.path)).toEqual([DIR]);
    expect(old.multiNote).toContain("upgrade");
    expect(bodyOf(state({ target: DIR, more: [NVME] }), ctx()).target_path).toBe(DIR);
    const pm = deriveRunPlan(
      state({ target: DIR, more: [NVME], workloadId: "w-pm" }),
      mctx({ workloads: [PM, READ] }),
    );
    expect(pm.multiTarget).toBe(false);
    expect(pm.multiNote).toContain("block workloads only");
    const jf = deriveRunPlan(state({ mode: "jobfile", target: DIR, more: [NVME] }), mctx());
    expect(jf.multiTarget).toBe(false);
    // nothing said while no other target is chosen
    expect(deriveRunPlan(state({ target: DIR }), ctx()).multiNote).toBeNull();
  });
});

describe("targetErrors: the server's 422s of a multi-target run on the right field", () => {
  it("puts the first target's beside Target and keeps the others' on their rows", () => {
    const server = (message: string) => ({ message, source: "server" as const });
    expect(
      targetErrors({
        "targets.0.target": server("not a target of this host"),
        "targets.2.target": server("the same target as targets.0"),
      }),
    ).toEqual({
      target: server("not a target of this host"),
      "targets.2.target": server("the same target as targets.0"),
    });
    expect(
      targetErrors({ target: server("a"), "targets.0.target": server("b") }).target?.message,
    ).toBe("a; b");
    expect(targetErrors({ rw: server("x") })).toEqual({ rw: server("x") });
  });
});

describe("deriveRunPlan: a SNIA PTS run", () => {
  const pts = (over: Partial<NewRunState["pts"]> = {}, rest: Partial<NewRunState> = {}) =>
    state({ mode: "pts", pts: { ...initialState(new URLSearchParams()).pts, ...over }, ...rest });

  it("offers raw devices only and sends the specification's run with the typed key pending", () => {
    const plan = deriveRunPlan(pts(), ctx());
    expect(plan.devicesOnly).toBe(true);
    expect(plan.target?.path).toBe(NVME); // the first device, not the directory listed first
    expect(plan.writes).toBe(true);
    expect(plan.groupable).toBe(false);
    expect(plan.estimate).toBeUndefined();
    expect(plan.pts?.compliant).toBe(true);
    expect(plan.pts?.regionBytes).toBe(2_000_398_843_904);
    const sub = plan.submission;
    if (!("body" in sub)) throw new Error(JSON.stringify(sub));
    expect(sub.confirm).toBe(true);
    expect(sub.body.destructive).toBe(false);
    expect(sub.body.scale).toBeNull();
    expect(sub.body.workload_id).toBeNull();
    expect(sub.body.workload?.kind).toBe("pts");
    expect(sub.body.workload?.pts).toMatchObject({
      test: "iops",
      purge: "auto",
      block_sizes: null,
    });
  });

  it("a short trial sends the run's scale and says it is not PTS-compliant", () => {
    const plan = deriveRunPlan(
      pts({ test: "throughput", throughputBs: 131072, scale: "0.01" }),
      ctx(),
    );
    expect(plan.pts?.compliant).toBe(false);
    expect(plan.pts?.deviations).toEqual([
      "rounds of 1 s per element, not 60 s",
      "0.01 of the capacity tested, not all of it",
    ]);
    const body = bodyOf(pts({ test: "throughput", throughputBs: 131072, scale: "0.01" }));
    expect(body.scale).toBe(0.01);
    expect(body.workload?.pts?.block_sizes).toEqual([131072]);
  });

  it("says when one round is longer than the host's runtime limit of an engine run", () => {
    expect(deriveRunPlan(pts(), ctx()).ptsLimit).toBeNull(); // no limit
    const base = policyAgent();
    const limited = (s: number) => ({
      ...base,
      policy: base.policy && {
        ...base.policy,
        limits: { ...base.policy.limits, max_runtime_s: s },
      },
    });
    // the specification's IOPS round: 56 one-minute elements (3,360 s)
    expect(deriveRunPlan(pts(), ctx({ agents: [limited(3600)] })).ptsLimit).toBeNull();
    const over = deriveRunPlan(pts(), ctx({ agents: [limited(3000)] })).ptsLimit;
    expect(over).toContain("one round takes 3360 s");
    expect(over).toContain("--max-runtime 3360");
    expect(
      deriveRunPlan(pts({ scale: "0.1" }), ctx({ agents: [limited(3000)] })).ptsLimit,
    ).toBeNull();
    // Host Idle Recovery: its one-minute rounds fit, its 30-minute returns to baseline do not
    const hir = deriveRunPlan(pts({ test: "hir" }), ctx({ agents: [limited(1000)] })).ptsLimit;
    expect(hir).toContain("one return to baseline takes 1800 s");
    expect(hir).toContain("--max-runtime 1800");
  });

  it("refuses a device the host did not mark destructive, and a share under 1 MiB, at their fields", () => {
    expect(errorsOf(pts({}, { target: HDD }))?.target?.message).toContain("--destructive");
    const tiny = policyAgent();
    const small = {
      ...tiny,
      policy: tiny.policy && {
        ...tiny.policy,
        targets: tiny.policy.targets.map((t) =>
          t.path === NVME ? { ...t, size_bytes: 64 << 20 } : t,
        ),
      },
    };
    expect(errorsOf(pts({ scale: "0.01" }), ctx({ agents: [small] }))?.scale?.message).toContain(
      "under 1 MiB",
    );
    // a host without a device: said at the target
    const none = {
      ...tiny,
      policy: tiny.policy && {
        ...tiny.policy,
        targets: tiny.policy.targets.filter((t) => t.kind !== "device"),
      },
    };
    expect(errorsOf(pts(), ctx({ agents: [none] }))?.target?.message).toContain("raw device");
  });
});

describe("deriveRunPlan: a cloned SNIA PTS run", () => {
  it("sends the parameters the run had, unscaled again, until a choice changes them", () => {
    const ran = {
      ...ptsSpec("iops", "blkdiscard"),
      round_s: 1,
      capacity_fraction: 0.001,
      max_rounds: 5,
      block_sizes: [4096],
      mixes: [0],
    };
    const s = newRunReducer(state(), {
      type: "cloned",
      draft: {
        agent_id: "a1",
        target_path: NVME,
        workload: {
          kind: "pts",
          jobs: [],
          passes: 1,
          discard_passes: 0,
          shortened_by: null,
          pts: ran,
        },
        source_workload_id: null,
        name: "re-run of trial",
        environment_id: null,
        meter: null,
        idle_s: null,
        source_run_id: "r1",
      },
    });
    expect(s.mode).toBe("pts");
    expect([s.pts.test, s.pts.purge]).toEqual(["iops", "blkdiscard"]);
    const body = bodyOf(s);
    expect(body.workload?.pts).toEqual(ran);
    expect(body.scale).toBeNull();
    expect(deriveRunPlan(s, ctx()).pts?.deviations).toContain("at most 5 rounds, not 25");
    // a choice made in the form: the specification's run again, at the chosen scale
    const changed = newRunReducer(s, { type: "pts", pts: { scale: "0.1" } });
    expect(changed.pts.kept).toBeNull();
    expect(bodyOf(changed).workload?.pts?.max_rounds).toBe(25);
    expect(bodyOf(changed).scale).toBe(0.1);
  });
});
