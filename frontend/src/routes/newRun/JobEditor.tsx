import type { JobSpecIn as JobSpec } from "../../client/types";
import { type Errors, Field } from "../../components/Field";
import { formatSeconds, sig3 } from "../../lib/format";
import { rwWrites } from "../../lib/policy";
import {
  ASSUMED_BYTES_PER_S,
  type DurationEstimate,
  depthCapNote,
  MIN_RUNTIME_S,
  OVERHEAD_S_PER_JOB,
  OVERHEAD_S_PER_RUN,
} from "../../lib/workload";
import type { CustomJob, Flag, TextField } from "./jobs";

const RW = ["read", "write", "randread", "randwrite", "rw", "randrw"] as const;
const IOENGINES = ["psync", "libaio", "io_uring"] as const;

/** Whose idle setting the estimate's idle baseline is. */
const IDLE_FROM: Record<DurationEstimate["idleFrom"], string> = {
  run: "this run's idle setting",
  meter: "the meter's idle setting, as its agent reports it",
  default: "the agent's default: this agent does not report its meter's idle setting",
};

/** "about 2 min 10 s: 60 s of load, 2 × 30 s idle baseline, 20 s overhead". */
export function EstimateLine({ e, shortened }: { e: DurationEstimate; shortened?: number }) {
  return (
    <p className="small span-all" data-testid="duration-estimate">
      <strong>Duration: about {formatSeconds(Math.round(e.totalS))}</strong>
      {shortened ? ` (shortened ×${shortened})` : ""} — {formatSeconds(Math.round(e.loadS))} of
      load,{" "}
      {e.metered
        ? `${formatSeconds(e.idleS / 2)} idle baseline before and after (${IDLE_FROM[e.idleFrom]})`
        : "no idle baseline (no meter: the agent idles only to measure power)"}
      , {OVERHEAD_S_PER_RUN} s + {OVERHEAD_S_PER_JOB} s per job overhead (start, file layout,
      upload), after the host takes the lease.
      {e.assumedRate > 0 &&
        ` ${e.assumedRate} size-bound job${e.assumedRate > 1 ? "s" : ""} without a rate estimated at ${sig3(ASSUMED_BYTES_PER_S / 1048576)} MiB/s: the real time is what the device does.`}
    </p>
  );
}

export function JobEditor({
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
  const depthNote = depthCapNote({ iodepth: Number(job.iodepth) || 1, ioengine: job.ioengine });
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
        {text(
          "runtime",
          "runtime",
          "Runtime (s)",
          `empty: until the size is done; under ${MIN_RUNTIME_S} s is flagged short (caches and bursts dominate)`,
          true,
        )}
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
        {depthNote && (
          <p className="small span-all alert alert-warn" data-testid={`depth-cap-${index}`}>
            ⚠ {depthNote}
          </p>
        )}
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
