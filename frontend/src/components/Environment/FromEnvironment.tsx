import { useQuery } from "@tanstack/react-query";
import type { EnvironmentRead } from "../../client/types";
import { environmentsQuery } from "../../queries/environments";

export interface Protection {
  protection: string;
  /** drives in all: the RAID set's members and its hot spares (a candidate's count) */
  count: number;
  hotSpares: number;
}

/** A procurement candidate's protection and drive count from one of the team's environments. */
export function protectionOf(e: EnvironmentRead): Protection | null {
  if (!e.protection || !e.member_count) return null;
  const spares = e.topology.raid?.hot_spares ?? 0;
  return { protection: e.protection, count: e.member_count + spares, hotSpares: spares };
}

/** "From an environment": the team's environments with a RAID level; picking one fills the form. */
export function FromEnvironment({
  teamId,
  onPick,
}: {
  teamId: string;
  onPick: (p: Protection) => void;
}) {
  const q = useQuery(environmentsQuery(teamId));
  const usable = (q.data?.items ?? []).filter((e) => protectionOf(e) !== null);
  if (usable.length === 0) return null;
  return (
    <label className="field" data-testid="protection-from-environment">
      <span>From an environment</span>
      <select
        value=""
        onChange={(e) => {
          const env = usable.find((x) => x.id === e.target.value);
          const p = env && protectionOf(env);
          if (p) onPick(p);
        }}
      >
        <option value="">— its protection and drives —</option>
        {usable.map((e) => (
          <option key={e.id} value={e.id}>
            {e.name}: {e.protection}, {protectionOf(e)?.count} drives
          </option>
        ))}
      </select>
    </label>
  );
}
