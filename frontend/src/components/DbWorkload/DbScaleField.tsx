import type { WorkloadRead } from "../../client/types";
import { specOf } from "../../lib/fileWorkload";
import { formatCount } from "../../lib/format";
import { Field } from "../Field";
import { runScaleFactor, ScaleField } from "../FileWorkload/ScaleField";
import { type DbSpecLike, formatSf, isDbKind, minimumStreams } from "./dbWorkload";

type Props = Parameters<typeof ScaleField>[0];

/**
 * New run's scale for a TPC-H or heap/B-tree workload: the run's `scale` multiplies the scale
 * factor (TPC-H: SF 5 is scale 5 of an SF 1 preset) or the records N (heap/B-tree), shown as
 * typed. Other kinds get the file workloads' ScaleField.
 */
export function WorkloadScaleField(props: Props) {
  const spec = specOf(props.workload) as DbSpecLike;
  if (!isDbKind(spec.kind)) return <ScaleField {...props} />;
  return <DbScaleField {...props} />;
}

export function dbScaled(w: WorkloadRead, text: string): string | null {
  const spec = specOf(w) as DbSpecLike;
  const factor = runScaleFactor(w, text);
  if (factor === null) return null;
  const f = factor ?? 1;
  if (spec.kind === "tpch" && spec.tpch) {
    const sf = Number((spec.tpch.scale_factor * f).toPrecision(6));
    const streams = spec.tpch.streams ?? minimumStreams(sf);
    return `SF ${formatSf(sf)} (≈ ${formatSf(sf)} GB of raw data), ${streams} throughput stream${streams === 1 ? "" : "s"}`;
  }
  if (spec.kind === "heap_btree" && spec.heap_btree)
    return `${formatCount(Math.round(spec.heap_btree.records * f))} records, ${formatCount(spec.heap_btree.queries)} point queries per fraction`;
  if (spec.kind === "innodb_flush" && spec.innodb_flush) {
    const s = Math.max(1, Math.round((spec.innodb_flush.seconds ?? 0) * f));
    return `${s} s measured per setting, ${(spec.innodb_flush.settings ?? []).length} settings`;
  }
  return null;
}

function DbScaleField({ workload, value, onChange, errors, name = "scale" }: Props) {
  const spec = specOf(workload) as DbSpecLike;
  const text = dbScaled(workload, value);
  return (
    <>
      <Field
        label="Scale"
        name={name}
        errors={errors}
        hint={
          spec.kind === "tpch"
            ? "× the scale factor (1 = as saved; 5 of an SF 1 preset is SF 5)"
            : spec.kind === "innodb_flush"
              ? "× the seconds per setting and the warm-up (1 = as saved; at least 1 s)"
              : "× the records N (1 = as saved)"
        }
      >
        <input
          id={`f-${name}`}
          name={name}
          inputMode="decimal"
          value={value}
          onChange={(e) => onChange(e.target.value)}
          data-testid="scale-input"
        />
      </Field>
      <div className="small span-2 scale-estimate" data-testid="scale-estimate">
        {text === null ? (
          <span className="field-error">enter a number above 0, at most 1000</span>
        ) : (
          <strong data-testid="scale-db">{text}</strong>
        )}
      </div>
    </>
  );
}
