import { Fragment } from "react";
import type { RunSeries } from "../../client/types";
import { runThroughputTimeline } from "../../lib/series";
import { type PageCache, pageCacheFacts, writebackRows } from "../../lib/writeback";
import { WritebackChart } from "../charts/WritebackChart";

/**
 * A run's page cache and write-back (issue 29, seed 004): the kernel's settings and the target
 * device's queue when it started, and for buffered I/O Dirty and Writeback each second beside
 * throughput, with the limits drawn. Nothing when the run's agent recorded none (older agents,
 * imports).
 */
export function PageCachePanel({
  pageCache,
  series,
}: {
  pageCache: PageCache | null | undefined;
  series: RunSeries | undefined;
}) {
  const memory = series?.memory;
  if (!pageCache && !memory) return null;
  return (
    <div className="card" data-testid="page-cache">
      <h2>Page cache and write-back</h2>
      {pageCache && (
        <dl className="facts" data-testid="page-cache-facts">
          {pageCacheFacts(pageCache).map(([label, value, source]) => (
            <Fragment key={label}>
              <dt>{label}</dt>
              <dd>
                {value} <span className="muted small mono">{source}</span>
              </dd>
            </Fragment>
          ))}
        </dl>
      )}
      {memory && memory.points.length > 0 ? (
        <div className="chart" data-testid="writeback-chart">
          <WritebackChart rows={writebackRows(memory, runThroughputTimeline(series?.jobs ?? []))} />
          <p className="muted small">
            /proc/meminfo each second while the engine ran; the limits are the kernel's own
            (/proc/vmstat nr_dirty_threshold, nr_dirty_background_threshold). Throughput's time is
            its jobs' measured time, one after another: a file's layout before a job shifts it.
            {memory.truncated && " Sampling stopped at the agent's limit."}
          </p>
        </div>
      ) : (
        pageCache &&
        !pageCache.sampled && (
          <p className="muted small">Direct I/O only: the page cache was not sampled.</p>
        )
      )}
    </div>
  );
}
