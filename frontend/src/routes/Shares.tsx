// The team's share links (/shares): who shared what, when, until when, how often it was opened,
// and revoke (its creator or a team admin, as the server decides). Members and admins only.
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { QueryState } from "../components/QueryState";
import { ScrollBox } from "../components/ScrollBox";
import { errorMessage } from "../lib/errors";
import { formatRelative, formatTimestamp } from "../lib/format";
import { can, useCurrentTeam } from "../lib/role";
import { meQuery } from "../queries/auth";
import { keys } from "../queries/keys";
import { revokeShareLink, type ShareLinkRead, shareLinksQuery } from "../queries/sharing";

function describeTarget(l: ShareLinkRead): string {
  const t = l.target as { runs?: unknown[] };
  if (l.kind === "comparison" && Array.isArray(t.runs))
    return `comparison of ${t.runs.length} runs`;
  return l.kind;
}

export function Shares() {
  const me = useQuery(meQuery());
  const { team } = useCurrentTeam();
  const member = team !== null && can(team.role, "share.create");
  const q = useQuery(shareLinksQuery(member && team ? team.id : ""));
  const qc = useQueryClient();
  const [revoking, setRevoking] = useState<ShareLinkRead | null>(null);
  const revoke = useMutation({
    mutationFn: (id: string) => revokeShareLink(id),
    onSuccess: () => {
      setRevoking(null);
      if (team) qc.invalidateQueries({ queryKey: keys.sharing.links(team.id) });
    },
  });

  if (team && !member) {
    return (
      <section>
        <h1>Shared links</h1>
        <p className="muted">
          The share links of {team.name} are listed for its members and admins; you are a viewer.
        </p>
      </section>
    );
  }
  return (
    <section data-testid="shares-page">
      <div className="page-head">
        <h1>Shared links</h1>
        {team && <span className="muted">{team.name}</span>}
      </div>
      <p className="muted small">
        Read-only links to a run, a comparison, a campaign or a review, opened without signing in.
        Create one with Share on a run, compare, campaign or review page; the link itself is shown
        only then. Revoked and expired links answer "not available", and so do a person's links once
        they are no longer a member of the team.
      </p>
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && <p className="muted">No share links yet.</p>}
      {q.data && q.data.items.length > 0 && (
        <ScrollBox className="card" label="Shared links">
          <table className="table" data-testid="shares-table">
            <thead>
              <tr>
                <th>Title</th>
                <th>What</th>
                <th>Shared by</th>
                <th>Created</th>
                <th>Expires</th>
                <th>Views</th>
                <th>Last viewed</th>
                <th>State</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {q.data.items.map((l) => {
                const mayRevoke =
                  (l.state === "active" &&
                    (team?.role === "admin" || l.created_by === me.data?.id)) ||
                  (l.state === "creator_left" && team?.role === "admin");
                return (
                  <tr key={l.id} data-testid="share-row">
                    <td>{l.title || <span className="muted">untitled</span>}</td>
                    <td>{describeTarget(l)}</td>
                    <td>{l.created_by_name ?? "—"}</td>
                    <td title={formatTimestamp(l.created_at)}>{formatRelative(l.created_at)}</td>
                    <td>{l.expires_at ? formatTimestamp(l.expires_at) : "never"}</td>
                    <td data-testid="share-views">{l.views}</td>
                    <td>{l.last_viewed_at ? formatRelative(l.last_viewed_at) : "—"}</td>
                    <td data-testid="share-state">
                      <span
                        className={`badge badge-${l.state === "active" ? "online" : "revoked"}`}
                        title={
                          l.state === "creator_left"
                            ? "Its creator is no longer a member of the team: the link no longer opens"
                            : undefined
                        }
                      >
                        {l.state === "creator_left" ? "creator left" : l.state}
                      </span>
                    </td>
                    <td>
                      {mayRevoke && (
                        <button
                          type="button"
                          className="btn btn-small btn-danger"
                          data-testid="share-revoke"
                          onClick={() => setRevoking(l)}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </ScrollBox>
      )}
      {revoking && (
        <ConfirmDialog
          title="Revoke this share link?"
          confirmLabel="Revoke"
          pending={revoke.isPending}
          error={revoke.error ? errorMessage(revoke.error) : null}
          onConfirm={() => revoke.mutate(revoking.id)}
          onCancel={() => setRevoking(null)}
        >
          <p>
            {revoking.title || "This link"} stops working at once: whoever opens it sees that it is
            not available. This cannot be undone.
          </p>
        </ConfirmDialog>
      )}
    </section>
  );
}
