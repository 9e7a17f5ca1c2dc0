// Procurement reviews of the team: the list, and a new review's context form.
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { QueryState } from "../components/QueryState";
import { ContextForm } from "../components/Review/ContextForm";
import { TeamChip } from "../components/Team/TeamChip";
import { formatRelative, formatTimestamp } from "../lib/format";
import { atLeast, useCurrentTeam, useListTeam } from "../lib/role";
import { reviewsQuery } from "../queries/reviews";

export function Reviews() {
  const list = useListTeam();
  const { team } = useCurrentTeam();
  const navigate = useNavigate();
  const q = useQuery({ ...reviewsQuery(list.teamId), enabled: list.ready });
  const [open, setOpen] = useState(false);
  const mayCreate = atLeast(team?.role, "member");
  return (
    <section data-testid="reviews-page">
      <div className="page-head">
        <h1>Reviews</h1>
        {mayCreate && (
          <div className="actions">
            <button
              type="button"
              className="btn btn-primary"
              onClick={() => setOpen(!open)}
              data-testid="new-review"
            >
              {open ? "Close" : "New review"}
            </button>
          </div>
        )}
      </div>
      <p className="muted small">
        A procurement review weighs candidate devices and configurations by cost, performance,
        energy and carbon over their life, ranks them and records the decision.
      </p>
      {open && team && mayCreate && (
        <ContextForm teamId={team.id} onDone={(r) => navigate(`/reviews/${r.id}`)} />
      )}
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && <p className="muted">No reviews yet.</p>}
      {q.data && q.data.items.length > 0 && (
        <table className="table" data-testid="reviews-table">
          <thead>
            <tr>
              <th>Review</th>
              <th>Version</th>
              <th>Candidates</th>
              <th>Currency</th>
              <th>State</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {q.data.items.map((r) => (
              <tr key={r.id} data-testid="review-row">
                <td>
                  <Link to={`/reviews/${r.id}`}>{r.name}</Link>
                  <TeamChip teamId={r.team_id} />
                </td>
                <td>
                  v{r.version}
                  {r.parent_id && (
                    <>
                      {" "}
                      <Link className="small" to={`/reviews/${r.parent_id}`}>
                        (from an earlier version)
                      </Link>
                    </>
                  )}
                </td>
                <td>{r.candidates}</td>
                <td>{r.currency}</td>
                <td>
                  {r.decided_at ? (
                    <span className="badge badge-succeeded" title={formatTimestamp(r.decided_at)}>
                      decided {formatRelative(r.decided_at)}
                    </span>
                  ) : (
                    <span className="badge badge-queued">open</span>
                  )}
                </td>
                <td title={formatTimestamp(r.created_at)}>{formatRelative(r.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
