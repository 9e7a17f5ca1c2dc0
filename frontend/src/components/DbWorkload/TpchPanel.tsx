import { formatBytes, formatCount, formatSeconds, sig3 } from "../../lib/format";
import { GroupedBarChart } from "../charts/GroupedBarChart";
import { TpchLabel } from "./DbWorkloadSpec";
import {
  dbmsLabel,
  energyPerDbSize,
  formatSf,
  metricFormulas,
  queryChartRows,
  type TpchSummary,
} from "./dbWorkload";
import "./dbWorkload.css";

function Figure({
  label,
  value,
  title,
  testId,
}: {
  label: string;
  value: string;
  title?: string;
  testId?: string;
}) {
  return (
    <div className="figure" data-testid={testId} title={title}>
      <span className={title ? "figure-label has-formula" : "figure-label"}>{label}</span>
      <span className="figure-value">{value}</span>
    </div>
  );
}

/** The run's energy (measured or estimated) beside its database size, as Song & Lee's Tables 6–7. */
export interface RunEnergyLike {
  total_j?: number | null;
  estimated?: boolean | null;
  status?: string | null;
}

/**
 * A TPC-H-derived run's result: the metrics with their formulas on hover, load time, the
 * per-query seconds per stream as bars (timed-out queries marked), the DBMS's settings and the
 * run's energy per database size.
 */
export function TpchPanel({ t, energy }: { t: TpchSummary; energy?: RunEnergyLike | null }) {
  const f = metricFormulas(t);
  const chart = queryChartRows(t);
  const e = energyPerDbSize(energy?.total_j, t.scale_factor, t.database_bytes);
  const num = (v: number | null | undefined) => (v == null ? "—" : sig3(v));
  const bufferPool = t.buffer_pool?.bytes ?? t.buffer_pool_bytes ?? null;
  const settings = Object.entries(t.settings ?? {});
  return (
    <div className="card" data-testid="tpch-panel">
      <h3 style={{ marginTop: 0 }}>
        TPC-H at SF {formatSf(t.scale_factor)} on {dbmsLabel(t.dbms)} <TpchLabel />
      </h3>
      <div className="db-figures">
        <Figure label="QphH@Size" value={num(t.qphh_at_size)} title={f.qphh} testId="tpch-qphh" />
        <Figure
          label="Power@Size"
          value={num(t.power_at_size)}
          title={f.power}
          testId="tpch-power"
        />
        <Figure
          label="Throughput@Size"
          value={num(t.throughput_at_size)}
          title={f.throughput}
          testId="tpch-throughput"
        />
        <Figure label="Load time" value={formatSeconds(t.load_s)} testId="tpch-load" />
        <Figure label="Throughput test (Ts)" value={formatSeconds(t.throughput_s)} />
        <Figure label="Streams" value={`${t.streams}`} />
        {e && (
          <Figure
            label={`Energy at SF ${formatSf(t.scale_factor)}${energy?.estimated ? " (estimated)" : ""}`}
            value={e.total}
            testId="tpch-energy"
          />
        )}
        {e?.perGb && (
          <Figure
            label={`Energy per GB of database${energy?.estimated ? " (estimated)" : ""}`}
            value={e.perGb}
            title={`the run's energy ÷ the database's estimated size on disk (${formatBytes(t.database_bytes)}, GB = 10^9 B)`}
            testId="tpch-energy-per-gb"
          />
        )}
        {e && (
          <Figure
            label={`Energy per SF 1${energy?.estimated ? " (estimated)" : ""}`}
            value={e.perSf}
            testId="tpch-energy-per-sf"
          />
        )}
      </div>
      {t.metrics_note && (
        <p className="alert alert-warn small" data-testid="tpch-metrics-note">
          Metrics withheld: {t.metrics_note}
        </p>
      )}
      {!e && (
        <p className="small muted" data-testid="tpch-energy-none">
          Energy per database size: no energy for this run (no meter, or not computed yet).
        </p>
      )}
      {energy?.estimated && e && (
        <p className="small muted">Estimated energy: from the meter's model, not a measurement.</p>
      )}
      <h4>Seconds per query, per stream</h4>
      <div data-testid="tpch-query-chart" data-queries={chart.rows.length}>
        <GroupedBarChart
          rows={chart.rows}
          categoryKey="query"
          series={chart.series}
          valueLabel="Query time"
          unit="s"
          log="auto"
        />
      </div>
      {chart.timedOut.length > 0 && (
        <p className="small timed-out" data-testid="tpch-timed-out">
          * Timed out after {formatSeconds(t.query_timeout_s)}:{" "}
          {chart.timedOut
            .map((x) => `Q${x.query} (${x.stream === 0 ? "power" : `stream ${x.stream}`})`)
            .join(", ")}
          ; its bar shows the time until it was cancelled.
        </p>
      )}
      {chart.failed.length > 0 && (
        <p className="small timed-out" data-testid="tpch-failed">
          * Failed:{" "}
          {chart.failed
            .map(
              (x) => `Q${x.query} (${x.stream === 0 ? "power" : `stream ${x.stream}`}): ${x.error}`,
            )
            .join("; ")}
        </p>
      )}
      {t.answers_checked != null && (
        <p className="small muted" data-testid="tpch-answers">
          Answers: {formatCount(t.answers_ok ?? null)} of {formatCount(t.answers_checked)} matched
          the reference.
        </p>
      )}
      <h4>DBMS</h4>
      <dl className="facts" data-testid="tpch-dbms">
        <dt>Server</dt>
        <dd>{t.dbms_version ?? dbmsLabel(t.dbms)}</dd>
        <dt>Buffer pool</dt>
        <dd>{bufferPool != null ? formatBytes(bufferPool) : "—"}</dd>
        <dt>Data generation</dt>
        <dd>{formatSeconds(t.generate_s)} (not in the metric)</dd>
        {settings.map(([k, v]) => (
          <div key={k} style={{ display: "contents" }}>
            <dt className="mono small">{k}</dt>
            <dd className="mono small">{v == null ? "—" : String(v)}</dd>
          </div>
        ))}
      </dl>
    </div>
  );
}
