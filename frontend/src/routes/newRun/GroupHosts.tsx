import "./more-targets.css";
import "./group-hosts.css";
import type { AgentRead } from "../../client/types";
import { type Errors, Field } from "../../components/Field";
import { TargetSelect } from "../../components/Policy/TargetSelect";
import { formatNs } from "../../lib/format";
import { type GroupHostPlan, MAX_GROUP_MEMBERS, START_TOLERANCE_NS } from "./plan";

function RowError({ errors, k }: { errors: Errors; k: string }) {
  const err = errors[k];
  if (!err) return null;
  return (
    <small
      className="field-error"
      data-testid={`field-error-${k}`}
      data-source={err.source}
      role="alert"
    >
      {err.message}
    </small>
  );
}

/** A group run's other hosts on the New run form (ADR 0038): each an agent and one target there,
 * started at the same instant as the first host (the form's Agent and Target fields); with them,
 * the store they share, when they are one (a SAN LUN, an NFS export). */
export function GroupHosts({
  hosts,
  nextHost,
  groupable,
  groupNote,
  sharedStore,
  errors,
  onAdd,
  onAgent,
  onTarget,
  onRemove,
  onSharedStore,
}: {
  hosts: readonly GroupHostPlan[];
  nextHost: AgentRead | undefined;
  groupable: boolean;
  groupNote: string | null;
  sharedStore: string;
  errors: Errors;
  onAdd: (agentId: string) => void;
  onAgent: (index: number, agentId: string) => void;
  onTarget: (index: number, path: string) => void;
  onRemove: (index: number) => void;
  onSharedStore: (text: string) => void;
}) {
  if (!groupable && !groupNote) return null;
  const n = hosts.length + 1;
  return (
    <div className="span-all more-targets" data-testid="group-hosts">
      {hosts.map((h, i) => {
        const agentKey = `hosts.${i}.agent`;
        const targetKey = `hosts.${i}.target`;
        const cls = `field more-target group-host${errors[agentKey] || errors[targetKey] ? " has-error" : ""}`;
        return (
          // biome-ignore lint/suspicious/noArrayIndexKey: a host's place in the group is its identity
          <div key={i} className={cls} data-testid="group-host">
            <label htmlFor={`f-host-${i}`} className="more-target-label">
              Host {i + 2}, at the same instant
            </label>
            <div className="more-target-row">
              <select
                id={`f-host-${i}`}
                aria-label={`Host ${i + 2}'s agent`}
                value={h.agentId}
                onChange={(e) => onAgent(i, e.target.value)}
                className="group-host-agent"
                data-testid="group-host-agent"
              >
                {h.agents.length === 0 && <option value="">—</option>}
                {h.agents.map((a) => (
                  <option key={a.id} value={a.id}>
                    {a.name} ({a.hostname})
                  </option>
                ))}
              </select>
              <TargetSelect
                id={`f-host-${i}-target`}
                label={`Host ${i + 2}'s target`}
                policy={h.policy}
                value={h.target?.path ?? ""}
                onChange={(p) => onTarget(i, p)}
                testId="group-host-target"
              />
              <button
                type="button"
                className="btn btn-small"
                onClick={() => onRemove(i)}
                aria-label={`Remove host ${i + 2}`}
                data-testid="group-host-remove"
              >
                Remove
              </button>
            </div>
            <RowError errors={errors} k={agentKey} />
            <RowError errors={errors} k={targetKey} />
          </div>
        );
      })}
      {groupable && (
        <div className="more-targets-actions">
          <button
            type="button"
            className="btn btn-small"
            disabled={!nextHost}
            onClick={() => nextHost && onAdd(nextHost.id)}
            data-testid="add-host"
          >
            Add a host
          </button>{" "}
          <small className="muted" data-testid="group-note">
            {n > 1
              ? `A group run: ${n} hosts, each laying out its files and taking its idle baseline, then all starting at one instant the server sets. Each host's results, the combined figure (IOPS and bytes summed, latency from the merged histograms, energy summed) and each host's start skew; a host more than ${formatNs(START_TOLERANCE_NS)} from the instant marks the run unsynchronized. Every host needs the chosen meter by the same name.`
              : "Run the same workload on other hosts at the same instant (a group run: several hosts loading one store, or one store each)."}
            {n >= MAX_GROUP_MEMBERS
              ? ` At most ${MAX_GROUP_MEMBERS} hosts in one group.`
              : n > 1 && !nextHost
                ? " Every online agent is in the group."
                : ""}
          </small>
        </div>
      )}
      {groupNote && (
        <small className="muted" data-testid="group-note">
          {groupNote}
        </small>
      )}
      {groupable && hosts.length > 0 && (
        <Field
          label="Shared store (optional)"
          name="shared_store"
          className="group-store"
          errors={errors}
          hint="when the hosts' targets are one store (a SAN LUN, an NFS export): its name, e.g. san:lun7; the group's figures are then that store's"
        >
          <input
            id="f-shared_store"
            name="shared_store"
            value={sharedStore}
            maxLength={200}
            onChange={(e) => onSharedStore(e.target.value)}
            data-testid="shared-store"
          />
        </Field>
      )}
    </div>
  );
}
