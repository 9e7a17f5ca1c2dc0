import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router-dom";
import type { ScheduleRead } from "../../client/types";
import { formatRelative } from "../../lib/format";
import { useMayDelete } from "../../lib/role";
import { formatInZone, ruleText } from "../../lib/schedule";
import { keys } from "../../queries/keys";
import { deleteSchedule, scheduleSlotsQuery, updateSchedule } from "../../queries/schedules";
import { DeleteButton } from "../Deletion/DeleteButton";
import { ScrollBox } from "../ScrollBox";
import { TeamChip } from "../Team/TeamChip";
import "./schedule.css";

function Slots({ s }: { s: ScheduleRead }) {
  const q = useQuery(scheduleSlotsQuery(s.id));
  if (q.isPending) return <p className="muted small">loading…</p>;
  if (!q.data || q.data.items.length === 0)
    return <p className="muted small">No slot has come yet.</p>;
  return (
    <table className="table compact" data-testid="schedule-slots">
      <thead>
        <tr>
          <th>Slot ({s.timezone})</th>
          <th>Outcome</th>
          <th>Why / left out</th>
        </tr>
      </thead>
      <tbody>
        {q.data.items.map((slot) => (
          <tr key={slot.slot_at}>
            <td className="nowrap">{formatInZone(slot.slot_at, s.timezone)}</td>
            <td>
              {slot.status === "queued" && slot.campaign_id ? (
                <Link to={`/campaigns/${slot.campaign_id}`}>queued</Link>
              ) : (
                <span className="badge badge-skipped">{slot.status}</span>
              )}
            </td>
            <td className="small">
              {slot.reason ?? ""}
              {slot.skipped_targets.length > 0 && (
                <ul className="schedule-left-out">
                  {slot.skipped_targets.map((t) => (
                    <li key={`${t.agent_id}:${t.target_path}`}>
                      <span className="mono">{t.target_path}</span>: {t.reason}
                    </li>
                  ))}
                </ul>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Row({ s }: { s: ScheduleRead }) {
  const qc = useQueryClient();
  const [open, setOpen] = useState(false);
  const mayChange = useMayDelete(s.team_id, s.created_by);
  const toggle = useMutation({
    mutationFn: () => updateSchedule(s.id, { enabled: !s.enabled }),
    onSuccess: () => qc.invalidateQueries({ queryKey: keys.schedules.all() }),
  });
  const last = s.last_slot;
  return (
    <>
      <tr data-testid="schedule-row">
        <td>
          {s.name}
          <TeamChip teamId={s.team_id} />
        </td>
        <td>{ruleText(s)}</td>
        <td className="nowrap" title={`${s.next_slot_at} (UTC)`}>
          {s.enabled ? (
            <>
              {formatInZone(s.next_slot_at, s.timezone)}{" "}
              <span className="muted small">{formatRelative(s.next_slot_at)}</span>
            </>
          ) : (
            <span className="muted">paused</span>
          )}
        </td>
        <td className="num">
          {s.runs_per_slot ?? (
            <span className="muted small" title="the campaign's target set is read at each slot">
              chosen per slot
            </span>
          )}
        </td>
        <td className="small">
          {last ? (
            <>
              {last.status} {formatRelative(last.slot_at)}
              {last.reason && <div className="muted">{last.reason}</div>}
            </>
          ) : (
            <span className="muted">none yet</span>
          )}
        </td>
        <td className="nowrap">
          <button type="button" className="btn btn-ghost btn-small" onClick={() => setOpen(!open)}>
            {open ? "hide slots" : "slots"}
          </button>
          {mayChange && (
            <>
              <button
                type="button"
                className="btn btn-small"
                data-testid="schedule-toggle"
                disabled={toggle.isPending}
                onClick={() => toggle.mutate()}
              >
                {s.enabled ? "Pause" : "Resume"}
              </button>
              <DeleteButton
                label="Delete"
                title={`Delete the schedule ${s.name}?`}
                testId="delete-schedule"
                onDelete={() => deleteSchedule(s.id)}
                onDone={() => qc.invalidateQueries({ queryKey: keys.schedules.all() })}
              >
                <p>Its slot history goes; the campaigns it queued and their runs stay.</p>
              </DeleteButton>
            </>
          )}
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={6}>
            <Slots s={s} />
          </td>
        </tr>
      )}
    </>
  );
}

/** The team's schedules: rule, next slot in the schedule's own time zone, the last outcome. */
export function ScheduleList({ items }: { items: ScheduleRead[] }) {
  if (items.length === 0) return null;
  return (
    <>
      <h2>Schedules</h2>
      <ScrollBox label="Schedules">
        <table className="table" data-testid="schedules-table">
          <thead>
            <tr>
              <th>Schedule</th>
              <th>When</th>
              <th>Next slot</th>
              <th className="num">Runs per slot</th>
              <th>Last slot</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {items.map((s) => (
              <Row key={s.id} s={s} />
            ))}
          </tbody>
        </table>
      </ScrollBox>
    </>
  );
}
