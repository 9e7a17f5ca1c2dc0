import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Fragment, useState } from "react";
import { Link } from "react-router-dom";
import type { components } from "../client/schema";
import type { AgentRead } from "../client/types";
import { EnrollmentTokens } from "../components/Agent/EnrollmentTokens";
import { HostPolicyView } from "../components/Agent/HostPolicyView";
import { TokenExpiry, tokenExpiryText } from "../components/Agent/TokenExpiry";
import { ConfirmDialog } from "../components/ConfirmDialog";
import { QueryState } from "../components/QueryState";
import { Command } from "../components/Secret";
import { TeamChip } from "../components/Team/TeamChip";
import { errorMessage } from "../lib/errors";
import { formatBytes, formatRelative, formatTimestamp } from "../lib/format";
import { isOlder, upgradeLine } from "../lib/installLine";
import { inventoryOf } from "../lib/inventory";
import { policyOf } from "../lib/policy";
import { teamsWhere, useListTeam } from "../lib/role";
import { agentDistQuery } from "../queries/agentDist";
import { agentsQuery, deleteAgent, revokeAgent } from "../queries/agents";
import { meQuery } from "../queries/auth";
import { keys } from "../queries/keys";

function OnlineBadge({ online }: { online: boolean }) {
  return (
    <span className={`badge ${online ? "badge-online" : "badge-offline"}`}>
      {online ? "online" : "offline"}
    </span>
  );
}

type Dist = components["schemas"]["AgentDist"];

/** The engine's version and the asynchronous ioengines it ran on the host (protocol 2 agents). */
function engineText(agent: AgentRead): string {
  const caps = inventoryOf(agent).capabilities;
  if (!caps || caps.engine_features === null) return "not reported (an agent before protocol 2)";
  const features = caps.engine_features.length
    ? caps.engine_features.join(", ")
    : "no io_uring or libaio";
  return `${caps.engine_version ?? "version unknown"} · ${features}`;
}

function AgentDetail({ agent, dist }: { agent: AgentRead; dist: Dist | undefined }) {
  const inv = inventoryOf(agent);
  const older = isOlder(agent.agent_version, dist?.version);
  return (
    <div className="agent-detail" data-testid="agent-detail">
      {older && dist && (
        <div data-testid="agent-upgrade">
          <p className="small">
            This agent ({agent.agent_version}) is older than the bundle this server serves (
            {dist.version}). On the host, as root, this line installs it and keeps the enrolment:
          </p>
          <Command
            text={upgradeLine(
              window.location.origin,
              dist.install_script_url,
              dist.tls,
              dist.tls_ca,
            )}
          />
        </div>
      )}
      <dl className="facts">
        <dt>Agent version</dt>
        <dd>{agent.agent_version || "—"}</dd>
        <dt>Engine</dt>
        <dd data-testid="agent-engine">{engineText(agent)}</dd>
        <dt>Enrolled</dt>
        <dd>{formatTimestamp(agent.enrolled_at)}</dd>
        <dt>Token expires</dt>
        <dd>
          <TokenExpiry expiresAt={agent.token_expires_at} revoked={agent.revoked_at !== null} />
        </dd>
        <dt>State</dt>
        <dd>
          {agent.state}
          {agent.current_run_id && (
            <>
              {" "}
              · <Link to={`/runs/${agent.current_run_id}`}>current run</Link>
            </>
          )}
        </dd>
        <dt>OS</dt>
        <dd>{[inv.os?.distro, inv.os?.kernel].filter(Boolean).join(" · ") || "—"}</dd>
        <dt>Virtualization</dt>
        <dd>{inv.virtualization ?? "none reported"}</dd>
      </dl>
      <HostPolicyView policy={policyOf(agent)} />
      <h4>Block devices</h4>
      {inv.block_devices.length === 0 ? (
        <p className="muted">None reported.</p>
      ) : (
        <table className="table compact">
          <thead>
            <tr>
              <th>Name</th>
              <th>Model</th>
              <th className="num">Capacity</th>
              <th>Media</th>
              <th>Interface</th>
              <th>Scheduler</th>
              <th>Firmware</th>
            </tr>
          </thead>
          <tbody>
            {inv.block_devices.map((d) => (
              <tr key={d.name}>
                <td className="mono">{d.name}</td>
                <td>{d.model ?? "—"}</td>
                <td className="num">{formatBytes(d.size_bytes)}</td>
                <td>{d.rotational === null ? "—" : d.rotational ? "rotational" : "solid state"}</td>
                <td>{d.interface ?? "—"}</td>
                <td>{d.scheduler ?? "—"}</td>
                <td>{d.firmware ?? "—"}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h4>Mounts</h4>
      {inv.mounts.length === 0 ? (
        <p className="muted">None reported.</p>
      ) : (
        <table className="table compact">
          <thead>
            <tr>
              <th>Mount point</th>
              <th>Source</th>
              <th>FS</th>
              <th>Options</th>
            </tr>
          </thead>
          <tbody>
            {inv.mounts.map((m, i) => (
              // A mount point can be stacked (mounted twice); the position keeps keys unique.
              // biome-ignore lint/suspicious/noArrayIndexKey: rows are never reordered
              <tr key={`${i}:${m.mountpoint}`}>
                <td className="mono">{m.mountpoint}</td>
                <td className="mono">{m.source}</td>
                <td>{m.fstype}</td>
                <td className="mono small wrap">{m.options}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

type Pending = { agent: AgentRead; action: "revoke" | "delete" };

export function Agents() {
  const qc = useQueryClient();
  const list = useListTeam();
  const q = useQuery({ ...agentsQuery(list.teamId), enabled: list.ready });
  const me = useQuery(meQuery());
  const dist = useQuery(agentDistQuery());
  const [open, setOpen] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const adminTeams = teamsWhere(me.data?.teams ?? [], "agent.manage");
  const isAdmin = (a: AgentRead) => adminTeams.some((t) => t.id === a.team_id);
  const act = useMutation({
    mutationFn: async (p: Pending) => {
      if (p.action === "revoke") await revokeAgent(p.agent.id);
      else await deleteAgent(p.agent.id);
    },
    onSuccess: () => {
      setPending(null);
      qc.invalidateQueries({ queryKey: keys.agents.all() });
    },
  });
  const ask = (p: Pending) => {
    act.reset();
    setPending(p);
  };
  return (
    <section>
      <h1>Agents</h1>
      <QueryState isPending={q.isPending} error={q.error} />
      {q.data && q.data.items.length === 0 && (
        <p className="muted">
          No agents enrolled yet.{" "}
          {adminTeams.length > 0
            ? "Create an enrolment token below and run the command it shows on the host."
            : "Ask an admin of your team for an enrolment token."}
        </p>
      )}
      {q.data && q.data.items.length > 0 && (
        <table className="table" data-testid="agents-table">
          <thead>
            <tr>
              <th />
              <th>Name</th>
              <th>Host</th>
              <th>Version</th>
              <th>Status</th>
              <th>Last heartbeat</th>
              <th>Kernel</th>
              <th>CPU</th>
              <th className="num">Memory</th>
              <th className="num">Block devices</th>
              <th className="num">Targets</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {q.data.items.map((a) => {
              const inv = inventoryOf(a);
              const policy = policyOf(a);
              const revoked = a.revoked_at;
              const expanded = open === a.id;
              return (
                <Fragment key={a.id}>
                  <tr data-testid="agent-row" data-agent={a.name}>
                    <td>
                      <button
                        type="button"
                        className="btn btn-ghost btn-small"
                        aria-expanded={expanded}
                        aria-label={`${expanded ? "Hide" : "Show"} details of ${a.name}`}
                        onClick={() => setOpen(expanded ? null : a.id)}
                      >
                        {expanded ? "▾" : "▸"}
                      </button>
                    </td>
                    <td>
                      {a.name}
                      <TeamChip teamId={a.team_id} />{" "}
                      <Link className="small" to={`/series?agent_id=${a.id}`}>
                        series
                      </Link>
                    </td>
                    <td className="mono">{a.hostname}</td>
                    <td className="mono small nowrap">
                      {a.agent_version || "—"}
                      {a.kind === "agent" && isOlder(a.agent_version, dist.data?.version) && (
                        <>
                          {" "}
                          <span
                            className="badge badge-offline"
                            data-testid="agent-outdated"
                            title={`older than the bundle this server serves (${dist.data?.version}): the details show the line that upgrades it`}
                          >
                            upgrade
                          </span>
                        </>
                      )}
                    </td>
                    <td>
                      {revoked ? (
                        <span className="badge badge-revoked" title={formatTimestamp(revoked)}>
                          revoked
                        </span>
                      ) : a.kind === "external" ? (
                        <span
                          className="badge badge-offline"
                          data-testid="agent-external"
                          title="a host whose results are uploaded from CI (POST /api/v1/results): it runs nothing from the server"
                        >
                          external · uploads
                        </span>
                      ) : tokenExpiryText(a.token_expires_at).expired ? (
                        <span
                          className="badge badge-revoked"
                          data-testid="token-expired"
                          title="the agent's token expired: re-enrol it on the host (iowatt-agent enroll --replace)"
                        >
                          token expired
                        </span>
                      ) : (
                        <OnlineBadge online={a.online} />
                      )}
                    </td>
                    <td title={formatTimestamp(a.last_heartbeat_at)}>
                      {formatRelative(a.last_heartbeat_at)}
                    </td>
                    <td className="mono small">{inv.os?.kernel ?? "—"}</td>
                    <td className="small">
                      {inv.cpu?.model ?? "—"}
                      {typeof inv.cpu?.cores === "number" && ` (${inv.cpu.cores} cores)`}
                    </td>
                    <td className="num">{formatBytes(inv.mem_bytes)}</td>
                    <td className="num">{inv.block_devices.length}</td>
                    <td className="num" title="targets the host allows">
                      {policy ? policy.targets.length : "—"}
                    </td>
                    <td className="nowrap">
                      {isAdmin(a) && !revoked && (
                        <button
                          type="button"
                          className="btn btn-danger btn-small"
                          data-testid="revoke-agent"
                          onClick={() => ask({ agent: a, action: "revoke" })}
                        >
                          Revoke
                        </button>
                      )}
                      {isAdmin(a) && revoked && (
                        <button
                          type="button"
                          className="btn btn-danger btn-small"
                          data-testid="delete-agent"
                          onClick={() => ask({ agent: a, action: "delete" })}
                        >
                          Delete
                        </button>
                      )}
                    </td>
                  </tr>
                  {expanded && (
                    <tr className="detail-row">
                      <td colSpan={12}>
                        <AgentDetail agent={a} dist={dist.data} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              );
            })}
          </tbody>
        </table>
      )}
      {pending && (
        <ConfirmDialog
          title={
            pending.action === "revoke"
              ? `Revoke agent ${pending.agent.name}?`
              : `Delete agent ${pending.agent.name}?`
          }
          confirmLabel={pending.action === "revoke" ? "Revoke agent" : "Delete agent"}
          pending={act.isPending}
          error={act.error ? errorMessage(act.error) : null}
          onCancel={() => setPending(null)}
          onConfirm={() => act.mutate(pending)}
        >
          {pending.action === "revoke" ? (
            <p>
              The server refuses its token at once: it can no longer take runs, report results or
              heartbeat. To use the host again, enrol it anew with a fresh enrolment token.
            </p>
          ) : (
            <p>
              The revoked agent is removed and its name can be enrolled again. Its past runs and
              results stay.
            </p>
          )}
        </ConfirmDialog>
      )}
      {adminTeams.length > 0 && <EnrollmentTokens teams={adminTeams} meId={me.data?.id} />}
    </section>
  );
}
