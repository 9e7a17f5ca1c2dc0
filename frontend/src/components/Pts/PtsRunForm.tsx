import { formatBytes, formatSeconds } from "../../lib/format";
import { ADD_TARGET_COMMAND } from "../../lib/policy";
import {
  complianceName,
  HIR_BURST_S,
  HIR_BURSTS,
  PTS_PROFILES,
  PTS_TESTS,
  type PtsDraft,
  type PtsPlan,
  ROUND_S,
  THROUGHPUT_BLOCK_SIZES,
  WINDOW_ROUNDS,
  WSAT_HOURS,
  waitStates,
} from "../../lib/pts";
import { ASSUMED_BYTES_PER_S } from "../../lib/workload";
import { type Errors, Field } from "../Field";
import { bsLabel } from "./pts";
import "./pts.css";

/** The tests the form offers: Throughput twice, one block size per run (the specification's
 * 128 KiB and 1024 KiB tests, each with its own purge). */
const TESTS: { value: string; label: string; draft: Partial<PtsDraft> }[] = [
  { value: "iops", label: "IOPS (block size × R/W mix)", draft: { test: "iops" } },
  ...THROUGHPUT_BLOCK_SIZES.map((bs) => ({
    value: `throughput-${bs}`,
    label: `Throughput, SEQ ${bsLabel(bs)}`,
    draft: { test: "throughput" as const, throughputBs: bs },
  })),
  { value: "latency", label: "Latency (T1 Q1, to five nines)", draft: { test: "latency" } },
  { value: "wsat", label: "Write Saturation (RND 4 KiB writes)", draft: { test: "wsat" } },
  {
    value: "hir",
    label: "Host Idle Recovery (RND 4 KiB bursts, host idle between)",
    draft: { test: "hir" },
  },
];

/** A run's scale on the specification's run: "" is the specification's length. */
export const PTS_SCALES = [
  { value: "", label: "the specification's (60 s rounds, whole device): PTS-compliant" },
  { value: "0.1", label: "×0.1 — short trial, not PTS-compliant" },
  { value: "0.01", label: "×0.01 — short trial, not PTS-compliant" },
  { value: "0.001", label: "×0.001 — a quick look, not PTS-compliant" },
] as const;

/** The specification's length on the Client profile: still not compliant (its unstated parameters). */
const CLIENT_FULL_SCALE = "the specification's (60 s rounds, whole device): not compliant";

const PURGES: { value: PtsDraft["purge"]; label: string }[] = [
  { value: "auto", label: "auto: NVMe Format, ATA secure erase, or a discard of every block" },
  { value: "blkdiscard", label: "a discard of every block (blkdiscard)" },
  { value: "none", label: "none (not PTS-compliant)" },
];

function testValue(d: PtsDraft): string {
  return d.test === "throughput" ? `throughput-${d.throughputBs}` : d.test;
}

/** The PTS test, its purge and scale, and the plan of the run before it is queued. */
export function PtsRunForm({
  draft,
  plan,
  errors,
  hasDevice,
  refusal,
  limit = null,
  onChange,
}: {
  draft: PtsDraft;
  plan: PtsPlan | undefined;
  errors: Errors;
  /** the host lists a raw device target */
  hasDevice: boolean;
  /** why the host refuses writes on the chosen target (null: it does not) */
  refusal: string | null;
  /** why the host's runtime limit refuses the rounds (null: it does not) */
  limit?: string | null;
  onChange: (d: Partial<PtsDraft>) => void;
}) {
  return (
    <div className="form-grid" data-testid="pts-builder">
      <Field label="SNIA PTS test" name="pts_test" errors={errors}>
        <select
          id="f-pts_test"
          name="pts_test"
          value={testValue(draft)}
          data-testid="pts-test"
          onChange={(e) => {
            const t = TESTS.find((x) => x.value === e.target.value);
            if (t) onChange(t.draft);
          }}
        >
          {TESTS.map((t) => (
            <option key={t.value} value={t.value}>
              {t.label}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Profile"
        name="pts_profile"
        errors={errors}
        hint="Client: Throughput 1024 KiB only; never called compliant (the sources do not state all of its parameters)"
      >
        <select
          id="f-pts_profile"
          name="pts_profile"
          value={draft.profile}
          data-testid="pts-profile"
          onChange={(e) => onChange({ profile: e.target.value as PtsDraft["profile"] })}
        >
          {PTS_PROFILES.map((p) => (
            <option key={p.value} value={p.value}>
              {p.label}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Scale"
        name="scale"
        className="span-2"
        errors={errors}
        hint="a short trial: shorter rounds on a share of the device; its figures say “not PTS-compliant” everywhere"
      >
        <select
          id="f-scale"
          name="scale"
          value={draft.scale}
          data-testid="pts-scale"
          onChange={(e) => onChange({ scale: e.target.value })}
        >
          {PTS_SCALES.map((s) => (
            <option key={s.value} value={s.value}>
              {s.value === "" && draft.profile === "client" ? CLIENT_FULL_SCALE : s.label}
            </option>
          ))}
        </select>
      </Field>
      <Field
        label="Purge"
        name="pts_purge"
        className="span-2"
        errors={errors}
        hint="the method used is in the result"
      >
        <select
          id="f-pts_purge"
          name="pts_purge"
          value={draft.purge}
          data-testid="pts-purge-select"
          onChange={(e) => onChange({ purge: e.target.value as PtsDraft["purge"] })}
        >
          {PURGES.map((p) => (
            <option key={p.value} value={p.value}>
              {p.label}
            </option>
          ))}
        </select>
      </Field>
      {!hasDevice && (
        <div className="policy-empty small span-all" data-testid="pts-no-device">
          A SNIA PTS run purges and writes a whole raw block device: this host lists none. On the
          host, as root, list one and allow destructive writes to it:
          <pre className="command">
            {ADD_TARGET_COMMAND.replace("PATH", "--device /dev/disk/by-id/NAME --destructive")}
          </pre>
        </div>
      )}
      {hasDevice && refusal && (
        <p className="policy-refusal small span-all" data-testid="write-refusal">
          A SNIA PTS run writes the whole device, which this target refuses: {refusal}
        </p>
      )}
      {limit && (
        <p className="policy-refusal small span-all" data-testid="pts-limit">
          {limit}
        </p>
      )}
      {draft.kept && (
        <p className="small span-all" data-testid="pts-kept">
          A re-run with the parameters the run had (shown below); changing a choice above plans the
          specification's run at the chosen scale instead.
        </p>
      )}
      {plan && <PtsPlanBox plan={plan} />}
    </div>
  );
}

/** What the run will do and how long it may take, before it is queued. */
export function PtsPlanBox({ plan }: { plan: PtsPlan }) {
  const p = plan.spec;
  const t = PTS_TESTS[p.test];
  const steady = t.steadyState;
  return (
    <div className="small span-all pts-plan" data-testid="pts-plan">
      <p>
        <strong data-testid="pts-plan-duration">
          {plan.hirSeconds > 0 ? "Rounds and wait states" : "Rounds"}:{" "}
          {formatSeconds(plan.minRoundsSeconds)} to {formatSeconds(plan.maxRoundsSeconds)}
        </strong>{" "}
        {steady
          ? `(steady state can hold from round ${WINDOW_ROUNDS}; at most ${plan.roundLimit} rounds)`
          : `(until ${plan.wsatBytes != null ? formatBytes(plan.wsatBytes) : "4 × the tested region"} is written or ${plan.roundLimit} rounds have run, whichever first: the specification's ${WSAT_HOURS} hours at ${ROUND_S} s rounds)`}
        {plan.hirSeconds > 0
          ? `, including the wait states and their returns to baseline (${formatSeconds(plan.hirSeconds)})`
          : ""}
        {plan.wipc ? ", plus the purge and the preconditioning" : ", plus the purge"}
        {plan.wipc && plan.preconditioningBytes != null && plan.preconditioningSeconds != null
          ? ` (${formatBytes(plan.preconditioningBytes)} of SEQ 128 KiB writes: about ${formatSeconds(plan.preconditioningSeconds)} at ${Math.round(ASSUMED_BYTES_PER_S / 1048576)} MiB/s; the device decides)`
          : ""}
        {plan.wipc
          ? ""
          : " (no workload-independent preconditioning: the test starts from the purged state)"}
        .
      </p>
      <dl className="pts-facts">
        <dt>Each round</dt>
        <dd>
          {t.label}: {plan.elements} element{plan.elements === 1 ? "" : "s"}, {p.round_s} s each (
          {formatSeconds(plan.roundSeconds)} a round), T{plan.threads} Q{plan.iodepth}, {p.ioengine}
          ; every round's figures are kept
        </dd>
        {p.test === "hir" && (
          <>
            <dt>Wait states</dt>
            <dd data-testid="pts-plan-hir">
              {waitStates(p)
                .map((w) => `WS${w}: ${w * (p.burst_s ?? HIR_BURST_S)} s idle`)
                .join(", ")}{" "}
              after each of {p.bursts ?? HIR_BURSTS} bursts of {p.burst_s ?? HIR_BURST_S} s, each
              wait state followed by {p.bursts ?? HIR_BURSTS} bursts' length without idle (the
              return to baseline)
            </dd>
          </>
        )}
        <dt>Tested region</dt>
        <dd data-testid="pts-plan-region">
          {plan.regionBytes != null
            ? `${formatBytes(plan.regionBytes)} (${p.capacity_fraction === 1 ? "the whole device" : `${p.capacity_fraction} of it, from its first byte`})`
            : p.capacity_fraction === 1
              ? "the whole device"
              : `${p.capacity_fraction} of the device`}
        </dd>
      </dl>
      <p data-testid="pts-plan-compliance">
        {plan.compliant ? (
          <span className="badge badge-succeeded">{complianceName(p.profile)} parameters</span>
        ) : (
          <>
            <span className="badge validity">not {complianceName(p.profile)}</span>{" "}
            {plan.deviations.join("; ")}
          </>
        )}
      </p>
    </div>
  );
}
