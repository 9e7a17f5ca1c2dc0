import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { Link, useSearchParams } from "react-router-dom";
import type { AlertRead, ChannelCreate, ChannelCreated, ChannelRead } from "../../client/types";
import { DeleteButton } from "../../components/Deletion/DeleteButton";
import { type Errors, Field, FormFooter, formErrorsFrom } from "../../components/Field";
import { QueryState } from "../../components/QueryState";
import { ScrollBox } from "../../components/ScrollBox";
import { OnceSecret } from "../../components/Secret";
import { TeamChip } from "../../components/Team/TeamChip";
import { errorMessage } from "../../lib/errors";
import { formatRelative, formatTimestamp } from "../../lib/format";
import { useCan, useCurrentTeam, useListTeam } from "../../lib/role";
import {
  ALERTS_PAGE,
  type AlertKind,
  alertChannelsQuery,
  alertsQuery,
  createAlertChannel,
  deleteAlertChannel,
  testAlertChannel,
  updateAlertChannel,
} from "../../queries/alerts";
import { keys } from "../../queries/keys";
import "./alerts.css";

type Kind = ChannelCreate["events"][number];

/** What each alert kind is about, in the words the page uses. */
export const EVENTS: readonly { value: Kind; label: string }[] = [
  { value: "regression", label: "regressions found by change detection" },
  { value: "run_failed", label: "failed runs" },
  { value: "run_expired", label: "expired runs (the agent stopped reporting)" },
  { value: "agent_offline", label: "agents offline" },
  { value: "schedule_missed", label: "schedule slots that did not run" },
];

const ALIASES = {
  name: "name",
  kind: "kind",
  url: "url",
  events: "events",
  agent_offline_min: "agent_offline_min",
};

/** The in-app path of an alert's absolute link (it is built on the server's public URL). */
export function alertPath(link: string): string {
  try {
    const u = new URL(link);
    return `${u.pathname}${u.search}`;
  } catch {
    return "/";
  }
}

function ChannelForm({
  teamId,
  onCreated,
}: {
  teamId: string;
  onCreated: (c: ChannelCreated) => void;
}) {
  const qc = useQueryClient();
  const [name, setName] = useState("");
  const [kind, setKind] = useState<ChannelCreate["kind"]>("webhook");
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState<Kind[]>(["regression", "run_failed", "run_expired"]);
  const [offline, setOffline] = useState("10");
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const create = useMutation({
    mutationFn: createAlertChannel,
    onSuccess: (c) => {
      qc.invalidateQueries({ queryKey: keys.alerts.all() });
      setName("");
      setUrl("");
      onCreated(c);
    },
    onError: (err) => {
      const r = formErrorsFrom(err, ALIASES);
      setErrors(r.errors);
      setFormError(r.formError);
    },
  });
  const submit = (e: FormEvent) => {
    e.preventDefault();
    setErrors({});
    setFormError(null);
    create.mutate({
      team_id: teamId,
      name: name.trim(),
      kind,
      url: url.trim(),
      events,
      agent_offline_min: Number(offline),
      enabled: true,
    });
  };
  const toggle = (k: Kind) =>
    setEvents((es) => (es.includes(k) ? es.filter((x) => x !== k) : [...es, k]));
  return (
    <form className="card form" onSubmit={submit} data-testid="channel-form" noValidate>
      <h3>New channel</h3>
      <div className="form-grid">
        <Field label="Name" name="name" errors={errors}>
          <input
            id="f-name"
            value={name}
            onChange={(e) => setName(e.target.value)}
            placeholder="storage team chat"
          />
        </Field>
        <Field label="Kind" name="kind" errors={errors}>
          <select
            id="f-kind"
            value={kind}
            onChange={(e) => setKind(e.target.value as ChannelCreate["kind"])}
          >
            <option value="webhook">webhook (JSON, signed)</option>
            <option value="apprise">Apprise URL (e-mail, Slack, Teams, Matrix, …)</option>
          </select>
        </Field>
        <Field
          label="URL"
          name="url"
          errors={errors}
          className="span-2"
          hint={
            kind === "webhook"
              ? "https://… — each POST carries X-Iowatt-Signature (HMAC-SHA256 with the key shown once)"
              : "e.g. mailto://user:pass@example.com, slack://T/B/C, msteams://…, matrixs://…"
          }
        >
          <input id="f-url" className="mono" value={url} onChange={(e) => setUrl(e.target.value)} />
        </Field>
      </div>
      <fieldset className="alert-events" data-testid="channel-events">
        <legend>Tell it about</legend>
        {errors.events && <p className="field-error">{errors.events.message}</p>}
        {EVENTS.map((ev) => (
          <label key={ev.value} className="inline">
            <input
              type="checkbox"
              checked={events.includes(ev.value)}
              onChange={() => toggle(ev.value)}
            />{" "}
            {ev.label}
          </label>
        ))}
        {events.includes("agent_offline") && (
          <Field label="Offline for at least (min)" name="agent_offline_min" errors={errors}>
            <input
              id="f-agent_offline_min"
              inputMode="numeric"
              value={offline}
              onChange={(e) => setOffline(e.target.value)}
            />
          </Field>
        )}
      </fieldset>
      <FormFooter
        error={formError}
        pending={create.isPending}
        label="Add channel"
        pendingLabel="Adding…"
        testId="submit-channel"
      />
    </form>
  );
}

function ChannelRow({ c }: { c: ChannelRead }) {
  const qc = useQueryClient();
  const can = useCan();
  const admin = can("alert.manage", c.team_id);
  const [note, setNote] = useState<string | null>(null);
  const toggle = useMutation({
    mutationFn: () => updateAlertChannel(c.id, { enabled: !c.enabled }),
    onSuccess: () => qc.invalidateQueries({ queryKey: keys.alerts.all() }),
  });
  const test = useMutation({
    mutationFn: () => testAlertChannel(c.id),
    onSuccess: () => {
      setNote("test alert queued: its delivery shows below");
      qc.invalidateQueries({ queryKey: keys.alerts.all() });
    },
    onError: (e) => setNote(errorMessage(e)),
  });
  return (
    <tr data-testid="channel-row">
      <td>
        {c.name}
        <TeamChip teamId={c.team_id} />
      </td>
      <td>{c.kind}</td>
      <td className="mono small">{c.url}</td>
      <td className="small">
        {c.events.map((e) => EVENTS.find((x) => x.value === e)?.label ?? e).join("; ")}
        {c.events.includes("agent_offline") && ` (after ${c.agent_offline_min} min)`}
      </td>
      <td>{c.enabled ? "on" : <span className="muted">paused</span>}</td>
      <td className="nowrap">
        {admin && (
          <>
            <button
              type="button"
              className="btn btn-small"
              data-testid="channel-test"
              onClick={() => test.mutate()}
              disabled={test.isPending}
            >
              Send a test
            </button>
            <button
              type="button"
              className="btn btn-small"
              onClick={() => toggle.mutate()}
              disabled={toggle.isPending}
            >
              {c.enabled ? "Pause" : "Resume"}
            </button>
            <DeleteButton
              label="Delete"
              title={`Delete the channel ${c.name}?`}
              testId="delete-channel"
              onDelete={() => deleteAlertChannel(c.id)}
              onDone={() => qc.invalidateQueries({ queryKey: keys.alerts.all() })}
            >
              <p>Its delivery log goes with it; the alerts stay.</p>
            </DeleteButton>
          </>
        )}
        {note && (
          <div className="small muted" data-testid="channel-note">
            {note}
          </div>
        )}
      </td>
    </tr>
  );
}

function Deliveries({ a }: { a: AlertRead }) {
  if (a.deliveries.length === 0) return <span className="muted">—</span>;
  return (
    <ul className="alert-deliveries">
      {a.deliveries.map((d) => (
        <li key={d.id}>
          {d.channel_name}: <span className={`badge badge-delivery-${d.status}`}>{d.status}</span>
          {d.attempts > 1 && ` after ${d.attempts} attempts`}
          {d.status === "pending" &&
            d.attempts > 0 &&
            ` · next try ${formatRelative(d.next_attempt_at)}`}
          {d.last_error && <div className="muted small">{d.last_error}</div>}
        </li>
      ))}
    </ul>
  );
}

/** Settings → Alerts: where the team's alerts go, and what was sent. */
export function Alerts() {
  const list = useListTeam();
  const { team } = useCurrentTeam();
  const can = useCan();
  const channels = useQuery({ ...alertChannelsQuery(list.teamId), enabled: list.ready });
  // the page and the kind shown live in the URL (?offset=50&kind=run_failed): a link keeps them
  const [params, setParams] = useSearchParams();
  const kindParam = params.get("kind") ?? "";
  const kind = EVENTS.some((e) => e.value === kindParam) ? (kindParam as AlertKind) : "";
  const offsetParam = Number(params.get("offset") ?? 0);
  const offset =
    Number.isInteger(offsetParam) && offsetParam > 0
      ? offsetParam - (offsetParam % ALERTS_PAGE)
      : 0;
  const go = (next: { offset?: number; kind?: AlertKind | "" }) => {
    const p = new URLSearchParams(params);
    const k = next.kind ?? kind;
    const o = next.offset ?? (next.kind !== undefined ? 0 : offset); // a new kind starts at its first page
    if (k) p.set("kind", k);
    else p.delete("kind");
    if (o > 0) p.set("offset", String(o));
    else p.delete("offset");
    setParams(p);
  };
  const alerts = useQuery({ ...alertsQuery(list.teamId, offset, kind), enabled: list.ready });
  const [open, setOpen] = useState(false);
  const [created, setCreated] = useState<ChannelCreated | null>(null);
  const admin = team !== null && can("alert.manage", team.id);
  return (
    <section>
      <div className="page-head">
        <h1>Alerts</h1>
        {admin && (
          <div className="actions">
            <button
              type="button"
              className="btn btn-primary"
              onClick={() => setOpen(!open)}
              data-testid="new-channel"
            >
              {open ? "Close" : "New channel"}
            </button>
          </div>
        )}
      </div>
      <p className="muted small">
        The team hears of regressions, failed or expired runs, agents offline and schedules that did
        not run, once each, through its channels: a signed webhook or an Apprise URL. A channel
        hears of what happens after it is added.
      </p>
      {created?.secret && (
        <OnceSecret
          title={`Signing key of ${created.name}`}
          secret={created.secret}
          onDone={() => setCreated(null)}
        >
          <p className="small">
            Verify each request: <code>X-Iowatt-Signature</code> is <code>sha256=</code> and the hex
            HMAC-SHA256, with this key, of <code>X-Iowatt-Timestamp</code>, a dot and the body.
            Deduplicate on <code>X-Iowatt-Delivery</code>.
          </p>
        </OnceSecret>
      )}
      {open && admin && team && (
        <ChannelForm
          teamId={team.id}
          onCreated={(c) => {
            setCreated(c);
            setOpen(false);
          }}
        />
      )}
      <h2>Channels</h2>
      <QueryState isPending={channels.isPending} error={channels.error} />
      {channels.data && channels.data.items.length === 0 && (
        <p className="muted">
          No channel yet{admin ? ": add one to be told" : " (a team admin adds them)"}.
        </p>
      )}
      {channels.data && channels.data.items.length > 0 && (
        <ScrollBox label="Alert channels">
          <table className="table" data-testid="channels-table">
            <thead>
              <tr>
                <th>Channel</th>
                <th>Kind</th>
                <th>Address</th>
                <th>Tells about</th>
                <th>State</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {channels.data.items.map((c) => (
                <ChannelRow key={c.id} c={c} />
              ))}
            </tbody>
          </table>
        </ScrollBox>
      )}
      <h2>Alerts</h2>
      <div className="inline alert-filter">
        <label className="inline small">
          Show{" "}
          <select
            aria-label="Alerts of kind"
            value={kind}
            onChange={(e) => go({ kind: e.target.value as AlertKind | "" })}
            data-testid="alerts-kind"
          >
            <option value="">every kind</option>
            {EVENTS.map((ev) => (
              <option key={ev.value} value={ev.value}>
                {ev.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <QueryState isPending={alerts.isPending} error={alerts.error} />
      {alerts.data && alerts.data.items.length === 0 && (
        <p className="muted" data-testid="alerts-empty">
          {offset > 0 ? (
            <>
              No alerts on this page.{" "}
              <button type="button" className="btn btn-small" onClick={() => go({ offset: 0 })}>
                First page
              </button>
            </>
          ) : kind ? (
            "No alert of this kind."
          ) : (
            "No alert yet."
          )}
        </p>
      )}
      {alerts.data && alerts.data.items.length > 0 && (
        <>
          <ScrollBox label="Alerts">
            <table
              className={alerts.isPlaceholderData ? "table alerts-stale" : "table"}
              data-testid="alerts-table"
              aria-busy={alerts.isFetching}
            >
              <thead>
                <tr>
                  <th>When</th>
                  <th>Alert</th>
                  <th>Delivered</th>
                </tr>
              </thead>
              <tbody>
                {alerts.data.items.map((a) => (
                  <tr key={a.id} data-testid="alert-row">
                    <td className="nowrap" title={formatTimestamp(a.created_at)}>
                      {formatRelative(a.created_at)}
                    </td>
                    <td>
                      <Link to={alertPath(a.link)}>{a.title}</Link>
                      <div className="small muted">{a.text}</div>
                    </td>
                    <td className="small">
                      <Deliveries a={a} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </ScrollBox>
          <div className="pager" data-testid="alerts-pager">
            <span className="muted" data-testid="alerts-count">
              {alerts.data.offset + 1}–{alerts.data.offset + alerts.data.items.length} of{" "}
              {alerts.data.total.toLocaleString("en")}
              {alerts.data.kind ? " of this kind" : ""}, newest first
            </span>
            {alerts.isFetching && <span className="muted small">updating…</span>}
            <button
              type="button"
              className="btn btn-small"
              disabled={offset === 0}
              data-testid="alerts-prev"
              onClick={() => go({ offset: Math.max(0, offset - ALERTS_PAGE) })}
            >
              Newer
            </button>
            <button
              type="button"
              className="btn btn-small"
              disabled={alerts.data.offset + ALERTS_PAGE >= alerts.data.total}
              data-testid="alerts-next"
              onClick={() => go({ offset: offset + ALERTS_PAGE })}
            >
              Older
            </button>
          </div>
        </>
      )}
    </section>
  );
}
