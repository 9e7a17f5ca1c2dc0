import type { EnergyRead } from "../../client/types";

/**
 * The meter's accuracy tier, shown wherever an energy figure appears. Estimates are styled
 * apart (hatched, upper case) so a modelled figure never reads as a measurement.
 */
export function TierBadge({
  energy,
}: {
  energy: Pick<EnergyRead, "tier" | "tier_label" | "estimated">;
}) {
  if (!energy.tier) return null;
  if (energy.estimated) {
    return (
      <span
        className="tier-badge tier-estimate"
        data-testid="tier-badge"
        data-tier={energy.tier}
        title="Modelled from datasheet figures, not measured by a meter"
      >
        ESTIMATE · {energy.tier_label ?? "no meter"}
      </span>
    );
  }
  return (
    <span
      className={`tier-badge tier-${energy.tier}`}
      data-testid="tier-badge"
      data-tier={energy.tier}
      title={`Measured by a ${energy.tier_label ?? energy.tier}`}
    >
      {energy.tier_label ?? energy.tier}
    </span>
  );
}
