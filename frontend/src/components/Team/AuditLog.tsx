import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { formatTimestamp } from "../../lib/format";
import type { TeamRole } from "../../lib/role";
import { auditQuery } from "../../queries/teams";
import { QueryState } from "../QueryState";
import { ScrollBox } from "../ScrollBox";

/** The server filters by prefix of the action ("member." = every member change). */
export const AUDIT_FILTERS: readonly { value: string; label: string }[] = [
  { value: "", label: "All actions" },
  { value: "team.", label: "Team" },
  { value: "member.", label: "Members" },
  { value: "invitation.", label: "Invitations" },
  { value: "agent.", label: "Agents" },
  { value: "enrollment_token.", label: "Enrolment tokens" },
  { value: "run.", label: "Runs" },
  { value: "campaign.", label: "Campaigns" },
  { value: "share_link.", label: "Share links" },
  { value: "comment.", label: "Comments" },
  { value: "device.", label: "Devices" },
  { value: "environment.", label: "Environments" },
];

export const AUDIT_PAGE = 50;

function details(d: Record<string, unknown>): string {
  return Object.entries(d)
    .map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");
}

/** Admin: who did what in the team, newest first, filtered by kind of action, a page at a time. */
export function AuditLog({ team }: { team: TeamRole }) {
  const [action, setAction] = useState("");
  const [offset, setOffset] = useState(0);
  const q = useQuery({
    ...auditQuery(team.id, { action, limit: AUDIT_PAGE, offset }),
    placeholderData: keepPreviousData,
  });
  const total = q.data?.total ?? 0;
  return (
    <div data-testid="audit">
      <div className="toolbar">
        <label className="inline">
          Action{" "}
          <select
            data-testid="audit-filter"
            value={action}
            onChange={(e) => {
              setAction(e.target.value);
              setOffset(0);
            }}
          >
            {AUDIT_FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <span className="muted small" data-testid="audit-range">
          {total === 0
            ? "no events"
            : `${offset + 1}–${Math.min(offset + AUDIT_PAGE, total)} of ${total}`}
        </span>
        <button
          type="button"
          className="btn btn-small"
          data-testid="audit-prev"
          disabled={offset === 0}
          onClick={() => setOffset(Math.max(0, offset - AUDIT_PAGE))}
        >
          Newer
        </button>
        <button
          type="button"
          className="btn btn-small"
          data-testid="audit-next"
          disabled={offset + AUDIT_PAGE >= total}
          onClick={() => setOffset(offset + AUDIT_PAGE)}
        >
          Older
        </button>
      </div>
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length > 0 && (
        <ScrollBox label="Audit log">
          <table className="table" data-testid="audit-table">
            <thead>
              <tr>
                <th>When</th>
                <th>Who</th>
                <th>Action</th>
                <th>What</th>
                <th>Details</th>
              </tr>
            </thead>
            <tbody>
              {q.data.items.map((e) => (
                <tr key={e.id} data-testid="audit-row" data-action={e.action}>
                  <td>{formatTimestamp(e.at)}</td>
                  <td>{e.actor}</td>
                  <td>
                    <code>{e.action}</code>
                  </td>
                  <td>
                    {e.target_kind}
                    {e.target_id && <span className="muted small"> {e.target_id.slice(0, 8)}</span>}
                  </td>
                  <td className="small wrap">{details(e.details)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
    </div>
  );
}
