// Shaping and wording of a run's energy (GET /runs/{id}, `energy`) and its power series
// (GET /runs/{id}/power). Numbers stay in base units here; format.ts turns them into text.
import type { EnergyRead, PowerSeries } from "../client/types";
import { formatPercent, formatWatts } from "./format";

/** What each of the server's energy flags means, in words a reader can act on. */
export function flagText(
  flag: string,
  e: Pick<EnergyRead, "coverage" | "samples" | "idle_drift_w" | "accuracy_pct">,
): string {
  switch (flag) {
    case "low_coverage":
      return `Low coverage: the meter's samples cover only ${formatPercent(
        e.coverage == null ? null : e.coverage * 100,
      )} of the load window (gaps over 5 %), so part of the energy is interpolated.`;
    case "few_samples":
      return `Few samples: fewer than 100 readings during the load${
        e.samples == null ? "" : ` (${e.samples} in the whole run)`
      }; a longer run or a faster meter gives a firmer figure.`;
    case "no_idle_baseline":
      return "No idle baseline: no idle phase was measured, so energy above idle cannot be separated from the host's base load.";
    case "idle_drift":
      return `Idle drift: idle power after the run differs from before by ${formatWatts(
        e.idle_drift_w,
      )} (over 2 %), so the idle baseline and the energy above idle are less certain.`;
    case "estimate":
      return "Estimate: no meter measured this run; the figures are modelled from datasheet power and utilisation, not measured.";
    case "component_only":
      return "Component counter only (e.g. RAPL): this is the energy of a CPU/DRAM domain, not the wall power of the system.";
    case "accuracy_assumed":
      return `Accuracy assumed: the meter declares no accuracy, so ±${
        e.accuracy_pct == null ? "?" : e.accuracy_pct
      } % typical for its tier is assumed in the uncertainty.`;
    default:
      return flag.replace(/_/g, " ");
  }
}

/**
 * Whether the server is still computing a run's energy. Every other status is final (ok, failed
 * with a reason, no meter data, no meter): the UI polls only while this is true.
 */
export function energyComputing(e: Pick<EnergyRead, "status">): boolean {
  return e.status === "pending";
}

/** A few words for a run's energy when it has no figures, for table cells and column notes. */
export function energyStateShort(e: Pick<EnergyRead, "status">): string {
  switch (e.status) {
    case "ok":
      return "";
    case "pending":
      return "computing…";
    case "failed":
      return "unavailable";
    case "no_meter_data":
      return "no meter data";
    case "none":
      return "no meter";
  }
}

/** The sentence for a run's energy when it has no figures: its state and the server's reason. */
export function energyStateText(e: Pick<EnergyRead, "status" | "reason">): string {
  switch (e.status) {
    case "ok":
      return "";
    case "pending":
      return "energy: computing…";
    case "failed":
    case "no_meter_data":
      return `energy unavailable: ${e.reason ?? "no reason given"}`;
    case "none":
      return "energy unavailable: no meter configured for this run";
  }
}

/**
 * The command that stores a meter on the run's host, as this install runs its agent
 * (`iowatt-agent` is not on PATH after `make up`, and without --state-dir it writes the packaged
 * agent's /var/lib/iowatt-agent, which `make up`'s agent never reads). Told apart by the names the
 * installs give their agents: `make up` enrols "local-HOST" (scripts/up.sh: the checkout's .venv
 * and state .iowatt/agent), compose "compose-HOST" (deploy/agent-entrypoint.sh: the agent
 * container); any other is a packaged agent, whose state directory needs root.
 */
export function meterSetCommand(agentName: string | null | undefined, name = "NAME"): string {
  const args = `meters set ${name} SPEC`;
  // run from the checkout `make up` ran in (with IOWATT_STATE_DIR set: that directory's agent/)
  if (agentName?.startsWith("local-"))
    return `.venv/bin/iowatt-agent ${args} --state-dir .iowatt/agent`;
  if (agentName?.startsWith("compose-")) return `docker compose exec agent iowatt-agent ${args}`;
  return `sudo iowatt-agent ${args}`;
}

/** How to get energy figures when a run had no meter, with the command for the run's host. */
export function addMeterHint(agentName: string | null | undefined): string {
  const where = agentName?.startsWith("local-") ? " in the checkout make up ran in" : "";
  return ADD_METER_HINT.replace(
    "iowatt-agent meters set NAME SPEC",
    `${meterSetCommand(agentName)}${where}`,
  );
}

/** How to get energy figures when a run had no meter. */
export const ADD_METER_HINT =
  "Configure a wattmeter on the agent's host (iowatt-agent meters set NAME SPEC, e.g. ipmi://bmc-host, shelly://plug-host, hwmon:/sys/class/hwmon/hwmon3/power1_input, or estimate:IDLE_W,ACTIVE_W with datasheet watts for a labelled estimate), then choose it by name in the new-run form. The host decides which meters exist; the server never sends a meter spec.";

/** The same for a run uploaded from CI (source "import"): its power comes with the upload. */
export const UPLOAD_POWER_HINT =
  'The upload carried no power samples. To include them, add "power": {"meter": NAME, "tier": TIER, "samples": [{"t_ns": 0, "watts": 8.4}, …]} (t_ns from started_at) to the POST /api/v1/results body — docs/teams.md § Uploads from CI.';

export interface PhaseBand {
  name: string;
  /** Seconds relative to the start of the load phase, like every x value of the chart. */
  x1: number;
  x2: number;
}

export interface PowerChartRow {
  t_s: number;
  w_mean?: number;
  w_band?: [number, number];
  mbps?: number;
}

/** Power (mean and min–max band per bucket) and throughput merged on one time axis. */
export function powerChartData(
  power: Pick<PowerSeries, "points" | "phases" | "load_start_s">,
  throughput: { t_s: number; mbps: number }[],
): { rows: PowerChartRow[]; phases: PhaseBand[] } {
  const rows: PowerChartRow[] = [
    ...power.points.map((p) => ({
      t_s: p.t_s,
      w_mean: p.w_mean,
      w_band: [p.w_min, p.w_max] as [number, number],
    })),
    ...throughput.map((p) => ({ t_s: p.t_s, mbps: p.mbps })),
  ].sort((a, b) => a.t_s - b.t_s);
  const phases = power.phases
    .filter((p) => p.end_ns > p.start_ns)
    .map((p) => ({
      name: p.name,
      x1: p.start_ns / 1e9 - power.load_start_s,
      x2: p.end_ns / 1e9 - power.load_start_s,
    }));
  return { rows, phases };
}

/** "idle_before" → "idle before". */
export function phaseLabel(name: string): string {
  return name.replace(/_/g, " ");
}
