import { meterLabel, type PolicyMeter } from "../../lib/policy";

/** The value sent as RunCreate.meter: a meter name, "" for none, null for each host's default. */
export type MeterChoice = string | null;

/**
 * A select over the meters the host configured (`iowatt-agent meters set NAME SPEC`), the
 * host's default marked, plus "none". Never a free-text spec: specs stay on the host.
 */
export function MeterSelect({
  id,
  meters,
  defaultMeter,
  value,
  onChange,
  perHostDefault = false,
}: {
  id: string;
  meters: PolicyMeter[];
  defaultMeter: string | null;
  value: MeterChoice;
  onChange: (v: MeterChoice) => void;
  /** Offer "each host's default" (null): campaigns span hosts with different meters. */
  perHostDefault?: boolean;
}) {
  const DEFAULT = "@host-default";
  return (
    <select
      id={id}
      name="meter"
      value={value === null ? DEFAULT : value}
      onChange={(e) => onChange(e.target.value === DEFAULT ? null : e.target.value)}
      data-testid="meter-select"
    >
      {perHostDefault && <option value={DEFAULT}>each host's default meter</option>}
      {meters.map((m) => (
        <option key={m.name} value={m.name}>
          {meterLabel(m, defaultMeter)}
        </option>
      ))}
      <option value="">none (no power measurement)</option>
    </select>
  );
}
