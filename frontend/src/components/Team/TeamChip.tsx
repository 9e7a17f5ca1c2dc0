import { useListTeam } from "../../lib/role";
import "../Run/runs-list.css"; // .badge-team, also on pages that load no runs list

/**
 * A row's team, named under "All my teams" only (the switcher): a list scoped to one team has
 * nothing to tell apart. Row buttons check the role in this team (useCan(action, row.team_id)).
 */
export function TeamChip({ teamId }: { teamId: string }) {
  const { all, teamName } = useListTeam();
  if (!all) return null;
  return (
    <span className="badge badge-team" title="its team" data-testid="team-chip">
      {teamName(teamId)}
    </span>
  );
}
