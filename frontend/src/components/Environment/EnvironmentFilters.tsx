import { useState } from "react";
import { ENV_FACET_LABEL, ENV_FACETS, type EnvFacet, envFilterLabel } from "../../lib/envFacets";

/** Compare's filter on the runs' recorded environments: FIELD = VALUE chips (server: `env=`). */
export function EnvironmentFilters({
  value,
  onChange,
  leftOut = 0,
}: {
  value: string[];
  onChange: (env: string[]) => void;
  /** runs the server left out by the filter (Comparison.filtered_out) */
  leftOut?: number;
}) {
  const [field, setField] = useState<EnvFacet>("raid_level");
  const [text, setText] = useState("");
  const add = () => {
    const v = text.trim();
    if (!v) return;
    const f = `${field}:${v}`;
    if (!value.includes(f)) onChange([...value, f]);
    setText("");
  };
  return (
    <div
      className="inline env-filters"
      data-testid="env-filters"
      style={{ flexWrap: "wrap", maxWidth: "100%" }}
    >
      <label className="inline">
        Only environments with{" "}
        <select
          value={field}
          onChange={(e) => setField(e.target.value as EnvFacet)}
          data-testid="env-filter-field"
          style={{ maxWidth: "100%" }}
        >
          {ENV_FACETS.map((f) => (
            <option key={f} value={f}>
              {ENV_FACET_LABEL[f]}
            </option>
          ))}
        </select>
      </label>{" "}
      <input
        aria-label="value"
        placeholder="raid10, san, none…"
        value={text}
        size={12}
        style={{ maxWidth: "100%" }}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            add();
          }
        }}
        data-testid="env-filter-value"
      />{" "}
      <button type="button" className="btn btn-small" onClick={add} data-testid="env-filter-add">
        Filter
      </button>
      {value.map((f) => (
        <button
          key={f}
          type="button"
          className="btn btn-small chip"
          title="remove this filter"
          onClick={() => onChange(value.filter((x) => x !== f))}
          data-testid="env-filter-chip"
        >
          {envFilterLabel(f)} ×
        </button>
      ))}
      {value.length > 0 && leftOut > 0 && (
        <span className="muted small" data-testid="env-filter-left-out">
          {leftOut} run{leftOut === 1 ? "" : "s"} left out
        </span>
      )}
    </div>
  );
}
