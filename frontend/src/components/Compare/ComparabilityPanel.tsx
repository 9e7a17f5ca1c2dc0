import type { CompareRead } from "../../client/types";

function show(v: unknown): string {
  if (v === null || v === undefined) return "—";
  return typeof v === "string" ? v : JSON.stringify(v);
}

/**
 * The comparability verdict. Unlike runs are not compared until the user insists; the
 * differences are listed either way.
 */
export function ComparabilityPanel({
  data,
  runLabel,
  onForce,
}: {
  data: CompareRead;
  runLabel: (id: string) => string;
  onForce: (force: boolean) => void;
}) {
  const c = data.comparability;
  const fp = c.fingerprint === "workload" ? "workload" : "workload, host, kernel and filesystem";
  if (c.verdict === "comparable") {
    return (
      <p className="small comparable" data-testid="comparability" data-verdict="comparable">
        ✓ Like for like: every run has the same {fp} fingerprint.
      </p>
    );
  }
  const runIds = data.runs.map((r) => r.id);
  const table = (
    <table className="table compact" data-testid="differences">
      <thead>
        <tr>
          <th>Field</th>
          {runIds.map((id) => (
            <th key={id}>{runLabel(id)}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {c.differences.map((d) => (
          <tr key={d.field}>
            <td className="mono small">{d.field}</td>
            {runIds.map((id) => (
              <td key={id} className="mono small">
                {show(d.values[id])}
              </td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
  if (c.verdict === "not_comparable") {
    return (
      <div className="alert alert-error" data-testid="comparability" data-verdict="not_comparable">
        <p>
          <strong>Not comparable:</strong> these runs differ in their {fp}, so their numbers are not
          like for like. Differences:
        </p>
        {table}
        <button
          type="button"
          className="btn"
          data-testid="compare-anyway"
          onClick={() => onForce(true)}
        >
          Compare anyway
        </button>
      </div>
    );
  }
  return (
    <div className="alert alert-warn" data-testid="comparability" data-verdict="forced">
      <p>
        <strong>Compared anyway:</strong> the runs differ in their {fp}; read the ratios with care.
      </p>
      {table}
      <button type="button" className="btn btn-small" onClick={() => onForce(false)}>
        Only like for like
      </button>
    </div>
  );
}
