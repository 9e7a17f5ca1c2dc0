import type { JobSpecIn as JobSpec } from "../../client/types";
import type { Errors } from "../../components/Field";
import { formatSize, parseSize } from "../../lib/format";
import { MIN_RUNTIME_S } from "../../lib/workload";

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

export type Flag = "direct" | "endFsync" | "sync";
export type TextField = Exclude<keyof CustomJob, Flag | "rest" | "rw" | "ioengine">;

export function newJob(): CustomJob {
  return {
    name: "",
    rw: "randread",
    bs: "4k",
    bssplit: "",
    size: "64m",
    ioSize: "",
    // the short-run rule's length (libs/workload MIN_RUNTIME_S): a default job is never flagged
    runtime: String(MIN_RUNTIME_S),
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
