// A procurement review as a share link shows it (/s/:token, no login): the state (decided, with
// who chose what, when and why; or "not decided yet"), the ranking, the two charts, every figure,
// the sensitivity, where each input comes from and the methodology. Read-only: the review page's
// own tables and charts (components/Review; the candidates table with `readOnly`) with nothing
// that edits, comments, decides, exports through the team's API or links into the app — the
// page's only API calls stay /api/v1/shared/<token>[/export.*].
import type { ReviewRead } from "../../queries/reviews";
import type { SharedView } from "../../queries/sharing";
import {
  CandidatesTable,
  Discrepancies,
  FiguresTable,
  JobEnergy,
  MethodologyTable,
  RankingTable,
  SensitivityTable,
} from "../Review/Figures";
import { CostPerformanceScatter, TcoBars } from "../Review/ReviewCharts";
import { fractionPct, plain } from "../Review/units";

export type SharedReviewData = NonNullable<SharedView["review"]>;

/** The shared review in the shape of the team's review answer, for V2's read-only components:
 * the ids a link never carries (team, environment, users, parent) are empty. */
export function asReviewRead(r: SharedReviewData): ReviewRead {
  return {
    ...r,
    team_id: "",
    environment_id: null,
    created_by: null,
    parent_id: null,
    decision: r.decision ? { ...r.decision, decided_by: null } : null,
  };
}

function day(iso: string): string {
  return new Date(iso).toLocaleDateString(undefined, {
    year: "numeric",
    month: "long",
    day: "numeric",
    timeZone: "UTC",
  });
}

/** Decided (frozen figures, the decision) or not decided yet (figures as of now). */
export function ReviewState({ review }: { review: SharedReviewData }) {
  const d = review.decision;
  if (!d) {
    return (
      <div className="alert alert-warn" data-testid="shared-review-state">
        <strong>Not decided yet.</strong> These figures are computed now from the review's current
        inputs and measured runs; they can change until the team decides, when they are frozen.
      </div>
    );
  }
  return (
    <div className="alert alert-info" data-testid="shared-review-state">
      <p>
        <strong data-testid="shared-review-decision">Decided: {d.candidate_name}</strong> — by{" "}
        {d.decided_by_name} on {day(d.decided_at)}
      </p>
      <p data-testid="shared-review-reason">{d.reason}</p>
      <p className="small muted">
        The figures below are the ones it was decided on, frozen at the decision (later versions of
        the review and re-measured runs do not change them).
      </p>
    </div>
  );
}

export function SharedReview({ review }: { review: SharedReviewData | null }) {
  if (!review) {
    return (
      <div className="alert alert-info" data-testid="shared-empty">
        The review of this link was deleted.
      </div>
    );
  }
  const r = asReviewRead(review);
  return (
    <div data-testid="shared-review">
      <ReviewState review={review} />
      <p className="muted small" data-testid="shared-review-context">
        Version {review.version} · {review.currency} · {plain(review.horizon_years)} years ·{" "}
        {fractionPct(review.duty_cycle)} of the hours under load · tariff{" "}
        {plain(review.tariff_per_kwh)} {review.currency}/kWh ({review.tariff_source}) · grid{" "}
        {plain(review.grid_g_per_kwh)} gCO2e/kWh ({review.grid_source}) · PUE {plain(review.pue)} ·
        GB = 10^9 bytes · <a href="#methodology">Methodology</a>
      </p>
      {review.question && (
        <p className="review-question" data-testid="shared-review-question">
          {review.question}
        </p>
      )}
      <h2>Ranking</h2>
      <div className="card">
        <RankingTable review={r} />
        <p className="muted small">{review.normalisation}</p>
      </div>
      {review.candidates.length > 0 && (
        <div className="chart-grid review-charts">
          <div className="card">
            <CostPerformanceScatter review={r} />
          </div>
          <div className="card">
            <TcoBars review={r} />
          </div>
        </div>
      )}
      <h2>Figures</h2>
      <Discrepancies review={r} />
      <div className="card">
        <FiguresTable review={r} />
      </div>
      <h2>Sensitivity</h2>
      <div className="card">
        <SensitivityTable review={r} />
      </div>
      <JobEnergy review={r} />
      <h2>Candidates and sources</h2>
      <div className="card">
        <CandidatesTable review={r} readOnly testId="shared-review-sources" />
      </div>
      <section className="card" id="methodology" data-testid="shared-review-methodology">
        <h2>Methodology</h2>
        <p className="muted small">
          Every figure above comes from one of these formulas ({review.hours_per_year} h a year; GB
          = 10^9 bytes; money rounded once, to the currency's minor unit).
        </p>
        <MethodologyTable review={r} />
      </section>
    </div>
  );
}
