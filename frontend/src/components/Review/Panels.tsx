// The decision (chosen candidate and why; admins), the frozen state with its "New version",
// the discussion, and the exports (PDF printed by the server, CSV one row per candidate).
import { useInfiniteQuery, useMutation, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { useNavigate } from "react-router-dom";
import { saveBlob } from "../../lib/download";
import { errorMessage } from "../../lib/errors";
import { formatRelative, formatTimestamp, formatWhole } from "../../lib/format";
import {
  addReviewComment,
  decideReview,
  newReviewVersion,
  type ReviewRead,
  reviewCommentsQuery,
  reviewCsv,
  reviewKeys,
  reviewPdf,
} from "../../queries/reviews";

function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, "") || "review"
  );
}

export function Exports({ review }: { review: ReviewRead }) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<"pdf" | "csv" | null>(null);
  const base = `${slug(review.name)}-v${review.version}`;
  const run = async (what: "pdf" | "csv") => {
    setError(null);
    setBusy(what);
    try {
      if (what === "pdf") saveBlob(await reviewPdf(review.id), `${base}.pdf`);
      else saveBlob(new Blob([await reviewCsv(review.id)], { type: "text/csv" }), `${base}.csv`);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(null);
    }
  };
  return (
    <>
      <button
        type="button"
        className="btn"
        onClick={() => run("pdf")}
        disabled={busy !== null}
        data-testid="export-pdf"
      >
        {busy === "pdf" ? "Printing…" : "Export PDF"}
      </button>
      <button
        type="button"
        className="btn"
        onClick={() => run("csv")}
        disabled={busy !== null}
        data-testid="export-csv"
      >
        Export CSV
      </button>
      {error && (
        <span className="field-error" role="alert" data-testid="export-error">
          {error}
        </span>
      )}
    </>
  );
}

/** A decided review: who chose what, when and why; frozen, with a new version to change it. */
export function DecisionBanner({
  review,
  mayVersion,
}: {
  review: ReviewRead;
  mayVersion: boolean;
}) {
  const qc = useQueryClient();
  const navigate = useNavigate();
  const version = useMutation({
    mutationFn: () => newReviewVersion(review.id),
    onSuccess: (r) => {
      qc.invalidateQueries({ queryKey: reviewKeys.all() });
      navigate(`/reviews/${r.id}`);
    },
  });
  const d = review.decision;
  if (!d) return null;
  return (
    <div className="alert alert-info" data-testid="decision">
      <p>
        <strong>Decided: {d.candidate_name}</strong> — by {d.decided_by_name},{" "}
        <span title={formatTimestamp(d.decided_at)}>{formatRelative(d.decided_at)}</span>
      </p>
      <p data-testid="decision-reason">{d.reason}</p>
      <p className="small" data-testid="frozen-note">
        This review is frozen: its figures are the ones it was decided on, and it cannot be edited.
        To change anything, start a new version (same context and candidates, undecided).
      </p>
      {mayVersion && (
        <button
          type="button"
          className="btn btn-primary"
          onClick={() => version.mutate()}
          disabled={version.isPending}
          data-testid="new-version"
        >
          {version.isPending ? "Copying…" : "New version"}
        </button>
      )}
      {version.error && <p className="field-error">{errorMessage(version.error)}</p>}
    </div>
  );
}

/** Admins choose a candidate and say why; that freezes the review. */
export function DecisionForm({ review }: { review: ReviewRead }) {
  const qc = useQueryClient();
  const [candidate, setCandidate] = useState(review.leader ?? review.candidates[0]?.id ?? "");
  const [reason, setReason] = useState("");
  const decide = useMutation({
    mutationFn: () => decideReview(review.id, { candidate_id: candidate, reason: reason.trim() }),
    onSuccess: (r) => {
      qc.setQueryData(reviewKeys.detail(review.id), r);
      qc.invalidateQueries({ queryKey: reviewKeys.all() });
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    decide.mutate();
  };
  if (review.candidates.length === 0) return null;
  return (
    <form className="card form" onSubmit={submit} data-testid="decision-form">
      <h3>Decide</h3>
      <p className="muted small">
        Deciding freezes the review: later changes need a new version; this one stays readable.
      </p>
      <div className="form-grid">
        <label className="field" htmlFor="f-decision-candidate">
          <span>Chosen candidate</span>
          <select
            id="f-decision-candidate"
            value={candidate}
            onChange={(e) => setCandidate(e.target.value)}
          >
            {review.ranking.map((r) => (
              <option key={r.candidate_id} value={r.candidate_id}>
                {r.rank}. {r.name}
              </option>
            ))}
          </select>
        </label>
        <label className="field span-2" htmlFor="f-decision-reason">
          <span>Why</span>
          <textarea
            id="f-decision-reason"
            rows={2}
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
        </label>
      </div>
      {decide.error && (
        <div className="alert alert-error" role="alert">
          {errorMessage(decide.error)}
        </div>
      )}
      <div className="actions">
        <button
          type="submit"
          className="btn btn-primary"
          disabled={decide.isPending || reason.trim() === "" || candidate === ""}
          data-testid="decide"
        >
          {decide.isPending ? "Deciding…" : "Decide and freeze"}
        </button>
      </div>
    </form>
  );
}

export function ReviewComments({
  reviewId,
  mayComment,
}: {
  reviewId: string;
  mayComment: boolean;
}) {
  const qc = useQueryClient();
  const q = useInfiniteQuery(reviewCommentsQuery(reviewId));
  const comments = q.data?.pages.flatMap((p) => p.items);
  const total = q.data?.pages.at(-1)?.total ?? 0;
  const [body, setBody] = useState("");
  const add = useMutation({
    mutationFn: () => addReviewComment(reviewId, body.trim()),
    onSuccess: () => {
      setBody("");
      qc.invalidateQueries({ queryKey: reviewKeys.comments(reviewId) });
    },
  });
  return (
    <section className="card" data-testid="review-comments">
      <h3>Discussion</h3>
      {q.error && <p className="field-error">{errorMessage(q.error)}</p>}
      {comments && comments.length === 0 && <p className="muted">No comments yet.</p>}
      <ul className="comment-list" style={{ listStyle: "none", paddingLeft: 0 }}>
        {comments?.map((c) => (
          <li key={c.id} data-testid="review-comment" style={{ marginBottom: "0.6rem" }}>
            <strong>{c.author_name}</strong>{" "}
            <span className="muted small" title={formatTimestamp(c.created_at)}>
              {formatRelative(c.created_at)}
            </span>
            <div style={{ whiteSpace: "pre-wrap" }}>{c.body}</div>
          </li>
        ))}
      </ul>
      {comments && q.hasNextPage && (
        <p>
          <button
            type="button"
            className="btn btn-ghost"
            disabled={q.isFetchingNextPage}
            onClick={() => q.fetchNextPage()}
            data-testid="more-comments"
          >
            {q.isFetchingNextPage
              ? "Loading…"
              : `Show more (${formatWhole(comments.length)} of ${formatWhole(total)} shown)`}
          </button>
        </p>
      )}
      {mayComment && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            if (body.trim()) add.mutate();
          }}
        >
          <textarea
            aria-label="Comment"
            rows={2}
            style={{ width: "100%" }}
            value={body}
            onChange={(e) => setBody(e.target.value)}
            data-testid="comment-body"
          />
          {add.error && <p className="field-error">{errorMessage(add.error)}</p>}
          <div className="actions">
            <button
              type="submit"
              className="btn"
              disabled={add.isPending || body.trim() === ""}
              data-testid="add-comment"
            >
              Comment
            </button>
          </div>
        </form>
      )}
    </section>
  );
}
