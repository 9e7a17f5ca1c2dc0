// The New run form's group run (ADR 0038): other hosts at the same instant, what is sent to
// POST /run-groups, the checks beside each host's row and the server's 422s put back on them.
import { describe, expect, it } from "vitest";
import type { WorkloadRead } from "../../client/types";
import { POSTMARK_DEFAULTS } from "../../lib/fileWorkload";
import { policyAgent } from "../../test/fixtures";
import { newJob } from "./jobs";
import {
  deriveRunPlan,
  groupErrors,
  MAX_GROUP_MEMBERS,
  PREPARE_TIMEOUT_S,
  type RunPlanContext,
  START_TOLERANCE_NS,
} from "./plan";
import { initialState, type NewRunState, newRunReducer } from "./state";

const DIR = "/srv/bench";
const FILE = "/data/ref.bin";
const NVME = "/dev/disk/by-id/nvme-Samsung_SSD_990_PRO_S7DNNJ0X123456";
const READ = {
  id: "w-read",
  name: "w-read",
  description: "",
  builtin: true,
  spec: {
    kind: "block",
    jobs: [
      {
        name: "r",
        rw: "randread",
        bs_bytes: 4096,
        size_bytes: 1 << 24,
        iodepth: 1,
        numjobs: 1,
        runtime_s: 10,
      },
    ],
  },
} as never as WorkloadRead;
const PM = {
  id: "w-pm",
  name: "postmark",
  description: "",
  builtin: true,
  spec: { kind: "postmark", jobs: [], postmark: POSTMARK_DEFAULTS, vdbench: null, facts: null },
} as never as WorkloadRead;

const a1 = policyAgent({ id: "a1", name: "left" });
const a2 = policyAgent({ id: "a2", name: "right" });
const a3 = policyAgent({ id: "a3", name: "third" });
const ctx = (over: Partial<RunPlanContext> = {}): RunPlanContext => ({
  agents: [a1, a2, a3],
  workloads: [READ, PM],
  teams: [],
  ...over,
});
const state = (over: Partial<NewRunState> = {}): NewRunState => ({
  ...initialState(new URLSearchParams()),
  ...over,
});

describe("deriveRunPlan: a group run", () => {
  it("sends every host's member to POST /run-groups with the form's workload", () => {
    const s = state({
      target: DIR,
      hosts: [{ agentId: "a2", target: DIR }],
      sharedStore: " san:lun7 ",
      name: "two hosts",
    });
    const p = deriveRunPlan(s, ctx());
    expect(p.hosts.map((h) => [h.agentId, h.target?.path])).toEqual([["a2", DIR]]);
    const sub = p.submission;
    if (!("group" in sub)) throw new Error(`not a group: ${JSON.stringify(sub)}`);
    expect(sub.confirm).toBe(false);
    expect(sub.group).toMatchObject({
      members: [
        { agent_id: "a1", target_path: DIR, targets: null },
        { agent_id: "a2", target_path: DIR, targets: null },
      ],
      workload_id: "w-read",
      name: "two hosts",
      meter: "bmc",
      destructive: false,
      shared_store: "san:lun7",
      start_tolerance_ns: START_TOLERANCE_NS,
      prepare_timeout_s: PREPARE_TIMEOUT_S,
    });
    // no other host: the ordinary run
    expect("body" in deriveRunPlan(state({ target: DIR }), ctx()).submission).toBe(true);
  });

  it("offers agents not in the group yet, and none once each one is", () => {
    expect(deriveRunPlan(state(), ctx()).nextHost?.id).toBe("a2");
    const two = deriveRunPlan(state({ hosts: [{ agentId: "a2", target: "" }] }), ctx());
    expect(two.nextHost?.id).toBe("a3");
    // a row offers its own agent and those no other member has
    expect(two.hosts[0]?.agents.map((a) => a.id)).toEqual(["a2", "a3"]);
    // an empty target: the host's first
    expect(two.hosts[0]?.target?.path).toBe(DIR);
    const full = deriveRunPlan(
      state({
        hosts: [
          { agentId: "a2", target: "" },
          { agentId: "a3", target: "" },
        ],
      }),
      ctx(),
    );
    expect(full.nextHost).toBeUndefined();
    expect(MAX_GROUP_MEMBERS).toBe(16);
  });

  it("says what is wrong beside the host's row", () => {
    const errorsOf = (s: NewRunState) => {
      const sub = deriveRunPlan(s, ctx()).submission;
      return "errors" in sub ? sub.errors : null;
    };
    expect(errorsOf(state({ hosts: [{ agentId: "a1", target: "" }] }))).toEqual({
      "hosts.0.agent": { message: "already in this group run", source: "client" },
    });
    expect(errorsOf(state({ hosts: [{ agentId: "gone", target: "" }] }))).toEqual({
      "hosts.0.agent": { message: "choose an online agent", source: "client" },
    });
    const writing = state({
      mode: "custom",
      jobs: [{ ...newJob(), rw: "randwrite" }],
      target: DIR,
      hosts: [{ agentId: "a2", target: FILE }],
    });
    const e = errorsOf(writing);
    expect(Object.keys(e ?? {})).toEqual(["hosts.0.target"]);
    expect(e?.["hosts.0.target"]?.message).toContain("--allow-write");
  });

  it("asks for the typed key when another host's device is destructive", () => {
    const writing = state({
      mode: "custom",
      jobs: [{ ...newJob(), rw: "randwrite" }],
      target: DIR,
      hosts: [{ agentId: "a2", target: NVME }],
    });
    const sub = deriveRunPlan(writing, ctx()).submission;
    expect("group" in sub && sub.confirm).toBe(true);
  });

  it("runs a file set on one host, and says so", () => {
    const p = deriveRunPlan(
      state({ workloadId: "w-pm", hosts: [{ agentId: "a2", target: DIR }] }),
      ctx(),
    );
    expect(p.groupable).toBe(false);
    expect(p.hosts).toEqual([]);
    expect(p.groupNote).toContain("first host only");
    expect("body" in p.submission).toBe(true);
  });
});

describe("the reducer's hosts", () => {
  it("adds, changes and removes a host; another agent forgets the target", () => {
    let s = newRunReducer(state(), { type: "host.add", agentId: "a2" });
    s = newRunReducer(s, { type: "host.target", index: 0, path: FILE });
    expect(s.hosts).toEqual([{ agentId: "a2", target: FILE }]);
    s = newRunReducer(s, { type: "host.agent", index: 0, agentId: "a3" });
    expect(s.hosts).toEqual([{ agentId: "a3", target: "" }]);
    s = newRunReducer(s, { type: "sharedStore", text: "nfs:/export" });
    expect(newRunReducer(s, { type: "host.remove", index: 0 }).hosts).toEqual([]);
    expect(s.sharedStore).toBe("nfs:/export");
  });
});

describe("groupErrors: the server's 422s of a group run beside the right field", () => {
  it("puts the first member's on the form's own fields and the others' on their host's row", () => {
    const server = (message: string) => ({ message, source: "server" as const });
    expect(
      groupErrors({
        "members.0.target": server("not a target of this host"),
        "members.1.target": server("not a target of that host"),
        "members.2.agent": server("agent is offline"),
        "members.2.meter": server("no meter bmc on this host"),
        rw: server("x"),
      }),
    ).toEqual({
      target: server("not a target of this host"),
      "hosts.0.target": server("not a target of that host"),
      "hosts.1.agent": server("agent is offline"),
      "hosts.1.target": server("no meter bmc on this host"),
      rw: server("x"),
    });
  });
});
