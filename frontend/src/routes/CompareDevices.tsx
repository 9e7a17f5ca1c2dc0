import { useQuery } from "@tanstack/react-query";
import { useMemo, useState } from "react";
import { useNavigate } from "react-router-dom";
import type { RunRead } from "../client/types";
import { QueryState } from "../components/QueryState";
import { compareHref, type GroupBy } from "../lib/compareState";
import { formatTimestamp } from "../lib/format";
import { describeWorkload, workloadKey } from "../lib/workload";
import { devicesQuery } from "../queries/devices";
import { environmentsQuery } from "../queries/environments";
import { runsQuery } from "../queries/runs";
import { workloadsQuery } from "../queries/workloads";

/** Runs are the same workload when the server's fingerprint rule says so (lib/workload.ts). */
function workloadIdentity(r: Pick<RunRead, "workload">): string {
  return workloadKey(r.workload);
}

/** Grouping for a device/environment pick: both chosen → device × environment. */
export function groupFor(devices: number, environments: number): GroupBy {
  if (devices > 0 && environments > 0) return "device_environment";
  if (environments > 0) return "environment";
  return "device";
}

const SCAN = 500;

/** Compare devices (and environments) on one workload: pick them, get their succeeded runs. */
export function CompareDevices() {
  const navigate = useNavigate();
  const runs = useQuery(runsQuery({ status: "succeeded", limit: SCAN }));
  const devices = useQuery(devicesQuery());
  const envs = useQuery(environmentsQuery());
  const workloads = useQuery(workloadsQuery());
  const [workload, setWorkload] = useState("");
  const [pickedDevices, setPickedDevices] = useState<Set<string>>(new Set());
  const [pickedEnvs, setPickedEnvs] = useState<Set<string>>(new Set());

  const options = useMemo(() => {
    const seen = new Map<string, { label: string; count: number }>();
    for (const r of runs.data?.items ?? []) {
      const k = workloadIdentity(r);
      const name = workloads.data?.items.find((w) => w.id === r.workload_id)?.name;
      const prev = seen.get(k);
      seen.set(k, {
        label: name ?? r.preset ?? prev?.label ?? describeWorkload(r.workload),
        count: (prev?.count ?? 0) + 1,
      });
    }
    return [...seen.entries()];
  }, [runs.data, workloads.data]);
  const chosen = workload || options[0]?.[0] || "";
  const sameWorkload = (runs.data?.items ?? []).filter((r) => workloadIdentity(r) === chosen);
  const matching = sameWorkload.filter(
    (r) =>
      (pickedDevices.size === 0 || (r.device_id !== null && pickedDevices.has(r.device_id))) &&
      (pickedEnvs.size === 0 || (r.environment_id !== null && pickedEnvs.has(r.environment_id))),
  );
  const deviceIds = new Set(sameWorkload.map((r) => r.device_id));
  const envIds = new Set(sameWorkload.map((r) => r.environment_id));
  const toggle = (set: Set<string>, id: string, apply: (s: Set<string>) => void) => {
    const next = new Set(set);
    if (next.has(id)) next.delete(id);
    else next.add(id);
    apply(next);
  };

  return (
    <section>
      <h1>Compare devices</h1>
      <p className="muted small">
        Choose a workload, then the devices and environments to put side by side. Their succeeded
        runs are compared, repeats grouped with mean, CV and confidence intervals.
      </p>
      <QueryState isPending={runs.isPending} error={runs.error} />
      {runs.data && options.length === 0 && <p className="muted">No succeeded runs yet.</p>}
      {options.length > 0 && (
        <div className="card form">
          <label className="field">
            <span>Workload</span>
            <select
              value={chosen}
              onChange={(e) => setWorkload(e.target.value)}
              data-testid="pick-workload"
            >
              {options.map(([k, o]) => (
                <option key={k} value={k}>
                  {o.label} ({o.count} {o.count === 1 ? "run" : "runs"})
                </option>
              ))}
            </select>
          </label>
          <div className="form-grid">
            <fieldset>
              <legend>Devices</legend>
              {(devices.data?.items ?? [])
                .filter((d) => deviceIds.has(d.id))
                .map((d) => (
                  <label className="inline block" key={d.id}>
                    <input
                      type="checkbox"
                      data-testid="pick-device"
                      checked={pickedDevices.has(d.id)}
                      onChange={() => toggle(pickedDevices, d.id, setPickedDevices)}
                    />{" "}
                    {d.name} <span className="muted small">{d.media ?? d.kind}</span>
                  </label>
                ))}
              {deviceIds.size === 0 && <p className="muted small">These runs name no device.</p>}
            </fieldset>
            <fieldset>
              <legend>Environments</legend>
              {(envs.data?.items ?? [])
                .filter((e) => envIds.has(e.id))
                .map((e) => (
                  <label className="inline block" key={e.id}>
                    <input
                      type="checkbox"
                      checked={pickedEnvs.has(e.id)}
                      onChange={() => toggle(pickedEnvs, e.id, setPickedEnvs)}
                    />{" "}
                    {e.name}
                  </label>
                ))}
              {![...envIds].some((id) => id !== null) && (
                <p className="muted small">These runs have no environment.</p>
              )}
            </fieldset>
          </div>
          <p data-testid="pick-matching">
            {matching.length} matching succeeded run{matching.length === 1 ? "" : "s"}
            {runs.data && runs.data.total > SCAN && (
              <span className="muted small"> (among the newest {SCAN})</span>
            )}
          </p>
          <ul className="small">
            {matching.slice(0, 20).map((r) => (
              <li key={r.id}>
                {r.name || r.id.slice(0, 8)} · {r.device_name ?? r.target_path} ·{" "}
                {formatTimestamp(r.finished_at)}
              </li>
            ))}
          </ul>
          <button
            type="button"
            className="btn btn-primary"
            disabled={matching.length < 2}
            data-testid="pick-compare"
            onClick={() =>
              navigate(
                compareHref({
                  runs: matching.map((r) => r.id).reverse(),
                  groupBy: groupFor(
                    pickedDevices.size || deviceIds.size > 1 ? 1 : 0,
                    pickedEnvs.size,
                  ),
                }),
              )
            }
          >
            Compare {matching.length} {matching.length === 1 ? "run" : "runs"}
          </button>
        </div>
      )}
    </section>
  );
}
