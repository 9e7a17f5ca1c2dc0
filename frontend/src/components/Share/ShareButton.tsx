import { useId, useState } from "react";
import { errorMessage } from "../../lib/errors";
import { useCan } from "../../lib/role";
import { type ComparisonTarget, createShareLink } from "../../queries/sharing";
import { Modal } from "../Modal";
import { Command } from "../Secret";

/** What a link freezes: a run, a campaign or a review by id, a comparison with its page state. */
export type ShareTarget =
  | { kind: "run"; target: string }
  | { kind: "campaign"; target: string }
  | { kind: "review"; target: string }
  | { kind: "comparison"; target: ComparisonTarget };

const EXPIRY: { label: string; days: number | null }[] = [
  { label: "never (until revoked)", days: null },
  { label: "in 1 day", days: 1 },
  { label: "in 7 days", days: 7 },
  { label: "in 30 days", days: 30 },
];

/**
 * "Share" for members of the object's team (hidden for viewers, as the server answers them 403):
 * a dialog with an optional title and expiry that creates a read-only link and shows it once.
 */
export function ShareButton({
  teamId,
  share,
  defaultTitle,
  small = false,
  warning,
}: {
  teamId: string | undefined;
  share: ShareTarget;
  defaultTitle: string;
  /** .btn-small, where the page's other header buttons are small (the run page) */
  small?: boolean;
  /** said in the dialog before the link is made (e.g. runs of different workloads) */
  warning?: string;
}) {
  const can = useCan();
  const [open, setOpen] = useState(false);
  if (!can("share.create", teamId ?? null)) return null;
  return (
    <>
      <button
        type="button"
        className={small ? "btn btn-small" : "btn"}
        data-testid="share-button"
        onClick={() => setOpen(true)}
        title="A read-only link anyone can open without signing in"
      >
        Share
      </button>
      {open && (
        <ShareDialog
          share={share}
          defaultTitle={defaultTitle}
          warning={warning}
          onClose={() => setOpen(false)}
        />
      )}
    </>
  );
}

function ShareDialog({
  share,
  defaultTitle,
  warning,
  onClose,
}: {
  share: ShareTarget;
  defaultTitle: string;
  warning?: string;
  onClose: () => void;
}) {
  const titleId = useId();
  const [title, setTitle] = useState(defaultTitle);
  const [days, setDays] = useState<number | null>(null);
  const [pending, setPending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [url, setUrl] = useState<string | null>(null);
  const create = async () => {
    setPending(true);
    setError(null);
    try {
      const expires = days === null ? null : new Date(Date.now() + days * 86_400_000).toISOString();
      const made = await createShareLink({ ...share, title: title.trim(), expires_at: expires });
      setUrl(made.url);
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setPending(false);
    }
  };
  const what = share.kind === "comparison" ? "this comparison" : `this ${share.kind}`;
  return (
    <Modal labelledBy={titleId} testId="share-dialog" onClose={onClose}>
      <h3 id={titleId}>Share {what}</h3>
      {url === null ? (
        <>
          <p className="muted small">
            A read-only link to exactly this view
            {share.kind === "comparison" ? " (runs, baseline, grouping and charts)" : ""}. Anyone
            with the link sees it without signing in, and nothing else of the team; runs deleted
            later disappear from it
            {share.kind === "review"
              ? " (a decided review keeps the figures it was decided on)"
              : ""}
            . Revoke it any time under Shared links.
          </p>
          {warning && (
            <p className="alert alert-warn small" data-testid="share-warning">
              {warning}
            </p>
          )}
          <label className="field">
            <span>Title (shown on the page and in link previews)</span>
            <input
              value={title}
              maxLength={300}
              data-testid="share-title"
              onChange={(e) => setTitle(e.target.value)}
            />
          </label>
          <label className="field">
            <span>Expires</span>
            <select
              data-testid="share-expiry"
              value={days ?? ""}
              onChange={(e) => setDays(e.target.value === "" ? null : Number(e.target.value))}
            >
              {EXPIRY.map((x) => (
                <option key={x.label} value={x.days ?? ""}>
                  {x.label}
                </option>
              ))}
            </select>
          </label>
          {error && (
            <div className="alert alert-error" role="alert">
              {error}
            </div>
          )}
          <div className="actions">
            <button type="button" className="btn" onClick={onClose}>
              Cancel
            </button>
            <button
              type="button"
              className="btn btn-primary"
              disabled={pending}
              onClick={create}
              data-testid="share-create"
            >
              {pending ? "Creating…" : "Create link"}
            </button>
          </div>
        </>
      ) : (
        <>
          <p className="alert alert-warn small">
            Copy the link now: it is shown only once (the server keeps a hash of it).
          </p>
          <Command text={url} testId="share-url" />
          <div className="actions">
            <a className="btn" href={url} target="_blank" rel="noreferrer noopener">
              Open
            </a>
            <button type="button" className="btn" onClick={onClose} data-testid="share-done">
              Done
            </button>
          </div>
        </>
      )}
    </Modal>
  );
}
