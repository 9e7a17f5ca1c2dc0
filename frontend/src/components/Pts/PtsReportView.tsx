import {
  CartesianGrid,
  ComposedChart,
  Line,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { formatBytes, formatIops, formatNs, formatThroughput, sig3 } from "../../lib/format";
import { complianceName } from "../../lib/pts";
import { niceTicks } from "../charts/axis";
import { MultiLineChart } from "../charts/MultiLineChart";
import {
  averagesLabel,
  bsLabel,
  convergenceSeries,
  heat,
  hirRows,
  hirSeries,
  hirTimeAxis,
  matrixOf,
  mixLabel,
  type PtsElement,
  type PtsReport,
  stopText,
  verdictText,
  type WsatPoint,
  windowRows,
  wsatPoints,
  wsatTimeAxis,
} from "./pts";
import "./pts.css";

const METRIC: Record<
  PtsReport["metric"],
  { label: string; unit: string; format: (v: number) => string }
> = {
  iops: { label: "IOPS", unit: "IOPS", format: (v) => formatIops(v) },
  bw_bytes: { label: "Throughput", unit: "MB/s", format: (v) => formatThroughput(v) },
  lat_mean_ns: { label: "Average latency", unit: "µs", format: (v) => formatNs(v) },
};

/** Display value of the metric on a chart axis (MB/s and µs: the axis' unit). */
function axisValue(metric: PtsReport["metric"], v: number): number {
  if (metric === "bw_bytes") return v / 1e6;
  if (metric === "lat_mean_ns") return v / 1e3;
  return v;
}

export function PtsVerdictBanner({ report }: { report: PtsReport }) {
  const v = report.verdict;
  const steady = !v.steady_state_applies || v.steady_state_reached;
  const stopped = stopText(report);
  return (
    <div className="pts-verdict" data-testid="pts-verdict">
      <span
        className={`badge ${steady ? "badge-succeeded" : "badge-failed"}`}
        data-testid="pts-steady"
      >
        {verdictText(v)}
      </span>{" "}
      <span
        className={`badge ${v.compliant ? "badge-succeeded" : "validity"}`}
        data-testid="pts-compliance"
        title={v.deviations.join("; ")}
      >
        {v.compliant ? complianceName(v.profile) : `not ${complianceName(v.profile)}`}
      </span>
      {!v.compliant && (
        <ul className="pts-deviations" data-testid="pts-deviations">
          {v.deviations.map((d) => (
            <li key={d}>{d}</li>
          ))}
        </ul>
      )}
      <dl className="pts-facts">
        {stopped != null && (
          <>
            <dt>Stopped by</dt>
            <dd data-testid="pts-stop">{stopped}</dd>
          </>
        )}
        <dt>Specification</dt>
        <dd>{report.spec}</dd>
        <dt>Profile</dt>
        <dd data-testid="pts-report-profile">{v.profile === "client" ? "Client" : "Enterprise"}</dd>
        <dt>Purge</dt>
        <dd data-testid="pts-purge">
          {report.purge.method} ({report.purge.note})
        </dd>
        <dt>Preconditioning</dt>
        <dd data-testid="pts-wipc">
          {report.preconditioning_applies ? (
            <>
              {formatBytes(report.preconditioning_bytes)} of SEQ 128 KiB writes (
              {formatThroughput(report.preconditioning_bw_bytes)})
            </>
          ) : (
            "none: the test starts from the purged state (its own RND 4 KiB writes precondition)"
          )}
        </dd>
        <dt>Tested region</dt>
        <dd>
          {formatBytes(report.region_bytes)} of {formatBytes(report.capacity_bytes)}
        </dd>
        <dt>Stimulus</dt>
        <dd>
          T{report.threads} Q{report.iodepth}, {report.round_s} s per element per round
          {report.hir
            ? `; bursts of ${report.hir.burst_s} s, ${report.hir.bursts} per wait state`
            : ""}
        </dd>
        <dt>Written in all</dt>
        <dd>{formatBytes(report.bytes_written)}</dd>
      </dl>
    </div>
  );
}

export function ConvergencePlot({ report }: { report: PtsReport }) {
  const m = METRIC[report.metric];
  const series = convergenceSeries(report).map((s) => ({
    ...s,
    points: s.points.map((p) => ({ x: p.x, y: axisValue(report.metric, p.y) })),
  }));
  return (
    <section className="card" data-testid="pts-convergence">
      <h3>Steady-state convergence</h3>
      <p className="muted">
        {m.label} of each element in every round (preconditioning rounds and the measurement
        window); the tracking variable is {report.tracking_element}.
      </p>
      <MultiLineChart
        series={series}
        x={{ label: "Round", unit: "" }}
        y={{ label: m.label, unit: m.unit }}
        height={300}
      />
    </section>
  );
}

export function WindowPlot({ report }: { report: PtsReport }) {
  const w = report.window;
  const m = METRIC[report.metric];
  if (!w) {
    return (
      <section className="card" data-testid="pts-window">
        <h3>Measurement window</h3>
        <p className="muted">Fewer than five rounds ran: there is no window.</p>
      </section>
    );
  }
  const rows = windowRows(w).map((r) => {
    const out: Record<string, number> = { round: r.round };
    for (const [k, v] of Object.entries(r)) if (k !== "round") out[k] = axisValue(report.metric, v);
    return out;
  });
  const pct = (x: number) => (w.average > 0 ? `${sig3((100 * x) / w.average)} %` : "—");
  return (
    <section className="card" data-testid="pts-window">
      <h3>
        Measurement window: rounds {w.first_round}–{w.last_round}
      </h3>
      <div style={{ width: "100%", height: 280 }}>
        <ResponsiveContainer>
          <ComposedChart data={rows} margin={{ top: 8, right: 24, bottom: 8, left: 16 }}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis
              dataKey="round"
              type="number"
              domain={["dataMin", "dataMax"]}
              allowDecimals={false}
            />
            <YAxis
              tickFormatter={(v: number) => sig3(v)}
              label={{ value: m.unit, angle: -90, position: "insideLeft" }}
            />
            <Tooltip formatter={(v) => sig3(Number(v))} />
            <Line
              dataKey="value"
              name={m.label}
              stroke="#1f6feb"
              strokeWidth={2}
              isAnimationActive={false}
            />
            <Line
              dataKey="fitted"
              name="least-squares fit"
              stroke="#d1242f"
              dot={false}
              isAnimationActive={false}
            />
            <Line
              dataKey="average"
              name="average"
              stroke="#555"
              strokeDasharray="2 2"
              dot={false}
              isAnimationActive={false}
            />
            <Line
              dataKey="dataHigh"
              name="110 % of average"
              stroke="#9a6700"
              strokeDasharray="1 3"
              dot={false}
              isAnimationActive={false}
            />
            <Line
              dataKey="dataLow"
              name="90 % of average"
              stroke="#9a6700"
              strokeDasharray="1 3"
              dot={false}
              isAnimationActive={false}
            />
            <Line
              dataKey="slopeHigh"
              name="105 % of average"
              stroke="#8250df"
              strokeDasharray="6 3"
              dot={false}
              isAnimationActive={false}
            />
            <Line
              dataKey="slopeLow"
              name="95 % of average"
              stroke="#8250df"
              strokeDasharray="6 3"
              dot={false}
              isAnimationActive={false}
            />
          </ComposedChart>
        </ResponsiveContainer>
      </div>
      <table className="table pts-window-table" data-testid="pts-window-table">
        <tbody>
          <tr>
            <th>Average</th>
            <td>{m.format(w.average)}</td>
            <td />
          </tr>
          <tr>
            <th>Data excursion (max − min)</th>
            <td>
              {m.format(w.data_excursion)} = {pct(w.data_excursion)} (limit 20 %)
            </td>
            <td>{w.data_ok ? "within" : "exceeded"}</td>
          </tr>
          <tr>
            <th>Slope excursion (fit's change across the window)</th>
            <td>
              {m.format(w.slope_excursion)} = {pct(w.slope_excursion)} (limit 10 %)
            </td>
            <td>{w.slope_ok ? "within" : "exceeded"}</td>
          </tr>
        </tbody>
      </table>
    </section>
  );
}

function MatrixTable({
  elements,
  value,
  format,
  title,
  testId,
  heatmap,
}: {
  elements: PtsElement[];
  value: (e: PtsElement) => number | null;
  format: (v: number) => string;
  title: string;
  testId: string;
  heatmap?: boolean;
}) {
  const mt = matrixOf(elements, value);
  const all = mt.cells.flat();
  return (
    <section className="card" data-testid={testId}>
      <h3>{title}</h3>
      <table className="table pts-matrix">
        <thead>
          <tr>
            <th>Block size</th>
            {mt.mixes.map((m) => (
              <th key={m}>R/W {mixLabel(m)}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {mt.sizes.map((bs, i) => (
            <tr key={bs}>
              <th>{bsLabel(bs)}</th>
              {mt.cells[i]?.map((v, j) => {
                const h = heatmap ? heat(v, all) : null;
                return (
                  <td
                    key={mt.mixes[j]}
                    className="num"
                    style={
                      h == null
                        ? undefined
                        : {
                            background: `hsl(212 80% ${92 - 45 * h}%)`,
                            color: h > 0.6 ? "#fff" : undefined,
                          }
                    }
                  >
                    {v == null ? "—" : format(v)}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Write Saturation's two plots: IOPS over minutes of stimulus and over total GB written. */
export function WsatPlots({ report }: { report: PtsReport }) {
  const points = wsatPoints(report);
  const time = wsatTimeAxis(points);
  const axis = (xs: number[]) => niceTicks(0, Math.max(0, ...xs), 6);
  const line = (x: (p: WsatPoint) => number) => [
    {
      key: "wsat",
      label: "RND 4 KiB 0/100 IOPS",
      points: points.map((p) => ({ x: x(p), y: p.iops })),
    },
  ];
  const written = report.rounds.at(-1)?.bytes_written ?? 0;
  const seconds = (p: WsatPoint) => p.seconds / time.divisor;
  const gb = (p: WsatPoint) => p.gb;
  return (
    <div className="pts-charts" data-testid="pts-wsat">
      <section className="card" data-testid="pts-wsat-time">
        <h3>Write Saturation: IOPS over time</h3>
        <p className="muted">
          Each round's IOPS at the end of its stimulus ({report.rounds.length} rounds of{" "}
          {report.round_s} s).
        </p>
        <MultiLineChart
          series={line(seconds)}
          x={{ label: "Time", unit: time.unit, ticks: axis(points.map(seconds)) }}
          y={{ label: "IOPS", unit: "IOPS" }}
          height={280}
          legend={false}
        />
      </section>
      <section className="card" data-testid="pts-wsat-gb">
        <h3>Write Saturation: IOPS over total GB written</h3>
        <p className="muted">
          Each round's IOPS at the bytes the rounds had written by its end ({formatBytes(written)}{" "}
          in all, {sig3(written / Math.max(1, report.region_bytes))} × the tested region; the
          preconditioning not counted).
        </p>
        <MultiLineChart
          series={line(gb)}
          x={{ label: "Total written", unit: "GB", ticks: axis(points.map(gb)) }}
          y={{ label: "IOPS", unit: "IOPS" }}
          height={280}
          legend={false}
        />
      </section>
    </div>
  );
}

/** Host Idle Recovery: IOPS per burst over time, the wait states told apart, and each wait
 * state's average beside its return to baseline and the preconditioning's steady state. */
export function HirPlot({ report }: { report: PtsReport }) {
  const h = report.hir;
  if (!h) return null;
  const time = hirTimeAxis(h);
  const series = hirSeries(h);
  const xs = series.flatMap((s) => s.points.map((p) => p.x));
  const rows = hirRows(h);
  return (
    <div className="pts-charts" data-testid="pts-hir">
      <section className="card" data-testid="pts-hir-time">
        <h3>Host Idle Recovery: IOPS per burst over time</h3>
        <p className="muted">
          Each burst's RND 4 KiB write IOPS ({h.burst_s} s at T{report.threads} Q{report.iodepth})
          at the time it started, from the first burst; a wait state N idles N bursts' length after
          each of its {h.bursts} bursts, and its return to baseline (dashed) writes as long without
          idle.
        </p>
        <MultiLineChart
          series={series}
          x={{ label: "Time", unit: time.unit, ticks: niceTicks(0, Math.max(0, ...xs), 6) }}
          y={{ label: "IOPS", unit: "IOPS" }}
          height={300}
        />
      </section>
      <section className="card" data-testid="pts-hir-table">
        <h3>Host Idle Recovery: average IOPS by wait state</h3>
        <table className="table">
          <thead>
            <tr>
              <th>Wait state</th>
              <th>Host idle after each burst</th>
              <th>IOPS (bursts' average)</th>
              <th>Return to baseline</th>
              <th>× the steady state</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.waitState}>
                <td>WS{r.waitState}</td>
                <td className="num">{sig3(r.idleS)} s</td>
                <td className="num">{formatIops(r.iops)}</td>
                <td className="num">{r.baselineIops == null ? "—" : formatIops(r.baselineIops)}</td>
                <td className="num">{r.ratio == null ? "—" : `${sig3(r.ratio)} ×`}</td>
              </tr>
            ))}
          </tbody>
        </table>
        <p className="muted">
          The steady state: the preconditioning's measurement window,{" "}
          {h.preconditioned_iops == null
            ? "none (fewer than five rounds)"
            : formatIops(h.preconditioned_iops)}
          .
        </p>
      </section>
    </div>
  );
}

const PCTS = ["99", "99.9", "99.99", "99.999"];

function LatencyTable({ elements, over }: { elements: PtsElement[]; over: string }) {
  // `over`: what the figures average (averagesLabel): the window, or Write Saturation's last rounds
  const maximum =
    over === "window averages" ? "maximum over the window" : "maximum over those rounds";
  return (
    <section className="card" data-testid="pts-latency">
      <h3>
        Latency ({over}; {maximum})
      </h3>
      <table className="table">
        <thead>
          <tr>
            <th>Block size</th>
            <th>R/W</th>
            <th>Average</th>
            <th>Maximum</th>
            {PCTS.map((p) => (
              <th key={p}>p{p}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {elements.map((e) => (
            <tr key={e.name}>
              <td>{bsLabel(e.bs_bytes)}</td>
              <td>{mixLabel(e.read_pct)}</td>
              <td className="num">{formatNs(e.lat_mean_ns)}</td>
              <td className="num">{formatNs(e.lat_max_ns)}</td>
              {PCTS.map((p) => {
                const worst = Math.max(
                  e.read_percentiles_ns[p] ?? 0,
                  e.write_percentiles_ns[p] ?? 0,
                );
                return (
                  <td key={p} className="num">
                    {worst > 0 ? formatNs(worst) : "—"}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** The specification's report pages as one view: verdict, convergence, window, and the test's
 * tables (IOPS with its heat map, throughput, latency). */
export function PtsReportView({ report }: { report: PtsReport }) {
  const test = report.verdict.test;
  return (
    <div className="pts-report" data-testid="pts-report">
      <PtsVerdictBanner report={report} />
      {test === "wsat" && <WsatPlots report={report} />}
      {test === "hir" && <HirPlot report={report} />}
      {report.verdict.steady_state_applies && (
        // Write Saturation has no steady-state convergence or window: its two plots show it
        <div className="pts-charts">
          <ConvergencePlot report={report} />
          <WindowPlot report={report} />
        </div>
      )}
      {(test === "iops" || test === "wsat") && (
        <MatrixTable
          elements={report.elements}
          value={(e) => e.iops}
          format={(v) => formatIops(v)}
          title={`IOPS by block size and R/W mix (${averagesLabel(report)}), as a heat map`}
          testId="pts-iops"
          heatmap
        />
      )}
      <MatrixTable
        elements={report.elements}
        value={(e) => e.bw_bytes}
        format={(v) => formatThroughput(v)}
        title={`Throughput by block size and R/W mix (${averagesLabel(report)})`}
        testId="pts-throughput"
      />
      <LatencyTable elements={report.elements} over={averagesLabel(report)} />
    </div>
  );
}
