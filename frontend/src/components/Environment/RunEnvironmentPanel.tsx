import { useQuery } from "@tanstack/react-query";
import { sig3 } from "../../lib/format";
import { runEnvironmentQuery } from "../../queries/environments";
import { describeTopology } from "./topologyDraft";

/** The run page's environment: as recorded when the run was queued or uploaded (never today's). */
export function RunEnvironmentPanel({ runId }: { runId: string }) {
  const q = useQuery(runEnvironmentQuery(runId));
  const snap = q.data?.snapshot;
  if (!snap) return null;
  const rows = describeTopology(snap.topology);
  const changed = q.data?.changed ?? [];
  return (
    <div className="card" data-testid="run-environment">
      <h3>
        Environment <span className="muted small">as recorded {snap.recorded_at.slice(0, 10)}</span>
      </h3>
      <dl className="facts">
        <dt>Name</dt>
        <dd>
          {snap.name} <span className="muted">({snap.kind})</span>
        </dd>
        {rows.map(([k, v]) => (
          <RowPair key={k} label={k} value={v} />
        ))}
        <dt>PUE</dt>
        <dd>{sig3(snap.pue)}</dd>
        {snap.region && (
          <>
            <dt>Grid region</dt>
            <dd>{snap.region}</dd>
          </>
        )}
      </dl>
      {changed.length > 0 && (
        <p className="muted small" data-testid="run-environment-changed">
          The environment has changed since this run: {changed.join(", ")}. The run keeps what it
          was.
        </p>
      )}
    </div>
  );
}

function RowPair({ label, value }: { label: string; value: string }) {
  return (
    <>
      <dt>{label}</dt>
      <dd data-testid="run-environment-topology">{value}</dd>
    </>
  );
}
