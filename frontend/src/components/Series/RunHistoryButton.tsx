import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link, useNavigate } from "react-router-dom";
import type { RunRead } from "../../client/types";
import { errorMessage } from "../../lib/errors";
import { useCan } from "../../lib/role";
import { keys } from "../../queries/keys";
import { createSeries, seriesListQuery } from "../../queries/series";

/** A finished run's place in its series' history: a link to the history with the run picked, or,
 * for a run that is in none (stored before series existed), "Track over time", which makes its
 * series with the earlier runs of the same workload, target and environment. */
export function RunHistoryButton({ run }: { run: RunRead }) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const can = useCan();
  const done = run.status === "succeeded";
  const q = useQuery({ ...seriesListQuery({ run_id: run.id }), enabled: done });
  const track = useMutation({
    mutationFn: () => createSeries({ run_id: run.id }),
    onSuccess: (s) => {
      qc.invalidateQueries({ queryKey: keys.series.all() });
      navigate(`/series/${s.id}?run=${run.id}`);
    },
  });
  if (!done || !q.data) return null;
  const found = q.data.items[0];
  if (found)
    return (
      <Link
        className="btn btn-small"
        to={`/series/${found.id}?run=${run.id}`}
        title={`${found.name}: ${found.run_count} runs`}
        data-testid="run-history"
      >
        History
      </Link>
    );
  if (!can("series.edit", run.team_id)) return null;
  return (
    <>
      <button
        type="button"
        className="btn btn-small"
        onClick={() => track.mutate()}
        disabled={track.isPending}
        title="make this run's series: the earlier runs of the same workload, target and environment join it"
        data-testid="track-run"
      >
        {track.isPending ? "Tracking…" : "Track over time"}
      </button>
      {track.error && <span className="field-error small">{errorMessage(track.error)}</span>}
    </>
  );
}
