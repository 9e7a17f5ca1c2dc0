import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import Markdown from "react-markdown";
import { errorMessage } from "../../lib/errors";
import "./comments.css";
import { formatRelative, formatTimestamp } from "../../lib/format";
import { useMe } from "../../lib/role";
import {
  type CommentFormat,
  type CommentRead,
  type CommentTargetKind,
  commentsQuery,
  createComment,
  deleteComment,
  updateComment,
} from "../../queries/comments";
import { keys } from "../../queries/keys";
import { ConfirmDialog } from "../ConfirmDialog";

/**
 * A comment's body. Markdown goes through react-markdown without any raw-HTML plugin (HTML in a
 * body is shown escaped, as the text it is) and with its default URL filter (a `javascript:`
 * link loses its href): nothing in a body becomes markup of its own, so a `<script>` someone typed
 * is shown, never run (ADR 0021). Plain text stays text, line breaks kept.
 */
export function CommentBody({ body, format }: { body: string; format: CommentFormat }) {
  if (format === "markdown") {
    return (
      <div className="comment-body markdown" data-testid="comment-body">
        <Markdown>{body}</Markdown>
      </div>
    );
  }
  return (
    <div className="comment-body plain" data-testid="comment-body">
      {body}
    </div>
  );
}

function Editor({
  initial,
  initialFormat,
  submitLabel,
  pending,
  error,
  onSubmit,
  onCancel,
}: {
  initial: string;
  initialFormat: CommentFormat;
  submitLabel: string;
  pending: boolean;
  error: unknown;
  onSubmit: (body: string, format: CommentFormat) => void;
  onCancel?: () => void;
}) {
  const [body, setBody] = useState(initial);
  const [format, setFormat] = useState<CommentFormat>(initialFormat);
  const id = useId();
  return (
    <form
      className="comment-editor"
      onSubmit={(e) => {
        e.preventDefault();
        if (body.trim()) onSubmit(body, format);
      }}
    >
      <label htmlFor={id} className="visually-hidden">
        Comment
      </label>
      <textarea
        id={id}
        rows={3}
        value={body}
        maxLength={20000}
        placeholder="Add a comment (plain text or Markdown)"
        onChange={(e) => setBody(e.target.value)}
        data-testid="comment-input"
      />
      <div className="actions">
        <select
          aria-label="Format"
          value={format}
          onChange={(e) => setFormat(e.target.value as CommentFormat)}
          data-testid="comment-format"
        >
          <option value="text">Plain text</option>
          <option value="markdown">Markdown</option>
        </select>
        {onCancel && (
          <button type="button" className="btn btn-small" onClick={onCancel}>
            Cancel
          </button>
        )}
        <button
          type="submit"
          className="btn btn-primary btn-small"
          disabled={pending || !body.trim()}
          data-testid="comment-submit"
        >
          {submitLabel}
        </button>
      </div>
      {error != null && <div className="alert alert-error">{errorMessage(error)}</div>}
    </form>
  );
}

function CommentItem({
  c,
  mayDelete,
  mine,
  onChanged,
}: {
  c: CommentRead;
  mayDelete: boolean;
  mine: boolean;
  onChanged: () => void;
}) {
  const [editing, setEditing] = useState(false);
  const [confirm, setConfirm] = useState(false);
  const edit = useMutation({
    mutationFn: (v: { body: string; format: CommentFormat }) =>
      updateComment(c.id, { body: v.body, body_format: v.format }),
    onSuccess: () => {
      setEditing(false);
      onChanged();
    },
  });
  const del = useMutation({
    mutationFn: () => deleteComment(c.id),
    onSuccess: () => {
      setConfirm(false);
      onChanged();
    },
  });
  return (
    <li className="comment" data-testid="comment">
      <div className="comment-head">
        <strong className={c.author_id ? undefined : "muted"}>{c.author_name}</strong>{" "}
        <span className="muted" title={formatTimestamp(c.created_at)}>
          {formatRelative(c.created_at)}
          {c.edited_at && ` · edited ${formatRelative(c.edited_at)}`}
        </span>
        <span className="comment-actions">
          {mine && !editing && (
            <button type="button" className="btn btn-small" onClick={() => setEditing(true)}>
              Edit
            </button>
          )}
          {mayDelete && (
            <button
              type="button"
              className="btn btn-small btn-danger"
              onClick={() => setConfirm(true)}
              data-testid="comment-delete"
            >
              Delete
            </button>
          )}
        </span>
      </div>
      {editing ? (
        <Editor
          initial={c.body}
          initialFormat={c.body_format}
          submitLabel="Save"
          pending={edit.isPending}
          error={edit.error}
          onSubmit={(body, format) => edit.mutate({ body, format })}
          onCancel={() => setEditing(false)}
        />
      ) : (
        <CommentBody body={c.body} format={c.body_format} />
      )}
      {confirm && (
        <ConfirmDialog
          title="Delete this comment?"
          confirmLabel="Delete"
          pending={del.isPending}
          error={del.error ? errorMessage(del.error) : null}
          onConfirm={() => del.mutate()}
          onCancel={() => setConfirm(false)}
        >
          <p>The comment by {c.author_name} is removed for everyone.</p>
        </ConfirmDialog>
      )}
    </li>
  );
}

/**
 * The comments on a run, a comparison or a campaign: everyone in the team reads them, members
 * and admins write; authors edit their own; authors and admins delete. `teamIds`: the teams the
 * target belongs to (a comparison's runs may span several; the comment goes to the first where
 * the user may write, or the server decides when there is one).
 */
export function CommentThread({
  kind,
  targetKey,
  teamIds,
}: {
  kind: CommentTargetKind;
  targetKey: string;
  teamIds: string[];
}) {
  const qc = useQueryClient();
  const q = useQuery({ ...commentsQuery(kind, targetKey), enabled: targetKey !== "" });
  const { userId, roleIn } = useMe();
  const writable = teamIds.filter((t) => ["member", "admin"].includes(roleIn(t) ?? ""));
  const refresh = () => qc.invalidateQueries({ queryKey: keys.comments.thread(kind, targetKey) });
  const [draft, setDraft] = useState(0); // remounts the editor empty after a post
  const post = useMutation({
    mutationFn: (v: { body: string; format: CommentFormat }) =>
      createComment({
        target_kind: kind,
        target_key: targetKey,
        body: v.body,
        body_format: v.format,
        ...(new Set(teamIds).size > 1 && writable[0] ? { team_id: writable[0] } : {}),
      }),
    onSuccess: () => {
      setDraft((n) => n + 1);
      refresh();
    },
  });
  const items = q.data?.items ?? [];
  return (
    <section className="card comments" data-testid="comment-thread">
      <h2>Comments {items.length > 0 && <span className="muted">({items.length})</span>}</h2>
      {q.error && <div className="alert alert-error">{errorMessage(q.error)}</div>}
      {items.length === 0 && !q.isPending && <p className="muted">No comments yet.</p>}
      <ul className="comment-list">
        {items.map((c) => (
          <CommentItem
            key={c.id}
            c={c}
            mine={c.author_id != null && c.author_id === userId}
            mayDelete={
              (c.author_id != null && c.author_id === userId) || roleIn(c.team_id) === "admin"
            }
            onChanged={refresh}
          />
        ))}
      </ul>
      {writable.length > 0 && (
        <Editor
          key={draft}
          initial=""
          initialFormat="text"
          submitLabel="Comment"
          pending={post.isPending}
          error={post.error}
          onSubmit={(body, format) => post.mutate({ body, format })}
        />
      )}
    </section>
  );
}
