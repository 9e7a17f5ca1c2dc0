import type { WorkloadRead } from "../../client/types";
import {
  type AnySpec,
  baseScale,
  describeFileSet,
  describeRuntime,
  type FileFacts,
  formatScale,
  KIND_LABEL,
  kindOf,
  postmarkRows,
  specOf,
} from "../../lib/fileWorkload";
import { formatBytes } from "../../lib/format";
import { useFileFacts } from "./useFileFacts";
import "./fileWorkload.css";

/** "PostMark" / "vdbench file set" / "block jobs (fio)" as a small badge. */
export function KindBadge({ spec }: { spec: AnySpec }) {
  const kind = kindOf(spec);
  return (
    <span className={`badge kind-badge kind-${kind}`} data-testid="workload-kind" data-kind={kind}>
      {KIND_LABEL[kind]}
    </span>
  );
}

/**
 * The file set a file workload lays out, from the engine's facts at the saved scale, with the
 * full size (scale 1, the parameter file as written) beside it for a scaled vdbench set.
 */
export function FileSetFacts({ workload }: { workload: WorkloadRead }) {
  const spec = specOf(workload);
  const kind = kindOf(spec);
  const s0 = baseScale(spec);
  const here = useFileFacts(workload, 1);
  const full = useFileFacts(workload, kind === "vdbench" && s0 !== 1 ? 1 / s0 : null);
  if (kind === "block") return null;
  const f = here.facts;
  if (!f)
    return (
      <p className="small muted" data-testid="fileset-facts">
        {here.pending
          ? "Asking the engine for the file set's size…"
          : "File-set size: the server reads it from the engine (--parse-only) when a run is queued."}
      </p>
    );
  return (
    <FactsList
      facts={f}
      label={`File set${s0 !== 1 ? ` at scale ${formatScale(s0)}` : ""}`}
      full={
        kind === "vdbench" && s0 !== 1
          ? full.facts
            ? `${describeFileSet(full.facts)}, ${describeRuntime(full.facts)}`
            : full.pending
              ? "asking the engine…"
              : "unknown"
          : undefined
      }
    />
  );
}

/** The engine's facts of a file workload as a definition list. */
export function FactsList({
  facts: f,
  label,
  full,
}: {
  facts: FileFacts & { transactions?: number };
  label: string;
  /** the full size's description (vdbench at a scale other than 1) */
  full?: string;
}) {
  return (
    <dl className="facts fileset-facts" data-testid="fileset-facts">
      <dt>{label}</dt>
      <dd data-testid="fileset-size">{describeFileSet(f)}</dd>
      {full !== undefined && (
        <>
          <dt>Full size (scale 1)</dt>
          <dd data-testid="fileset-full">{full}</dd>
        </>
      )}
      <dt>Duration</dt>
      <dd>{describeRuntime(f, f.transactions)}</dd>
      <dt>Threads</dt>
      <dd>{f.threads}</dd>
      <dt>Largest transfer</dt>
      <dd>{formatBytes(f.max_block_bytes)}</dd>
      <dt>Writes at most</dt>
      <dd>
        {f.bytes_written_max == null ? "unbounded (time-based)" : formatBytes(f.bytes_written_max)}
      </dd>
    </dl>
  );
}

/** PostMark's settings table, or vdbench's parameter file in a code block with its scale. */
export function FileWorkloadParameters({ spec }: { spec: AnySpec }) {
  const kind = kindOf(spec);
  if (kind === "postmark" && spec.postmark) {
    return (
      <table className="table compact postmark-settings" data-testid="postmark-settings">
        <thead>
          <tr>
            <th>Setting</th>
            <th>Value</th>
            <th>PostMark command</th>
          </tr>
        </thead>
        <tbody>
          {postmarkRows(spec.postmark).map((r) => (
            <tr key={r.command}>
              <td>{r.setting}</td>
              <td>{r.value}</td>
              <td className="mono small">{r.command}</td>
            </tr>
          ))}
        </tbody>
      </table>
    );
  }
  if (kind === "vdbench" && spec.vdbench) {
    const v = spec.vdbench;
    return (
      <div data-testid="vdbench-parameters">
        <p className="small">
          Scale <strong data-testid="vdbench-scale">{formatScale(v.scale)}</strong>
          {v.scale !== 1 ? " of the parameter file as written" : " (as written)"}
          {v.elapsed_s != null ? ` · elapsed overridden to ${v.elapsed_s} s` : ""}. The host
          replaces <code>anchor=</code> by the run's directory.
        </p>
        <pre className="parameter-file">{v.parameters}</pre>
      </div>
    );
  }
  return null;
}
