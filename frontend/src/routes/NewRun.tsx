import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router-dom";
import type { JobSpec, RunCreate } from "../client/types";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../components/Field";
import { DestructiveConfirm } from "../components/Policy/DestructiveConfirm";
import { type MeterChoice, MeterSelect } from "../components/Policy/MeterSelect";
import { LimitsNote, TargetSelect } from "../components/Policy/TargetSelect";
import { formatSize, parseSize, sig3 } from "../lib/format";
import {
  needsDestructiveConfirm,
  policyOf,
  rwWrites,
  workloadWrites,
  writeRefusal,
} from "../lib/policy";
import { describeJob } from "../lib/workload";
import { agentsQuery } from "../queries/agents";
import { environmentsQuery } from "../queries/environments";
import { keys } from "../queries/keys";
import { createRun } from "../queries/runs";
import { workloadsQuery } from "../queries/workloads";

const RW = ["read", "write", "randread", "randwrite", "rw", "randrw"] as const;

/** Server field names (last path segment) → the form input showing their errors. */
const FIELD_ALIASES: Record<string, string> = {
  agent_id: "agent",
  target_path: "target",
  destructive: "target",
  workload_id: "workload",
  name: "name",
  rw: "rw",
  bs_bytes: "bs",
  size_bytes: "size",
  runtime_s: "runtime",
  iodepth: "iodepth",
  numjobs: "numjobs",
  direct: "direct",
  io_size_bytes: "iosize",
  end_fsync: "endfsync",
  rwmixread: "rw",
  meter: "meter",
  idle_s: "idle",
  environment_id: "environment",
};

interface CustomJob {
  rw: JobSpec["rw"];
  bs: string;
  size: string;
  runtime: string;
  iodepth: string;
  numjobs: string;
  direct: boolean;
  /** bytes of I/O inside the region; empty: all of `size` */
  ioSize: string;
  endFsync: boolean;
}

/** The custom job's checkboxes; the rest are text inputs. */
type Flag = "direct" | "endFsync";
type TextField = Exclude<keyof CustomJob, Flag>;

/** Builds the single custom job, or the client-side errors that prevent sending it. */
function buildJob(c: CustomJob): { job?: JobSpec; errors: Errors } {
  const errors: Errors = {};
  // fio's size syntax, as the engine and the agent read it (lib/format.ts parseSize)
  const bs = parseSize(c.bs.trim());
  const size = parseSize(c.size.trim());
  const runtime = c.runtime.trim() === "" ? null : Number(c.runtime);
  const ioSize = c.ioSize.trim() === "" ? null : parseSize(c.ioSize.trim());
  if (bs === null) errors.bs = { message: "enter a block size such as 4k or 1m", source: "client" };
  if (size === null) errors.size = { message: "enter a size such as 64m or 1g", source: "client" };
  if (c.ioSize.trim() !== "" && ioSize === null)
    errors.iosize = { message: "enter a size such as 64m, or leave empty", source: "client" };
  if (runtime !== null && !Number.isFinite(runtime))
    errors.runtime = { message: "enter seconds", source: "client" };
  if (bs === null || size === null || Object.keys(errors).length > 0) return { errors };
  return {
    errors,
    job: {
      name: `${c.rw}-${formatSize(bs)}`,
      rw: c.rw,
      bs_bytes: bs,
      size_bytes: size,
      offset_bytes: 0,
      runtime_s: runtime,
      time_based: runtime !== null,
      ramp_time_s: 0,
      rwmixread: 50,
      numjobs: Number(c.numjobs),
      iodepth: Number(c.iodepth),
      ioengine: "psync",
      direct: c.direct,
      invalidate: true,
      readahead: "default",
      end_fsync: c.endFsync,
      io_size_bytes: ioSize,
    },
  };
}

export function NewRun() {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const agents = useQuery(agentsQuery());
  const workloads = useQuery(workloadsQuery());
  const online = agents.data?.items.filter((a) => a.online) ?? [];

  const [agentId, setAgentId] = useState("");
  const [target, setTarget] = useState("");
  const [name, setName] = useState("");
  const [mode, setMode] = useState<"builtin" | "custom">("builtin");
  const [workloadId, setWorkloadId] = useState("");
  const [custom, setCustom] = useState<CustomJob>({
    rw: "randread",
    bs: "4k",
    size: "64m",
    runtime: "5",
    iodepth: "1",
    numjobs: "1",
    direct: false,
    ioSize: "",
    endFsync: false,
  });
  const environments = useQuery(environmentsQuery());
  const [environmentId, setEnvironmentId] = useState("");
  /** undefined: the host's default meter (or none when it has none) */
  const [meter, setMeter] = useState<MeterChoice | undefined>(undefined);
  const [idle, setIdle] = useState("");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  /** The run waiting for the typed confirmation of a destructive write. */
  const [confirming, setConfirming] = useState<RunCreate | null>(null);

  const effectiveAgent = agentId || online[0]?.id || "";
  const policy = policyOf(online.find((a) => a.id === effectiveAgent));
  const targets = policy?.targets ?? [];
  const chosenTarget = targets.find((t) => t.path === target) ?? targets[0];
  // Why the host refuses writes on the chosen target: writing workloads are disabled.
  const refusal = chosenTarget ? writeRefusal(chosenTarget) : null;
  const refused = (jobs: JobSpec[]) => refusal !== null && workloadWrites(jobs);
  const items = workloads.data?.items ?? [];
  const picked = items.find((w) => w.id === workloadId);
  const effectiveWorkload =
    (picked && !refused(picked.spec.jobs)
      ? picked.id
      : items.find((w) => !refused(w.spec.jobs))?.id) ?? "";
  const chosenWorkload = items.find((w) => w.id === effectiveWorkload);
  const effectiveMeter: MeterChoice = meter === undefined ? (policy?.default_meter ?? "") : meter;
  const writes =
    mode === "custom" ? rwWrites(custom.rw) : workloadWrites(chosenWorkload?.spec.jobs);

  const create = useMutation({
    mutationFn: (body: RunCreate) => createRun(body),
    onSuccess: (run) => {
      qc.invalidateQueries({ queryKey: keys.runs.lists() });
      navigate(`/runs/${run.id}`);
    },
    onError: (err) => {
      setConfirming(null);
      const r = formErrorsFrom(err, FIELD_ALIASES);
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });

  function onSubmit(e: FormEvent) {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    if (!chosenTarget) {
      setErrors({
        target: { message: "the host allows no target yet (see above)", source: "client" },
      });
      return;
    }
    if (refusal && writes) {
      const key = mode === "custom" ? "rw" : "workload";
      setErrors({ [key]: { message: refusal, source: "client" } });
      return;
    }
    const idleS = idle.trim() === "" ? null : Number(idle);
    if (idleS !== null && !(Number.isFinite(idleS) && idleS >= 0)) {
      setErrors({ idle: { message: "enter seconds (0 or more)", source: "client" } });
      return;
    }
    let workload: RunCreate["workload"] = null;
    if (mode === "custom") {
      const built = buildJob(custom);
      if (!built.job) {
        setErrors(built.errors);
        return;
      }
      workload = { jobs: [built.job], passes: 1, discard_passes: 0 };
    }
    const body: RunCreate = {
      agent_id: effectiveAgent,
      target_path: chosenTarget.path,
      name: name.trim() || null,
      workload,
      workload_id: mode === "builtin" ? effectiveWorkload || null : null,
      environment_id: environmentId || null,
      meter: effectiveMeter,
      idle_s: idleS,
      destructive: false,
    };
    // The second key: only the typed confirmation sets destructive (see DestructiveConfirm).
    if (needsDestructiveConfirm(chosenTarget, writes)) setConfirming(body);
    else create.mutate(body);
  }

  const set = (k: TextField) => (e: { target: { value: string } }) =>
    setCustom((c) => ({ ...c, [k]: e.target.value }));
  const toggle = (k: Flag) => (e: { target: { checked: boolean } }) =>
    setCustom((c) => ({ ...c, [k]: e.target.checked }));

  return (
    <section>
      <h1>New run</h1>
      <form className="card form" onSubmit={onSubmit} data-testid="new-run-form" noValidate>
        <div className="form-grid">
          <Field
            label="Agent"
            name="agent"
            errors={errors}
            hint={online.length === 0 ? "no agent is online" : undefined}
          >
            <select
              id="f-agent"
              name="agent"
              value={effectiveAgent}
              onChange={(e) => {
                setAgentId(e.target.value);
                setTarget("");
                setMeter(undefined);
              }}
            >
              {online.length === 0 && <option value="">—</option>}
              {online.map((a) => (
                <option key={a.id} value={a.id}>
                  {a.name} ({a.hostname})
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Target"
            name="target"
            className="span-2"
            errors={errors}
            hint={
              targets.length > 0
                ? "what the host allows (iowatt-agent targets list on the host)"
                : undefined
            }
          >
            {online.length === 0 ? (
              <select id="f-target" name="target" disabled>
                <option>— choose an online agent first —</option>
              </select>
            ) : (
              <TargetSelect
                id="f-target"
                policy={policy}
                value={chosenTarget?.path ?? ""}
                onChange={setTarget}
              />
            )}
            <LimitsNote policy={policy} />
          </Field>
          <Field label="Name (optional)" name="name" errors={errors}>
            <input
              id="f-name"
              name="name"
              value={name}
              onChange={(e) => setName(e.target.value)}
              placeholder="nvme0 random read"
            />
          </Field>
          <Field
            label="Environment"
            name="environment"
            errors={errors}
            hint="grid intensity and PUE for the run's CO2"
          >
            <select
              id="f-environment"
              name="environment"
              value={environmentId}
              onChange={(e) => setEnvironmentId(e.target.value)}
              data-testid="environment-select"
            >
              <option value="">— none —</option>
              {environments.data?.items.map((env) => (
                <option key={env.id} value={env.id}>
                  {env.name} ({env.kind}, {sig3(env.effective_g_per_kwh)} gCO2e/kWh)
                </option>
              ))}
            </select>
          </Field>
          <Field
            label="Wattmeter"
            name="meter"
            errors={errors}
            hint={
              (policy?.meters.length ?? 0) > 0
                ? "a meter the host configured"
                : "the host configured no meter: on the host, iowatt-agent meters set NAME SPEC"
            }
          >
            <MeterSelect
              id="f-meter"
              meters={policy?.meters ?? []}
              defaultMeter={policy?.default_meter ?? null}
              value={effectiveMeter}
              onChange={setMeter}
            />
          </Field>
          <Field
            label="Idle baseline (s)"
            name="idle"
            errors={errors}
            hint="measured before and after the load; empty: the agent's default (30 s)"
          >
            <input
              id="f-idle"
              name="idle"
              inputMode="decimal"
              value={idle}
              onChange={(e) => setIdle(e.target.value)}
            />
          </Field>
        </div>
        <fieldset className="mode">
          <legend>Workload</legend>
          <label className="inline">
            <input
              type="radio"
              name="mode"
              value="builtin"
              checked={mode === "builtin"}
              onChange={() => setMode("builtin")}
            />{" "}
            Built-in
          </label>
          <label className="inline">
            <input
              type="radio"
              name="mode"
              value="custom"
              checked={mode === "custom"}
              onChange={() => setMode("custom")}
              data-testid="mode-custom"
            />{" "}
            Single job
          </label>
        </fieldset>
        {mode === "builtin" ? (
          <div className="form-grid">
            <Field label="Built-in workload" name="workload" errors={errors}>
              <select
                id="f-workload"
                name="workload"
                value={effectiveWorkload}
                onChange={(e) => setWorkloadId(e.target.value)}
              >
                {items.map((w) => (
                  <option key={w.id} value={w.id} disabled={refused(w.spec.jobs)}>
                    {w.name}
                    {refused(w.spec.jobs) ? " (writes: refused on this target)" : ""}
                  </option>
                ))}
              </select>
            </Field>
            {refusal && items.some((w) => refused(w.spec.jobs)) && (
              <p className="policy-refusal small span-all" data-testid="write-refusal">
                Write workloads are disabled: {refusal}
              </p>
            )}
            {chosenWorkload && (
              <div className="small span-all">
                <p>{chosenWorkload.description}</p>
                <ul>
                  {chosenWorkload.spec.jobs.map((j) => (
                    <li key={j.name}>
                      <strong>{j.name}</strong>: {describeJob(j)}
                      {j.runtime_s != null && `, ${j.runtime_s} s`}
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </div>
        ) : (
          <div className="form-grid">
            <Field label="rw" name="rw" errors={errors}>
              <select id="f-rw" name="rw" value={custom.rw} onChange={set("rw")}>
                {RW.map((r) => (
                  <option key={r} value={r} disabled={refusal !== null && rwWrites(r)}>
                    {r}
                  </option>
                ))}
              </select>
            </Field>
            {refusal && (
              <p className="policy-refusal small span-all" data-testid="write-refusal">
                Write workloads are disabled: {refusal}
              </p>
            )}
            <Field label="Block size (bs)" name="bs" errors={errors} hint="e.g. 4k, 1m (k = 1024)">
              <input id="f-bs" name="bs" value={custom.bs} onChange={set("bs")} />
            </Field>
            <Field label="Size" name="size" errors={errors} hint="file size, e.g. 64m, 1g">
              <input id="f-size" name="size" value={custom.size} onChange={set("size")} />
            </Field>
            <Field
              label="I/O size"
              name="iosize"
              errors={errors}
              hint="bytes to transfer inside the size, e.g. 64m of a 1g file (random: distinct blocks from all of it); empty: the whole size"
            >
              <input id="f-iosize" name="iosize" value={custom.ioSize} onChange={set("ioSize")} />
            </Field>
            <Field
              label="Runtime (s)"
              name="runtime"
              errors={errors}
              hint="empty: until size is done"
            >
              <input
                id="f-runtime"
                name="runtime"
                inputMode="decimal"
                value={custom.runtime}
                onChange={set("runtime")}
              />
            </Field>
            <Field label="iodepth" name="iodepth" errors={errors}>
              <input
                id="f-iodepth"
                name="iodepth"
                inputMode="numeric"
                value={custom.iodepth}
                onChange={set("iodepth")}
              />
            </Field>
            <Field label="numjobs" name="numjobs" errors={errors}>
              <input
                id="f-numjobs"
                name="numjobs"
                inputMode="numeric"
                value={custom.numjobs}
                onChange={set("numjobs")}
              />
            </Field>
            <Field label="Direct I/O" name="direct" errors={errors}>
              <span className="inline">
                <input
                  type="checkbox"
                  name="direct"
                  checked={custom.direct}
                  onChange={toggle("direct")}
                />{" "}
                O_DIRECT (bypass the page cache)
              </span>
            </Field>
            <Field
              label="End fsync"
              name="endfsync"
              errors={errors}
              hint="write jobs: the fsync's time counts in the runtime and bandwidth, as fio's end_fsync"
            >
              <span className="inline">
                <input
                  type="checkbox"
                  id="f-endfsync"
                  name="endfsync"
                  checked={custom.endFsync}
                  onChange={toggle("endFsync")}
                />{" "}
                fsync when the job ends
              </span>
            </Field>
          </div>
        )}
        <FormFooter
          error={formError}
          pending={create.isPending}
          label="Queue run"
          pendingLabel="Queueing…"
          testId="submit-run"
        />
      </form>
      {confirming && chosenTarget && (
        <DestructiveConfirm
          targets={[chosenTarget]}
          pending={create.isPending}
          onCancel={() => setConfirming(null)}
          onConfirm={() => create.mutate({ ...confirming, destructive: true })}
        />
      )}
    </section>
  );
}
