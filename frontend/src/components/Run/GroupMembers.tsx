import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router-dom";
import type { RunRead } from "../../client/types";
import {
  formatEnergy,
  formatIops,
  formatNs,
  formatThroughput,
  formatWatts,
} from "../../lib/format";
import { type RunGroupRead, runGroupQuery } from "../../queries/runGroups";
import { ScrollBox } from "../ScrollBox";
import { figuresOf } from "./TargetResults";

type Member = RunGroupRead["members"][number];

/** "+1.2 ms" / "−0.3 ms": a signed duration (a skew or an offset), "—" when not known. */
export function signedNs(ns: number | null | undefined): string {
  if (ns == null) return "—";
  return `${ns < 0 ? "−" : "+"}${formatNs(Math.abs(ns))}`;
}

/** A member's clock against the server's: its offset and the bound the round trip gives it. */
export function clockText(m: Pick<Member, "clock_offset_ns" | "clock_round_trip_ns">): string {
  if (m.clock_offset_ns == null) return "—";
  const bound = m.clock_round_trip_ns != null ? ` ± ${formatNs(m.clock_round_trip_ns / 2)}` : "";
  return `${signedNs(m.clock_offset_ns)}${bound}`;
}

/** The run page's group section: a member of a group run shows every member (its host, target,
 * status, clock offset with its bound, start skew from the group's instant), the combined
 * figures and energy, and says when the group is unsynchronized. Nothing for other runs. */
export function GroupMembers({ run }: { run: Pick<RunRead, "id" | "group"> }) {
  const groupId = run.group?.group_id;
  const group = useQuery({ ...runGroupQuery(groupId ?? ""), enabled: groupId != null });
  if (groupId == null) return null;
  if (!group.data) return <p className="muted small">Loading the group run…</p>;
  return <GroupTable group={group.data} current={run.id} />;
}

export function GroupTable({ group, current }: { group: RunGroupRead; current: string }) {
  const tolerance = formatNs(group.start_tolerance_ns);
  const combined = group.combined;
  const job = combined?.jobs[0];
  const f = figuresOf(job);
  return (
    <div className="card" data-testid="group-members">
      <h3>
        Group run: {group.members.length} hosts started at one instant ({group.status})
        {group.unsynchronized && (
          <>
            {" "}
            <span className="badge validity" data-testid="group-unsynchronized">
              unsynchronized
            </span>
          </>
        )}
      </h3>
      <p className="muted small">
        {group.start_at ? `Start instant (server clock): ${group.start_at}. ` : "Not started yet. "}
        Tolerance {tolerance}; every member ready within {group.prepare_timeout_s} s of the first
        {group.max_start_skew_ns != null &&
          `; largest start skew ${formatNs(group.max_start_skew_ns)}`}
        {group.shared_store && `; shared store: ${group.shared_store}`}.
        {group.unsynchronized &&
          " A member started further from the instant than the tolerance (plus half its clock's round trip), or its clock could not be bounded that closely: the hosts did not load the store at the same time."}
      </p>
      {group.stop_reason && (
        <p className="small" data-testid="group-stop">
          Stopped: {group.stop_reason}
        </p>
      )}
      <ScrollBox label="the group's members">
        <table className="table">
          <thead>
            <tr>
              <th>Host</th>
              <th>Target</th>
              <th>Status</th>
              <th
                className="num"
                title="the server's clock minus the host's, ± half the exchange's round trip"
              >
                Clock offset
              </th>
              <th
                className="num"
                title="its engine's start minus the group's instant (server time)"
              >
                Start skew
              </th>
              <th className="num">IOPS</th>
              <th className="num">Throughput</th>
              <th className="num">Energy</th>
            </tr>
          </thead>
          <tbody>
            {group.members.map((m) => {
              const mf = figuresOf(m.jobs[0]);
              return (
                <tr key={m.run_id} data-testid="group-member">
                  <td>
                    {m.run_id === current ? (
                      <strong>{m.agent_name}</strong>
                    ) : (
                      <Link to={`/runs/${m.run_id}`}>{m.agent_name}</Link>
                    )}
                  </td>
                  <td className="mono">{m.target_path}</td>
                  <td data-testid="member-status">
                    {m.status}
                    {m.status !== "succeeded" && m.error && (
                      <div className="muted small">{m.error}</div>
                    )}
                  </td>
                  <td className="num">{clockText(m)}</td>
                  <td className="num" data-testid="member-skew">
                    {signedNs(m.start_skew_ns)}
                    {m.missed_start && " (missed)"}
                  </td>
                  <td className="num">{formatIops(mf?.iops)}</td>
                  <td className="num">{formatThroughput(mf?.bw)}</td>
                  <td className="num">{formatEnergy(m.energy_j)}</td>
                </tr>
              );
            })}
            {!combined && ["failed", "cancelled"].includes(group.status) && (
              <tr data-testid="group-no-combined">
                <td colSpan={8} className="muted small">
                  No combined figure: {group.members.filter((m) => m.status === "succeeded").length}{" "}
                  of {group.members.length} members succeeded (a figure of some members is not the
                  group's). Each member's own figures are in its row.
                </td>
              </tr>
            )}
            {combined && (
              <tr data-testid="group-combined">
                <td colSpan={5}>
                  <strong>Combined</strong> ({combined.members} members
                  {combined.latency === "not_combined" ? "; latency percentiles not combined" : ""})
                </td>
                <td className="num">{formatIops(f?.iops)}</td>
                <td className="num">{formatThroughput(f?.bw)}</td>
                <td className="num">
                  {formatEnergy(combined.energy_j)}
                  {combined.load_w_mean != null && ` · ${formatWatts(combined.load_w_mean)}`}
                  {!combined.energy_complete && " (partial)"}
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </ScrollBox>
    </div>
  );
}
