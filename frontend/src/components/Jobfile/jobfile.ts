// fio job files (ADR 0029): what the UI derives from the engine's parse the server returns
// (POST /workloads/jobfile, or a saved workload's jobfile.parsed). The text itself is never
// parsed here: the engine is the only parser.
import type { components } from "../../client/schema";

export type JobfileParse = components["schemas"]["JobfileParse"];
export type JobfileJob = components["schemas"]["JobfileJob"];

/** The server's bound of a job file's text (JobfileSpec.text), in UTF-8 bytes. */
export const JOBFILE_MAX_BYTES = 64 * 1024;

const READS = new Set(["read", "randread"]);

/** A job's options as it runs: the [global] section's, then its own (fio's rule: later wins). */
export function effectiveOptions(parse: JobfileParse, job: JobfileJob): Record<string, string> {
  return { ...parse.global_options, ...job.options };
}

/** Whether any job writes (fio's rw, `readwrite` its alias; read is the default). Used for the
 * host's write refusal and the destructive confirmation before queueing, as for block jobs. */
export function jobfileWrites(parse: JobfileParse | null | undefined): boolean {
  if (!parse) return false;
  return parse.jobs.some((j) => {
    const o = effectiveOptions(parse, j);
    const rw = (o.rw ?? o.readwrite ?? "read").split(":")[0] ?? "read";
    return !READS.has(rw.trim());
  });
}

/** A job's own options: those its section sets beyond (or unlike) [global]'s (the engine lists
 * a job's options with [global]'s merged in). */
export function ownOptions(parse: JobfileParse, job: JobfileJob): Record<string, string> {
  return Object.fromEntries(
    Object.entries(job.options).filter(([k, v]) => parse.global_options[k] !== v),
  );
}

/** The jobs grouped as they run: each reporting group's jobs start together. */
export function groupsOf(parse: JobfileParse): { group: number; jobs: JobfileJob[] }[] {
  const groups: { group: number; jobs: JobfileJob[] }[] = [];
  for (const j of parse.jobs) {
    const last = groups[groups.length - 1];
    if (last && last.group === j.group) last.jobs.push(j);
    else groups.push({ group: j.group, jobs: [j] });
  }
  return groups;
}

/** "rw=randread bs=4k" — a section's options as the file has them (a bare flag: its name). */
export function optionsText(options: Record<string, string>): string {
  return Object.entries(options)
    .map(([k, v]) => (v === "" ? k : `${k}=${v}`))
    .join(" ");
}

/** UTF-8 bytes of a text (the server's limit is in bytes, not characters). */
export function utf8Bytes(text: string): number {
  return new TextEncoder().encode(text).length;
}
