import { useQuery } from "@tanstack/react-query";
import type { EnergyRead, RunSeries } from "../../client/types";
import {
  addMeterHint,
  energyStateText,
  flagText,
  powerChartData,
  UPLOAD_POWER_HINT,
} from "../../lib/energy";
import { errorMessage } from "../../lib/errors";
import { isFileKind, type WorkloadKind } from "../../lib/fileWorkload";
import {
  formatCo2,
  formatCount,
  formatEnergy,
  formatEnergyPm,
  formatGridIntensity,
  formatIopsPerWatt,
  formatJPerGb,
  formatJPerMio,
  formatMBpsPerWatt,
  formatPercent,
  formatSeconds,
  formatWatts,
  sig3,
} from "../../lib/format";
import { runThroughputTimeline } from "../../lib/series";
import { runPowerQuery } from "../../queries/energy";
import { PowerThroughputChart } from "../charts/PowerThroughputChart";
import { TierBadge } from "./TierBadge";

/**
 * The per-operation figures' labels. A block run counts I/Os; a file run (PostMark, vdbench) counts
 * its read and write calls (the engine's read/write `total_ios`), which are operations, not IOPS.
 */
function finiteNum(v: number | null | undefined): v is number {
  return typeof v === "number" && Number.isFinite(v);
}

function opLabels(kind: WorkloadKind) {
  if (!isFileKind(kind)) {
    return {
      perMio: "Energy per million I/Os",
      perWatt: "IOPS per watt",
      mio: (v: number | null | undefined) => formatJPerMio(v),
      watt: (v: number | null | undefined) => formatIopsPerWatt(v),
    };
  }
  return {
    perMio: "Energy per million read/write operations",
    perWatt: "Read/write op/s per watt",
    mio: (v: number | null | undefined) =>
      finiteNum(v) ? `${formatCount(v)} J/M ops` : formatJPerMio(v),
    watt: (v: number | null | undefined) =>
      finiteNum(v) ? `${formatCount(v)} op/s/W` : formatIopsPerWatt(v),
  };
}

const METHOD: Record<string, string> = {
  annual: "annual average of the region",
  override: "the environment's own figure",
  hourly: "hourly series, weighted by the run's power",
};

function Figure({
  label,
  value,
  sub,
  testId,
}: {
  label: string;
  value: string;
  sub?: string;
  testId?: string;
}) {
  return (
    <div className="figure" data-testid={testId}>
      <span className="figure-label">{label}</span>
      <span className="figure-value">{value}</span>
      {sub && <span className="figure-sub muted small">{sub}</span>}
    </div>
  );
}

function PowerChart({
  runId,
  energy,
  series,
}: {
  runId: string;
  energy: EnergyRead;
  series?: RunSeries;
}) {
  const q = useQuery(runPowerQuery(runId, energy.status));
  if (q.error) return <p className="muted small">Power series: {errorMessage(q.error)}</p>;
  if (!q.data) return <p className="muted small">Loading power series…</p>;
  if (q.data.points.length === 0) return <p className="muted small">No power samples stored.</p>;
  const { rows, phases } = powerChartData(q.data, runThroughputTimeline(series?.jobs ?? []));
  return (
    <div className="chart" data-testid="power-chart">
      <PowerThroughputChart
        rows={rows}
        phases={phases}
        powerName={q.data.estimated ? "Power (ESTIMATE)" : `Power (${q.data.tier_label})`}
      />
    </div>
  );
}

/**
 * A run's energy and carbon: every state of `run.energy`, the figures, and power over time.
 * Without a meter it says how to get one where the reader can act: an agent's run names the host's
 * meters, an uploaded run (source "import") the upload's `power`; a viewer can do neither (no hint).
 */
export function EnergyPanel({
  runId,
  energy,
  series,
  source = "agent",
  canAct = true,
  kind = "block",
  agentName,
  origin,
}: {
  runId: string;
  energy: EnergyRead;
  series?: RunSeries;
  source?: string;
  canAct?: boolean;
  /** the run's workload kind: a file run's per-operation figures say operations, not IOPS */
  kind?: WorkloadKind;
  /** the run's agent: the hint's command is the one for how that host runs it */
  agentName?: string | null;
  /** an imported or published run's origin: nothing was measured here, nothing to add a meter to */
  origin?: { kind: string; label: string } | null;
}) {
  const head = (
    <h2 className="with-badge">
      Energy and carbon <TierBadge energy={energy} />
    </h2>
  );
  if (energy.status === "none" && origin) {
    return (
      <section className="card energy" data-testid="energy-panel" data-status="none">
        {head}
        <p data-testid="energy-none">
          <strong>No energy figures:</strong>{" "}
          {origin.kind === "published"
            ? "published figures state no power."
            : `${origin.label}: the file holds no power samples, and nothing was measured here.`}
        </p>
      </section>
    );
  }
  if (energy.status === "none") {
    return (
      <section className="card energy" data-testid="energy-panel" data-status="none">
        {head}
        <p data-testid="energy-none">
          <strong>No meter:</strong> this run was measured without a wattmeter, so it has no energy
          figures.
        </p>
        {canAct && (
          <p className="muted small" data-testid="energy-hint">
            {source === "import" ? UPLOAD_POWER_HINT : addMeterHint(agentName)}
          </p>
        )}
      </section>
    );
  }
  if (energy.status === "no_meter_data") {
    return (
      <section className="card energy" data-testid="energy-panel" data-status="no_meter_data">
        {head}
        <div className="alert alert-warn" data-testid="energy-no-data">
          <strong>No meter data.</strong> {energy.reason ?? "The meter gave no usable samples."} The
          run itself is valid; only its energy is missing.
        </div>
        {energy.source && <p className="muted small mono">meter: {energy.source}</p>}
      </section>
    );
  }
  if (energy.status === "pending") {
    return (
      <section className="card energy" data-testid="energy-panel" data-status="pending">
        {head}
        <p className="muted" data-testid="energy-pending">
          <strong>{energyStateText(energy)}</strong> The server integrates the stored samples; this
          page asks again, less often as time goes on.
        </p>
        <PowerChart runId={runId} energy={energy} series={series} />
      </section>
    );
  }
  if (energy.status === "failed") {
    return (
      <section className="card energy" data-testid="energy-panel" data-status="failed">
        {head}
        <div className="alert alert-warn" data-testid="energy-failed">
          <strong>{energyStateText(energy)}</strong> The run itself is valid; reload the page later
          to see whether the server's retry computed it.
        </div>
        <PowerChart runId={runId} energy={energy} series={series} />
      </section>
    );
  }
  const e = energy;
  const delta = e.load_w_mean != null && e.idle_w != null ? e.load_w_mean - e.idle_w : null;
  const dropped = Object.entries(e.dropped).filter(([, n]) => n > 0);
  const ops = opLabels(kind);
  return (
    <section
      className={`card energy${e.estimated ? " energy-estimate" : ""}`}
      data-testid="energy-panel"
      data-status="ok"
    >
      {head}
      {e.estimated && (
        <div className="estimate-banner" data-testid="estimate-banner">
          ESTIMATE — no meter measured this run. These figures are modelled from datasheet power and
          utilisation; do not compare them with measured runs as if they were measurements.
        </div>
      )}
      <p className="muted small">
        Meter <span className="mono">{e.source}</span> · {e.samples ?? "?"} samples · load coverage{" "}
        {formatPercent(e.coverage == null ? null : e.coverage * 100)} · accuracy ±
        {e.accuracy_pct == null ? "?" : sig3(e.accuracy_pct)} %{" "}
        {e.accuracy_declared ? "(declared)" : "(assumed for the tier)"} · uncertainties are expanded
        (k=2, about 95 %)
      </p>
      <div className="figures" data-testid="energy-figures">
        <Figure label="Idle power" value={formatWatts(e.idle_w)} sub="mean of idle before/after" />
        <Figure
          label="Power under load"
          value={formatWatts(e.load_w_mean)}
          sub={
            delta == null ? undefined : `${delta >= 0 ? "+" : ""}${formatWatts(delta)} above idle`
          }
        />
        <Figure label="Load time" value={formatSeconds(e.runtime_s)} />
        <Figure
          label="Energy (total)"
          value={formatEnergyPm(e.total_j, e.uncertainty_j)}
          testId="energy-total"
        />
        <Figure
          label="Energy above idle"
          value={formatEnergyPm(e.dynamic_j, e.dynamic_uncertainty_j)}
        />
        <Figure
          label="Energy per GB"
          value={formatJPerGb(e.j_per_gb)}
          sub={
            e.dynamic_j_per_gb == null
              ? undefined
              : `${formatJPerGb(e.dynamic_j_per_gb)} above idle`
          }
        />
        <Figure label={ops.perMio} value={ops.mio(e.j_per_mio)} testId="energy-per-mio" />
        <Figure label={ops.perWatt} value={ops.watt(e.iops_per_w)} testId="energy-per-watt" />
        <Figure label="MB/s per watt" value={formatMBpsPerWatt(e.mb_s_per_w)} />
        <Figure
          label="CO2 (operational)"
          value={formatCo2(e.operational_gco2e)}
          sub={e.dynamic_gco2e == null ? undefined : `${formatCo2(e.dynamic_gco2e)} above idle`}
          testId="energy-co2"
        />
        <Figure
          label="CO2 (embodied share)"
          value={formatCo2(e.embodied_gco2e)}
          sub={
            e.embodied_gco2e == null
              ? "device has no embodied figure"
              : "device's embodied carbon over its lifetime, for this run's time"
          }
        />
      </div>
      <p className="small" data-testid="energy-carbon-basis">
        Grid intensity {formatGridIntensity(e.grid_g_per_kwh)} ({e.grid_source ?? "no source"}
        {e.carbon_method ? `; ${METHOD[e.carbon_method] ?? e.carbon_method}` : ""}) · PUE{" "}
        {e.pue == null ? "—" : sig3(e.pue)}
        {e.embodied_source && <> · embodied: {e.embodied_source}</>}
      </p>
      {e.flags.length > 0 && (
        <ul className="energy-flags" data-testid="energy-flags">
          {e.flags.map((f) => (
            <li key={f} data-flag={f}>
              {flagText(f, e)}
            </li>
          ))}
        </ul>
      )}
      {dropped.length > 0 && (
        <p className="muted small" data-testid="energy-dropped">
          Samples cleaned before integration:{" "}
          {dropped
            .map(([k, n]) => `${n} ${k.replace(/^dropped_/, "").replace(/_/g, " ")}`)
            .join(", ")}
        </p>
      )}
      {e.phases.length > 0 && (
        <table className="table compact" data-testid="energy-phases">
          <thead>
            <tr>
              <th>Phase</th>
              <th className="num">Duration</th>
              <th className="num">Mean power</th>
              <th className="num">Energy</th>
              <th className="num">Samples</th>
              <th className="num">Coverage</th>
            </tr>
          </thead>
          <tbody>
            {e.phases.map((p) => (
              <tr key={p.name}>
                <td>{p.name.replace(/_/g, " ")}</td>
                <td className="num">{formatSeconds(p.duration_s)}</td>
                <td className="num">{formatWatts(p.mean_w)}</td>
                <td className="num">{formatEnergy(p.energy_j)}</td>
                <td className="num">{p.samples}</td>
                <td className="num">{formatPercent(p.coverage * 100)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <PowerChart runId={runId} energy={energy} series={series} />
    </section>
  );
}
