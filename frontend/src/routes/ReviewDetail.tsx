// One procurement review: its context and candidates, every computed figure, the
// ranking and what would flip it, the charts, the discussion and the decision that freezes it.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router-dom";
import { QueryState } from "../components/QueryState";
import { CandidateForm } from "../components/Review/CandidateForm";
import { ContextForm } from "../components/Review/ContextForm";
import {
  CandidatesTable,
  Discrepancies,
  FiguresTable,
  JobEnergy,
  MethodologyTable,
  RankingTable,
  SensitivityTable,
} from "../components/Review/Figures";
import { DecisionBanner, DecisionForm, Exports, ReviewComments } from "../components/Review/Panels";
import { CostPerformanceScatter, TcoBars } from "../components/Review/ReviewCharts";
import { money, plain } from "../components/Review/units";
import { ShareReviewButton } from "../components/Share/ShareReviewButton";
import { errorMessage } from "../lib/errors";
import { formatTimestamp, formatWhole } from "../lib/format";
import { atLeast, useRole } from "../lib/role";
import {
  type CandidateRead,
  type ReviewRead,
  removeCandidate,
  reviewKeys,
  reviewQuery,
} from "../queries/reviews";

function Context({ review }: { review: ReviewRead }) {
  return (
    <dl className="facts" data-testid="review-context">
      <dt>Question</dt>
      <dd>{review.question || "—"}</dd>
      <dt>Currency</dt>
      <dd>{review.currency}</dd>
      <dt>Horizon</dt>
      <dd>{plain(review.horizon_years, "years")}</dd>
      <dt>Duty cycle</dt>
      <dd>
        {plain(Number(review.duty_cycle) * 100, "%")} of {formatWhole(review.hours_per_year)} h/year
        under load
      </dd>
      <dt>Tariff</dt>
      <dd>
        {money(review.tariff_per_kwh, `${review.currency}/kWh`)}{" "}
        <small className="muted">({review.tariff_source})</small>
      </dd>
      <dt>Grid intensity</dt>
      <dd>
        {plain(review.grid_g_per_kwh, "gCO2e/kWh")}{" "}
        <small className="muted">({review.grid_source})</small>
      </dd>
      <dt>PUE</dt>
      <dd>{plain(review.pue)}</dd>
    </dl>
  );
}

function CandidateActions({
  review,
  c,
  onEdit,
}: {
  review: ReviewRead;
  c: CandidateRead;
  onEdit: (c: CandidateRead) => void;
}) {
  const qc = useQueryClient();
  const remove = useMutation({
    mutationFn: () => removeCandidate(review.id, c.id),
    onSuccess: () => qc.invalidateQueries({ queryKey: reviewKeys.all() }),
  });
  return (
    <>
      <button
        type="button"
        className="btn btn-ghost btn-small"
        onClick={() => onEdit(c)}
        data-testid="edit-candidate"
      >
        edit
      </button>
      <button
        type="button"
        className="btn btn-ghost btn-small"
        disabled={remove.isPending}
        onClick={() => {
          if (window.confirm(`Remove ${c.name} from the review?`)) remove.mutate();
        }}
        data-testid="remove-candidate"
      >
        remove
      </button>
      {remove.error && <small className="field-error">{errorMessage(remove.error)}</small>}
    </>
  );
}

export function ReviewDetail() {
  const { id = "" } = useParams();
  const q = useQuery(reviewQuery(id));
  const review = q.data;
  const role = useRole(review?.team_id ?? null);
  const [editing, setEditing] = useState(false);
  const [candidate, setCandidate] = useState<CandidateRead | "new" | null>(null);
  if (!review) return <QueryState isPending={q.isPending} error={q.error} />;
  const decided = review.decision !== null;
  const member = atLeast(role, "member");
  const mayEdit = member && !decided;
  const readOnlyWhy = decided
    ? "decided: frozen"
    : member
      ? null
      : "read only: your role in this team is viewer";
  return (
    <section data-testid="review-page">
      <div className="page-head">
        <h1>
          {review.name} <span className="muted small">v{review.version}</span>
        </h1>
        <div className="actions">
          <Exports review={review} />
          <ShareReviewButton review={review} />
          {mayEdit && (
            <button
              type="button"
              className="btn"
              onClick={() => setEditing(!editing)}
              data-testid="edit-review"
            >
              {editing ? "Close" : "Edit context"}
            </button>
          )}
        </div>
      </div>
      <p className="muted small">
        <Link to="/reviews">Reviews</Link> · created {formatTimestamp(review.created_at)}
        {review.parent_id && (
          <>
            {" "}
            · a new version of <Link to={`/reviews/${review.parent_id}`}>the previous one</Link>
          </>
        )}
        {readOnlyWhy && (
          <>
            {" "}
            · <span data-testid="read-only">{readOnlyWhy}</span>
          </>
        )}
      </p>
      <DecisionBanner review={review} mayVersion={member} />
      {editing && mayEdit ? (
        <ContextForm teamId={review.team_id} review={review} onDone={() => setEditing(false)} />
      ) : (
        <Context review={review} />
      )}

      <div className="page-head">
        <h2>Candidates ({review.candidates.length})</h2>
        {mayEdit && (
          <div className="actions">
            <button
              type="button"
              className="btn btn-primary"
              onClick={() => setCandidate(candidate === "new" ? null : "new")}
              data-testid="add-candidate"
            >
              {candidate === "new" ? "Close" : "Add candidate"}
            </button>
          </div>
        )}
      </div>
      {mayEdit && candidate !== null && (
        <CandidateForm
          key={candidate === "new" ? "new" : candidate.id}
          reviewId={review.id}
          teamId={review.team_id}
          candidate={candidate === "new" ? undefined : candidate}
          onDone={() => setCandidate(null)}
        />
      )}
      {review.candidates.length === 0 ? (
        <p className="muted">No candidates yet.</p>
      ) : (
        <>
          <CandidatesTable
            review={review}
            actions={
              mayEdit
                ? (c) => <CandidateActions review={review} c={c} onEdit={setCandidate} />
                : undefined
            }
          />
          <Discrepancies review={review} />
          <h2>Ranking</h2>
          <p className="muted small">{review.normalisation}</p>
          <RankingTable review={review} />
          {!decided && atLeast(role, "admin") && <DecisionForm review={review} />}
          {!decided && !atLeast(role, "admin") && (
            <p className="muted small" data-testid="decide-note">
              Not decided yet: an admin of the team decides, which freezes the review.
            </p>
          )}
          <h2>Figures</h2>
          <p className="muted small">
            Money in {review.currency} exactly as computed (totals to the minor unit, rates to 4
            places); GB = 10^9 bytes; a year = {formatWhole(review.hours_per_year)} h.
          </p>
          <FiguresTable review={review} />
          <div className="chart-grid review-charts">
            <CostPerformanceScatter review={review} />
            <TcoBars review={review} />
          </div>
          <h2>Sensitivity</h2>
          <p className="muted small">
            One change at a time over the range shown: where another candidate would lead.
          </p>
          <SensitivityTable review={review} />
          <JobEnergy review={review} />
        </>
      )}
      <ReviewComments reviewId={review.id} mayComment={member} />
      <details className="card" data-testid="methodology">
        <summary>Methodology (every formula and its source)</summary>
        <MethodologyTable review={review} />
      </details>
    </section>
  );
}
