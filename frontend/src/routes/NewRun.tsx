import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useEffect, useState } from "react";
import { useNavigate, useSearchParams } from "react-router-dom";
import type { JobSpec, RunCreate, WorkloadRead, WorkloadSpec } from "../client/types";
import { WorkloadScaleField } from "../components/DbWorkload/DbScaleField";
import { DbmsConsentNote, DbWorkloadParameters } from "../components/DbWorkload/DbWorkloadSpec";
import { isDbKind } from "../components/DbWorkload/dbWorkload";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../components/Field";
import { KindBadge } from "../components/FileWorkload/FileWorkloadSpec";
import { defaultScaleText, runScaleFactor } from "../components/FileWorkload/ScaleField";
import { DestructiveConfirm } from "../components/Policy/DestructiveConfirm";
import { type MeterChoice, MeterSelect } from "../components/Policy/MeterSelect";
import { DirectoryNote, LimitsNote, TargetSelect } from "../components/Policy/TargetSelect";
import { cloneDraft, cloneSource } from "../lib/clone";
import { fileWrites, isFileKind, kindOf, specOf } from "../lib/fileWorkload";
import { formatSeconds, formatSize, parseSize, sig3 } from "../lib/format";
import {
  needsDestructiveConfirm,
  policyOf,
  rwWrites,
  workloadWrites,
  writeRefusal,
} from "../lib/policy";
import { teamsWhere, useTeams } from "../lib/role";
import {
  ASSUMED_BYTES_PER_S,
  type DurationEstimate,
  describeJob,
  estimateDuration,
  OVERHEAD_S_PER_JOB,
  OVERHEAD_S_PER_RUN,
} from "../lib/workload";
import { agentsQuery } from "../queries/agents";
import { environmentsQuery } from "../queries/environments";
import { keys } from "../queries/keys";
import { createRun, runQuery } from "../queries/runs";
import { workloadsQuery } from "../queries/workloads";

const RW = ["read", "write", "randread", "randwrite", "rw", "randrw"] as const;
const IOENGINES = ["psync", "libaio", "io_uring"] as const;
/** Presets shortened for a quick look: the server shortens (WorkloadSpec.shortened) and records it. */
const SHORTEN = [
  { value: "", label: "full length" },
  { value: "0.5", label: "×0.5" },
  { value: "0.25", label: "×0.25" },
  { value: "0.1", label: "×0.1 (a quick look)" },
] as const;

/** Server field names (last path segment) → the form input showing their errors. A job's
 * fields keep the job's index ("jobs.1.bs"): see `formErrorsFrom(…, ["jobs"])`. */
const FIELD_ALIASES: Record<string, string> = {
  agent_id: "agent",
  target_path: "target",
  destructive: "target",
  workload_id: "workload",
  shorten: "shorten",
  scale: "scale",
  name: "name",
  rw: "rw",
  bs_bytes: "bs",
  bssplit: "bssplit",
  size_bytes: "size",
  offset_bytes: "size",
  runtime_s: "runtime",
  time_based: "runtime",
  ramp_time_s: "ramp",
  iodepth: "iodepth",
  numjobs: "numjobs",
  ioengine: "ioengine",
  direct: "direct",
  io_size_bytes: "iosize",
  end_fsync: "endfsync",
  rwmixread: "rwmixread",
  rate_iops: "rateiops",
  random_distribution: "distribution",
  fsync_every: "fsync",
  sync: "sync",
  randseed: "randseed",
  loops: "loops",
  meter: "meter",
  idle_s: "idle",
  environment_id: "environment",
};

/** One job of the builder as typed (text as entered; parsed on submit). */
export interface CustomJob {
  /** empty: "<rw>-<bs>" */
  name: string;
  rw: JobSpec["rw"];
  bs: string;
  /** fio's bssplit, e.g. 4k/70:64k/30; empty: every I/O is `bs` */
  bssplit: string;
  size: string;
  /** bytes of I/O inside the region; empty: all of `size` */
  ioSize: string;
  runtime: string;
  ramp: string;
  iodepth: string;
  numjobs: string;
  ioengine: JobSpec["ioengine"];
  direct: boolean;
  endFsync: boolean;
  rwmixread: string;
  rateIops: string;
  distribution: string;
  fsyncEvery: string;
  sync: boolean;
  randseed: string;
  loops: string;
  /** what the form does not show, kept from a cloned job (offset, readahead, invalidate) */
  rest?: Partial<JobSpec>;
}

type Flag = "direct" | "endFsync" | "sync";
type TextField = Exclude<keyof CustomJob, Flag | "rest" | "rw" | "ioengine">;

export function newJob(): CustomJob {
  return {
    name: "",
    rw: "randread",
    bs: "4k",
    bssplit: "",
    size: "64m",
    ioSize: "",
    runtime: "5",
    ramp: "",
    iodepth: "1",
    numjobs: "1",
    ioengine: "psync",
    // direct I/O by default: a buffered job measures the page cache as much as the device
    direct: true,
    endFsync: false,
    rwmixread: "50",
    rateIops: "",
    distribution: "random",
    fsyncEvery: "",
    sync: false,
    randseed: "",
    loops: "1",
  };
}

/** A job as the form shows it, from a stored spec (a cloned run's). */
export function jobFromSpec(j: JobSpec): CustomJob {
  const num = (v: number | null | undefined) => (v == null ? "" : String(v));
  return {
    name: j.name,
    rw: j.rw,
    bs: formatSize(j.bs_bytes),
    bssplit: j.bssplit ?? "",
    size: formatSize(j.size_bytes),
    ioSize: j.io_size_bytes == null ? "" : formatSize(j.io_size_bytes),
    runtime: num(j.runtime_s),
    ramp: j.ramp_time_s ? String(j.ramp_time_s) : "",
    iodepth: String(j.iodepth),
    numjobs: String(j.numjobs),
    ioengine: j.ioengine,
    direct: j.direct,
    endFsync: j.end_fsync,
    rwmixread: String(j.rwmixread),
    rateIops: num(j.rate_iops),
    distribution: j.random_distribution ?? "random",
    fsyncEvery: j.fsync_every ? String(j.fsync_every) : "",
    sync: j.sync ?? false,
    randseed: num(j.randseed),
    loops: String(j.loops ?? 1),
    rest: {
      offset_bytes: j.offset_bytes,
      readahead: j.readahead,
      invalidate: j.invalidate,
      time_based: j.time_based,
    },
  };
}

const whole = (t: string) => (/^\d+$/.test(t.trim()) ? Number(t.trim()) : null);

/** Builds the jobs, or the client-side errors (keyed "jobs.N.<input>") that prevent sending them. */
export function buildJobs(jobs: CustomJob[]): { jobs?: JobSpec[]; errors: Errors } {
  const errors: Errors = {};
  const out: JobSpec[] = [];
  const err = (i: number, k: string, message: string) => {
    errors[`jobs.${i}.${k}`] = { message, source: "client" };
  };
  const names = new Set<string>();
  jobs.forEach((c, i) => {
    // fio's size syntax, as the engine and the agent read it (lib/format.ts parseSize)
    const bs = parseSize(c.bs.trim());
    const size = parseSize(c.size.trim());
    const ioSize = c.ioSize.trim() === "" ? null : parseSize(c.ioSize.trim());
    const runtime = c.runtime.trim() === "" ? null : Number(c.runtime);
    const ramp = c.ramp.trim() === "" ? 0 : Number(c.ramp);
    const optional = (t: string) => (t.trim() === "" ? null : whole(t));
    const iodepth = whole(c.iodepth);
    const numjobs = whole(c.numjobs);
    const rwmixread = whole(c.rwmixread);
    const loops = whole(c.loops);
    const rate = optional(c.rateIops);
    const seed = optional(c.randseed);
    const fsyncEvery = c.fsyncEvery.trim() === "" ? 0 : whole(c.fsyncEvery);
    if (bs === null) err(i, "bs", "enter a block size such as 4k or 1m");
    if (size === null) err(i, "size", "enter a size such as 64m or 1g");
    if (c.ioSize.trim() !== "" && ioSize === null)
      err(i, "iosize", "enter a size such as 64m, or leave empty");
    if (runtime !== null && !(Number.isFinite(runtime) && runtime > 0))
      err(i, "runtime", "enter seconds (more than 0), or leave empty to end when the size is done");
    if (!(Number.isFinite(ramp) && ramp >= 0)) err(i, "ramp", "enter seconds (0 or more)");
    if (iodepth === null) err(i, "iodepth", "enter a whole number such as 1 or 32");
    if (numjobs === null) err(i, "numjobs", "enter a whole number such as 1 or 4");
    if (rwmixread === null || rwmixread > 100) err(i, "rwmixread", "enter a percent from 0 to 100");
    if (loops === null) err(i, "loops", "enter a whole number (1: one pass)");
    if (c.rateIops.trim() !== "" && rate === null)
      err(i, "rateiops", "enter I/Os per second as a whole number, or leave empty");
    if (c.randseed.trim() !== "" && seed === null)
      err(i, "randseed", "enter a whole number, or leave empty");
    if (fsyncEvery === null) err(i, "fsync", "enter a whole number of writes, or leave empty");
    if (bs === null || size === null) return;
    let name = c.name.trim() || `${c.rw}-${formatSize(bs)}`;
    if (names.has(name)) name = `${name}-${i + 1}`;
    names.add(name);
    out.push({
      offset_bytes: 0,
      invalidate: true,
      readahead: "default",
      ...c.rest,
      name,
      rw: c.rw,
      bs_bytes: bs,
      size_bytes: size,
      runtime_s: runtime,
      time_based: runtime !== null,
      ramp_time_s: ramp,
      rwmixread: rwmixread ?? 50,
      numjobs: numjobs ?? 1,
      iodepth: iodepth ?? 1,
      ioengine: c.ioengine,
      direct: c.direct,
      end_fsync: c.endFsync,
      io_size_bytes: ioSize,
      bssplit: c.bssplit.trim() === "" ? null : c.bssplit.trim(),
      rate_iops: rate,
      random_distribution: c.distribution.trim() || "random",
      fsync_every: fsyncEvery ?? 0,
      sync: c.sync,
      randseed: seed,
      loops: loops ?? 1,
    });
  });
  return Object.keys(errors).length > 0 ? { errors } : { jobs: out, errors };
}

/** "about 2 min 10 s: 60 s of load, 2 × 30 s idle baseline, 20 s overhead". */
function EstimateLine({ e, shortened }: { e: DurationEstimate; shortened?: number }) {
  return (
    <p className="small span-all" data-testid="duration-estimate">
      <strong>Duration: about {formatSeconds(Math.round(e.totalS))}</strong>
      {shortened ? ` (shortened ×${shortened})` : ""} — {formatSeconds(Math.round(e.loadS))} of
      load, {formatSeconds(e.idleS / 2)} idle baseline before and after, {OVERHEAD_S_PER_RUN} s +{" "}
      {OVERHEAD_S_PER_JOB} s per job overhead (lease, file layout, upload).
      {e.assumedRate > 0 &&
        ` ${e.assumedRate} size-bound job${e.assumedRate > 1 ? "s" : ""} without a rate estimated at ${sig3(ASSUMED_BYTES_PER_S / 1048576)} MiB/s: the real time is what the device does.`}
    </p>
  );
}

function JobEditor({
  job,
  index,
  count,
  errors,
  refusal,
  onChange,
  onMove,
  onRemove,
}: {
  job: CustomJob;
  index: number;
  count: number;
  errors: Errors;
  refusal: string | null;
  onChange: (j: CustomJob) => void;
  onMove: (delta: -1 | 1) => void;
  onRemove: () => void;
}) {
  const k = (name: string) => `jobs.${index}.${name}`;
  const set = (f: TextField) => (e: { target: { value: string } }) =>
    onChange({ ...job, [f]: e.target.value });
  const toggle = (f: Flag) => (e: { target: { checked: boolean } }) =>
    onChange({ ...job, [f]: e.target.checked });
  const mixed = job.rw === "rw" || job.rw === "randrw";
  const random = job.rw.startsWith("rand");
  const text = (f: TextField, name: string, label: string, hint?: string, numeric?: boolean) => (
    <Field label={label} name={k(name)} errors={errors} hint={hint}>
      <input
        id={`f-${k(name)}`}
        name={k(name)}
        inputMode={numeric ? "decimal" : undefined}
        value={job[f] as string}
        onChange={set(f)}
      />
    </Field>
  );
  return (
    <fieldset className="card" data-testid={`job-${index}`} style={{ marginBottom: "0.8rem" }}>
      <legend>
        Job {index + 1} of {count}
        <span className="inline" style={{ marginLeft: "1rem" }}>
          <button
            type="button"
            className="btn btn-small btn-ghost"
            onClick={() => onMove(-1)}
            disabled={index === 0}
            aria-label={`move job ${index + 1} up`}
          >
            ↑
          </button>
          <button
            type="button"
            className="btn btn-small btn-ghost"
            onClick={() => onMove(1)}
            disabled={index === count - 1}
            aria-label={`move job ${index + 1} down`}
          >
            ↓
          </button>
          <button
            type="button"
            className="btn btn-small btn-ghost"
            onClick={onRemove}
            disabled={count === 1}
            data-testid={`remove-job-${index}`}
          >
            remove
          </button>
        </span>
      </legend>
      <div className="form-grid">
        {text("name", "name", "Job name", "empty: rw-bs, e.g. randread-4k")}
        <Field label="rw" name={k("rw")} errors={errors}>
          <select
            id={`f-${k("rw")}`}
            name={k("rw")}
            value={job.rw}
            onChange={(e) => onChange({ ...job, rw: e.target.value as JobSpec["rw"] })}
          >
            {RW.map((r) => (
              <option key={r} value={r} disabled={refusal !== null && rwWrites(r)}>
                {r}
              </option>
            ))}
          </select>
        </Field>
        {text("bs", "bs", "Block size (bs)", "e.g. 4k, 1m (k = 1024)")}
        {text("size", "size", "Size", "file size, e.g. 64m, 1g")}
        {text(
          "ioSize",
          "iosize",
          "I/O size",
          "bytes to transfer inside the size (random: distinct blocks from all of it); empty: the whole size",
        )}
        {text("runtime", "runtime", "Runtime (s)", "empty: until the size is done", true)}
        {text("ramp", "ramp", "Warm-up (s)", "run before measuring; empty: none", true)}
        {text("iodepth", "iodepth", "iodepth", "I/Os in flight per thread", true)}
        {text("numjobs", "numjobs", "numjobs", "threads", true)}
        <Field label="I/O engine" name={k("ioengine")} errors={errors}>
          <select
            id={`f-${k("ioengine")}`}
            name={k("ioengine")}
            value={job.ioengine}
            onChange={(e) => onChange({ ...job, ioengine: e.target.value as JobSpec["ioengine"] })}
          >
            {IOENGINES.map((x) => (
              <option key={x} value={x}>
                {x}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Direct I/O" name={k("direct")} errors={errors}>
          <span className="inline">
            <input
              type="checkbox"
              id={`f-${k("direct")}`}
              name={k("direct")}
              checked={job.direct}
              onChange={toggle("direct")}
            />{" "}
            O_DIRECT (bypass the page cache)
          </span>
        </Field>
        {mixed &&
          text("rwmixread", "rwmixread", "Read share (%)", "rwmixread: percent reads", true)}
        {text(
          "bssplit",
          "bssplit",
          "Mixed block sizes (bssplit)",
          "e.g. 4k/70:64k/30 (size/percent); empty: every I/O is the block size",
        )}
        {text("rateIops", "rateiops", "Rate (IOPS)", "open load; empty: as fast as it can", true)}
        {random &&
          text(
            "distribution",
            "distribution",
            "Random distribution",
            "random, zipf:1.2, pareto:0.9, normal:10",
          )}
        {text("loops", "loops", "Loops", "passes over the region", true)}
        {text("randseed", "randseed", "Random seed", "empty: the engine's", true)}
        {text("fsyncEvery", "fsync", "fsync every N writes", "empty: never", true)}
        <Field label="O_DSYNC" name={k("sync")} errors={errors}>
          <span className="inline">
            <input
              type="checkbox"
              id={`f-${k("sync")}`}
              name={k("sync")}
              checked={job.sync}
              onChange={toggle("sync")}
            />{" "}
            every write durable (sync=dsync)
          </span>
        </Field>
        <Field
          label="End fsync"
          name={k("endfsync")}
          errors={errors}
          hint="write jobs: the fsync's time counts in the runtime and bandwidth, as fio's end_fsync"
        >
          <span className="inline">
            <input
              type="checkbox"
              id={`f-${k("endfsync")}`}
              name={k("endfsync")}
              checked={job.endFsync}
              onChange={toggle("endFsync")}
            />{" "}
            fsync when the job ends
          </span>
        </Field>
      </div>
    </fieldset>
  );
}

export function NewRun() {
  const navigate = useNavigate();
  const qc = useQueryClient();
  const [search] = useSearchParams();
  const fromRun = cloneSource(search);
  // read once: the form copies the run, it does not follow it live
  const source = useQuery({
    ...runQuery(fromRun ?? ""),
    enabled: fromRun !== null,
    refetchInterval: false,
  });
  const agents = useQuery(agentsQuery());
  const workloads = useQuery(workloadsQuery());
  const { teams } = useTeams();
  const online = agents.data?.items.filter((a) => a.online) ?? [];

  const [agentId, setAgentId] = useState("");
  const [target, setTarget] = useState("");
  const [name, setName] = useState("");
  const [mode, setMode] = useState<"builtin" | "custom">("builtin");
  const [workloadId, setWorkloadId] = useState(search.get("workload") ?? "");
  const [shorten, setShorten] = useState("");
  /** a file workload's scale as typed (ScaleField), reset when another workload is picked */
  const [scale, setScale] = useState<{ workload: string; text: string } | null>(null);
  const [jobs, setJobs] = useState<CustomJob[]>([newJob()]);
  /** a cloned workload's passes and recorded shortening, sent back as they were */
  const [kept, setKept] = useState<Partial<WorkloadSpec>>({});
  const [clonedFrom, setClonedFrom] = useState<string | null>(null);
  const environments = useQuery(environmentsQuery());
  const [environmentId, setEnvironmentId] = useState("");
  /** undefined: the host's default meter (or none when it has none) */
  const [meter, setMeter] = useState<MeterChoice | undefined>(undefined);
  const [idle, setIdle] = useState("");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  /** The run waiting for the typed confirmation of a destructive write. */
  const [confirming, setConfirming] = useState<RunCreate | null>(null);

  // Clone and re-run: prefill once from the run named in ?from= (lib/clone.ts).
  const sourceRun = source.data;
  useEffect(() => {
    if (!sourceRun || clonedFrom === sourceRun.id) return;
    const d = cloneDraft(sourceRun);
    setClonedFrom(d.source_run_id);
    setAgentId(d.agent_id);
    setTarget(d.target_path);
    setName(d.name);
    setEnvironmentId(d.environment_id ?? "");
    setMeter(d.meter ?? undefined);
    setIdle(d.idle_s == null ? "" : String(d.idle_s));
    setMode("custom");
    setJobs((d.workload.jobs ?? []).map(jobFromSpec));
    setKept({
      passes: d.workload.passes,
      discard_passes: d.workload.discard_passes,
      shortened_by: d.workload.shortened_by ?? null,
    });
  }, [sourceRun, clonedFrom]);

  const effectiveAgent = agentId || online[0]?.id || "";
  const policy = policyOf(online.find((a) => a.id === effectiveAgent));
  const targets = policy?.targets ?? [];
  const items = workloads.data?.items ?? [];
  const pickedFirst = items.find((w) => w.id === workloadId) ?? items[0];
  // A file workload (PostMark, vdbench) lays out a file set: directory targets only.
  const fileWorkload =
    mode === "builtin" &&
    pickedFirst !== undefined &&
    (isFileKind(kindOf(specOf(pickedFirst))) || isDbKind(kindOf(specOf(pickedFirst))));
  const allowedTargets = fileWorkload ? targets.filter((t) => t.kind === "directory") : targets;
  const chosenTarget = allowedTargets.find((t) => t.path === target) ?? allowedTargets[0];
  // Why the host refuses writes on the chosen target: writing workloads are disabled.
  const refusal = chosenTarget ? writeRefusal(chosenTarget) : null;
  const writesOf = (w: WorkloadRead) =>
    isDbKind(kindOf(specOf(w))) ||
    (isFileKind(kindOf(specOf(w))) ? fileWrites(specOf(w)) : workloadWrites(w.spec.jobs));
  const refusedW = (w: WorkloadRead) => refusal !== null && writesOf(w);
  const picked = items.find((w) => w.id === workloadId);
  const effectiveWorkload =
    (picked && !refusedW(picked) ? picked.id : items.find((w) => !refusedW(w))?.id) ?? "";
  const chosenWorkload = items.find((w) => w.id === effectiveWorkload);
  const chosenFile =
    chosenWorkload !== undefined &&
    (isFileKind(kindOf(specOf(chosenWorkload))) || isDbKind(kindOf(specOf(chosenWorkload))));
  const scaleText =
    chosenWorkload && scale?.workload === chosenWorkload.id
      ? scale.text
      : chosenWorkload
        ? defaultScaleText(chosenWorkload)
        : "1";
  const scaleFactor =
    chosenWorkload && chosenFile ? runScaleFactor(chosenWorkload, scaleText) : undefined;
  const effectiveMeter: MeterChoice = meter === undefined ? (policy?.default_meter ?? "") : meter;
  const writes =
    mode === "custom"
      ? jobs.some((j) => rwWrites(j.rw))
      : chosenWorkload
        ? writesOf(chosenWorkload)
        : false;
  const idleNumber = idle.trim() === "" ? null : Number(idle);
  const idleForEstimate =
    idleNumber !== null && Number.isFinite(idleNumber) && idleNumber >= 0 ? idleNumber : null;
  const shortenFactor = shorten === "" ? undefined : Number(shorten);
  const built = mode === "custom" ? buildJobs(jobs).jobs : undefined;
  const estimate =
    mode === "custom"
      ? built && estimateDuration(built, idleForEstimate)
      : chosenWorkload &&
        !chosenFile &&
        estimateDuration(
          // the display's approximation; the server shortens the run (WorkloadSpec.shortened)
          (chosenWorkload.spec.jobs ?? []).map((j) =>
            shortenFactor && j.runtime_s != null
              ? { ...j, runtime_s: Math.max(1, j.runtime_s * shortenFactor) }
              : shortenFactor
                ? { ...j, io_size_bytes: (j.io_size_bytes ?? j.size_bytes) * shortenFactor }
                : j,
          ),
          idleForEstimate,
        );

  const create = useMutation({
    mutationFn: (body: RunCreate) => createRun(body),
    onSuccess: (run) => {
      qc.invalidateQueries({ queryKey: keys.runs.lists() });
      navigate(`/runs/${run.id}`);
    },
    onError: (err) => {
      setConfirming(null);
      const r = formErrorsFrom(err, FIELD_ALIASES, ["jobs"]);
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
      const i = jobs.findIndex((j) => rwWrites(j.rw));
      const key = mode === "custom" ? `jobs.${i}.rw` : "workload";
      setErrors({ [key]: { message: refusal, source: "client" } });
      return;
    }
    if (mode === "builtin" && chosenFile && scaleFactor === null) {
      setErrors({
        scale: { message: "enter a number above 0, at most 1000", source: "client" },
      });
      return;
    }
    if (idleNumber !== null && !(Number.isFinite(idleNumber) && idleNumber >= 0)) {
      setErrors({ idle: { message: "enter seconds (0 or more)", source: "client" } });
      return;
    }
    let workload: RunCreate["workload"] = null;
    if (mode === "custom") {
      const b = buildJobs(jobs);
      if (!b.jobs) {
        setErrors(b.errors);
        return;
      }
      workload = {
        passes: 1,
        discard_passes: 0,
        shortened_by: null,
        ...kept,
        kind: "block",
        jobs: b.jobs,
      };
    }
    const body: RunCreate = {
      agent_id: effectiveAgent,
      target_path: chosenTarget.path,
      name: name.trim() || null,
      workload,
      workload_id: mode === "builtin" ? effectiveWorkload || null : null,
      environment_id: environmentId || null,
      meter: effectiveMeter,
      idle_s: idleNumber,
      destructive: false,
      shorten: mode === "builtin" && !chosenFile && shortenFactor ? shortenFactor : null,
      ...(mode === "builtin" && chosenFile && scaleFactor ? { scale: scaleFactor } : {}),
    };
    // The second key: only the typed confirmation sets destructive (see DestructiveConfirm).
    if (needsDestructiveConfirm(chosenTarget, writes)) setConfirming(body);
    else create.mutate(body);
  }

  const updateJob = (i: number) => (j: CustomJob) =>
    setJobs((all) => all.map((x, k) => (k === i ? j : x)));
  const moveJob = (i: number) => (delta: -1 | 1) =>
    setJobs((all) => {
      const next = [...all];
      const [j] = next.splice(i, 1);
      if (j) next.splice(i + delta, 0, j);
      return next;
    });
  const removeJob = (i: number) => () => setJobs((all) => all.filter((_, k) => k !== i));

  const viewerOnly = teams.length > 0 && teamsWhere(teams, "run.create").length === 0;
  return (
    <section>
      <h1>New run</h1>
      {viewerOnly && (
        <p className="alert alert-warn" data-testid="role-cannot-run">
          You are a viewer in {teams.length === 1 ? "your team" : "each of your teams"}: queuing a
          run needs the member role. Ask a team admin to change it.
        </p>
      )}
      {fromRun && (
        <p className="alert alert-info" data-testid="clone-note">
          {source.isError
            ? "The run to clone could not be loaded: fill the form in yourself."
            : sourceRun
              ? `A re-run of “${sourceRun.name}”: the same workload, host and target. Change anything before queueing.`
              : "Loading the run to clone…"}
        </p>
      )}
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
                directoriesOnly={fileWorkload}
              />
            )}
            {fileWorkload && <DirectoryNote />}
            {mode === "builtin" && chosenWorkload && (
              <DbmsConsentNote policy={policy} spec={specOf(chosenWorkload)} />
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
            Custom jobs
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
                  <option key={w.id} value={w.id} disabled={refusedW(w)}>
                    {w.name}
                    {isFileKind(kindOf(specOf(w))) ? ` (${kindOf(specOf(w))})` : ""}
                    {refusedW(w) ? " (writes: refused on this target)" : ""}
                  </option>
                ))}
              </select>
            </Field>
            {chosenWorkload && chosenFile ? (
              <WorkloadScaleField
                workload={chosenWorkload}
                value={scaleText}
                onChange={(text) => setScale({ workload: chosenWorkload.id, text })}
                errors={errors}
              />
            ) : (
              <Field
                label="Length"
                name="shorten"
                errors={errors}
                hint="shortened runs are flagged “shortened ×f” wherever their results show"
              >
                <select
                  id="f-shorten"
                  name="shorten"
                  value={shorten}
                  onChange={(e) => setShorten(e.target.value)}
                  data-testid="shorten-select"
                >
                  {SHORTEN.map((s) => (
                    <option key={s.value} value={s.value}>
                      {s.label}
                    </option>
                  ))}
                </select>
              </Field>
            )}
            {refusal && items.some((w) => refusedW(w)) && (
              <p className="policy-refusal small span-all" data-testid="write-refusal">
                Write workloads are disabled: {refusal}
              </p>
            )}
            {chosenWorkload && (
              <div className="small span-all" data-testid="workload-description">
                <p>
                  <KindBadge spec={specOf(chosenWorkload)} /> {chosenWorkload.description}
                </p>
                {isDbKind(kindOf(specOf(chosenWorkload))) && (
                  <DbWorkloadParameters spec={specOf(chosenWorkload)} />
                )}
                <ul>
                  {(chosenWorkload.spec.jobs ?? []).map((j) => (
                    <li key={j.name}>
                      <strong>{j.name}</strong>: {describeJob(j)}
                      {j.runtime_s != null && `, ${j.runtime_s} s`}
                    </li>
                  ))}
                </ul>
              </div>
            )}
            {estimate && <EstimateLine e={estimate} shortened={shortenFactor} />}
          </div>
        ) : (
          <div data-testid="job-builder">
            {refusal && (
              <p className="policy-refusal small" data-testid="write-refusal">
                Write workloads are disabled: {refusal}
              </p>
            )}
            {kept.shortened_by ? (
              <p className="small" data-testid="kept-shortened">
                This workload was shortened ×{kept.shortened_by}: the re-run keeps that flag.
              </p>
            ) : null}
            {jobs.map((j, i) => (
              <JobEditor
                // biome-ignore lint/suspicious/noArrayIndexKey: jobs have no identity but their place
                key={i}
                job={j}
                index={i}
                count={jobs.length}
                errors={errors}
                refusal={refusal}
                onChange={updateJob(i)}
                onMove={moveJob(i)}
                onRemove={removeJob(i)}
              />
            ))}
            <div className="actions" style={{ justifyContent: "flex-start" }}>
              <button
                type="button"
                className="btn"
                data-testid="add-job"
                onClick={() =>
                  setJobs((all) => [...all, { ...(all[all.length - 1] ?? newJob()), name: "" }])
                }
              >
                Add a job
              </button>
            </div>
            {estimate ? (
              <EstimateLine e={estimate} />
            ) : (
              <p className="small muted" data-testid="duration-estimate">
                Duration: fix the fields marked above to see an estimate.
              </p>
            )}
          </div>
        )}
        <FormFooter
          error={formError}
          pending={create.isPending}
          label="Queue run"
          pendingLabel="Queueing…"
          testId="submit-run"
          disabled={viewerOnly}
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
