import { memo, useMemo } from "react";
import type { components } from "../../client/schema";
import type { RunRead, SeriesPoint } from "../../client/types";
import { formatIops, formatNs, formatSeconds, formatThroughput } from "../../lib/format";
import { ProgressBar } from "./ProgressBar";
import { runProgress } from "./progress";
import { ThroughputChart } from "./ThroughputChart";

type Sample = components["schemas"]["ProgressSample"];

/** The engine's progress reports as chart points (no latency in a progress report). */
export function samplePoints(samples: Sample[]): SeriesPoint[] {
  return samples.map((s) => ({
    t_s: s.t_s,
    read_iops: s.read_iops,
    read_bw_bytes: s.read_bw_bytes,
    write_iops: s.write_iops,
    write_bw_bytes: s.write_bw_bytes,
    read_clat_p99_ns: null,
    write_clat_p99_ns: null,
  }));
}

/** One bar for the whole run with its phase and time left, the current rates, and a live
 * per-second chart of the engine's reports (seconds since the run started). */
export function LiveProgress({ run }: { run: RunRead }) {
  const view = runProgress(run);
  const p = run.progress;
  if (!view || !p) return null;
  const eta =
    view.etaS == null
      ? "time left unknown"
      : `about ${view.etaAtLeast ? "at least " : ""}${formatSeconds(Math.round(view.etaS))} left`;
  return (
    <div className="card" data-testid="live-progress">
      <div className="progress-head">
        <span data-testid="run-phase">
          <strong>{view.label}</strong>
        </span>
        <span className="muted small" data-testid="run-eta">
          {eta}
          {view.phase === "job" && (
            <>
              {" "}
              · now {formatThroughput(p.read_bw_bytes + p.write_bw_bytes)} ·{" "}
              {formatIops(p.read_iops + p.write_iops)} · job elapsed {formatNs(p.elapsed_ns)}
            </>
          )}
        </span>
      </div>
      <ProgressBar percent={view.percent} label="the run's progress" />
      <LiveChart samples={p.samples} />
    </div>
  );
}

/** The live chart, drawn again only when the engine's reports are new ones: not at a poll that
 * moved only the bar, the phase or the time left (the idle baselines, whose ticks carry no rates). */
const LiveChart = memo(function LiveChart({ samples }: { samples: Sample[] | undefined }) {
  const points = useMemo(() => samplePoints(samples ?? []), [samples]);
  if (points.length < 2) return null;
  return (
    <div className="chart" data-testid="run-chart-live">
      <p className="small muted">
        Live: throughput and IOPS of the engine's last {points.length} reports, about one a second;
        time since the run started
      </p>
      <ThroughputChart points={points} />
    </div>
  );
});
