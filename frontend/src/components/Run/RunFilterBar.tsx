import { useQuery } from "@tanstack/react-query";
import { useEffect, useId, useState } from "react";
import "./runs-list.css";
import { RUN_STATUSES } from "../../client/types";
import { useListTeam } from "../../lib/role";
import {
  type IdFilter,
  isFiltered,
  NO_FILTERS,
  RUN_SORTS,
  RUN_SOURCES,
  type RunFilters,
  tagProblem,
  withFilter,
} from "../../lib/runFilters";
import { agentsQuery } from "../../queries/agents";
import { campaignsQuery } from "../../queries/campaigns";
import { devicesQuery } from "../../queries/devices";
import { environmentsQuery } from "../../queries/environments";
import { tagsQuery } from "../../queries/runs";
import { workloadsQuery } from "../../queries/workloads";
import { EnvironmentFilters } from "../Environment/EnvironmentFilters";

/** How long the search box waits after the last key before it asks the server. */
export const SEARCH_DEBOUNCE_MS = 300;

function IdSelect({
  label,
  field,
  filters,
  options,
  onChange,
}: {
  label: string;
  field: IdFilter;
  filters: RunFilters;
  options: { id: string; name: string }[] | undefined;
  onChange: (f: RunFilters) => void;
}) {
  const value = filters[field] ?? "";
  // a filter the URL names but the list does not hold (yet, or any more) still shows as chosen
  const known = options ?? [];
  const listed = value === "" || known.some((o) => o.id === value);
  return (
    <label className="filter">
      <span>{label}</span>
      <select
        value={value}
        data-testid={`filter-${field}`}
        onChange={(e) => onChange(withFilter(filters, field, e.target.value || undefined))}
      >
        <option value="">any</option>
        {!listed && <option value={value}>{value.slice(0, 8)}…</option>}
        {known.map((o) => (
          <option key={o.id} value={o.id}>
            {o.name}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The runs list's filters: every control writes the URL (Runs reads it back). */
export function RunFilterBar({
  filters,
  onChange,
}: {
  filters: RunFilters;
  onChange: (f: RunFilters) => void;
}) {
  // the choices of the switcher's team (all the user's under "All my teams"), as the list
  const { teamId } = useListTeam();
  const agents = useQuery(agentsQuery(teamId));
  const devices = useQuery(devicesQuery(teamId));
  const environments = useQuery(environmentsQuery(teamId));
  const workloads = useQuery(workloadsQuery(teamId));
  const campaigns = useQuery(campaignsQuery(teamId));
  const tags = useQuery(tagsQuery(teamId));
  const tagListId = useId();

  // the search box types freely; the URL (and the query) follows after a pause
  const [text, setText] = useState(filters.q ?? "");
  useEffect(() => setText(filters.q ?? ""), [filters.q]);
  useEffect(() => {
    const q = text.trim() || undefined;
    if (q === filters.q) return;
    const t = setTimeout(() => onChange(withFilter(filters, "q", q)), SEARCH_DEBOUNCE_MS);
    return () => clearTimeout(t);
  }, [text, filters, onChange]);

  const [tagDraft, setTagDraft] = useState("");
  const [tagError, setTagError] = useState<string | null>(null);
  const addTag = () => {
    const t = tagDraft.trim();
    if (!t) return;
    const why = tagProblem(t);
    if (why) return setTagError(why);
    setTagError(null);
    setTagDraft("");
    if (!filters.tag.includes(t)) onChange(withFilter(filters, "tag", [...filters.tag, t]));
  };

  const toggleStatus = (s: (typeof RUN_STATUSES)[number]) =>
    onChange(
      withFilter(
        filters,
        "status",
        filters.status.includes(s) ? filters.status.filter((x) => x !== s) : [...filters.status, s],
      ),
    );

  return (
    <div className="card run-filters" data-testid="run-filters">
      <div className="filter-row">
        <label className="filter filter-search">
          <span>Search</span>
          <input
            type="search"
            placeholder="name, device model, workload, host or tag"
            value={text}
            data-testid="filter-q"
            maxLength={200}
            onChange={(e) => setText(e.target.value)}
          />
        </label>
        <fieldset className="filter filter-status" data-testid="filter-status">
          <legend>Status</legend>
          {RUN_STATUSES.map((s) => (
            <label key={s} className={`status-toggle${filters.status.includes(s) ? " on" : ""}`}>
              <input
                type="checkbox"
                checked={filters.status.includes(s)}
                onChange={() => toggleStatus(s)}
                data-testid={`filter-status-${s}`}
              />
              {s}
            </label>
          ))}
        </fieldset>
        <label className="filter">
          <span>Sort</span>
          <select
            value={filters.sort}
            data-testid="filter-sort"
            onChange={(e) =>
              onChange(withFilter(filters, "sort", e.target.value as RunFilters["sort"]))
            }
          >
            {RUN_SORTS.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <div className="filter-row">
        <IdSelect
          label="Host"
          field="agent_id"
          filters={filters}
          options={agents.data?.items}
          onChange={onChange}
        />
        <IdSelect
          label="Device"
          field="device_id"
          filters={filters}
          options={devices.data?.items}
          onChange={onChange}
        />
        <IdSelect
          label="Environment"
          field="environment_id"
          filters={filters}
          options={environments.data?.items}
          onChange={onChange}
        />
        <IdSelect
          label="Workload"
          field="workload_id"
          filters={filters}
          options={workloads.data?.items}
          onChange={onChange}
        />
        <IdSelect
          label="Campaign"
          field="campaign_id"
          filters={filters}
          options={campaigns.data?.items}
          onChange={onChange}
        />
        <label className="filter">
          <span>Source</span>
          <select
            value={filters.source ?? ""}
            data-testid="filter-source"
            onChange={(e) =>
              onChange(
                withFilter(
                  filters,
                  "source",
                  (e.target.value || undefined) as RunFilters["source"],
                ),
              )
            }
          >
            <option value="">any</option>
            {RUN_SOURCES.map((s) => (
              <option key={s} value={s}>
                {s === "agent" ? "run by an agent" : "uploaded (CI)"}
              </option>
            ))}
          </select>
        </label>
        <label className="filter">
          <span>Created from</span>
          <input
            type="date"
            value={filters.from ?? ""}
            data-testid="filter-from"
            onChange={(e) => onChange(withFilter(filters, "from", e.target.value || undefined))}
          />
        </label>
        <label className="filter">
          <span>to</span>
          <input
            type="date"
            value={filters.to ?? ""}
            min={filters.from}
            data-testid="filter-to"
            onChange={(e) => onChange(withFilter(filters, "to", e.target.value || undefined))}
          />
        </label>
        <label className="filter">
          <span>Tag</span>
          <input
            list={tagListId}
            placeholder="add (Enter)"
            value={tagDraft}
            maxLength={64}
            data-testid="filter-tag-input"
            onChange={(e) => {
              setTagDraft(e.target.value);
              setTagError(null);
            }}
            onKeyDown={(e) => {
              if (e.key === "Enter") {
                e.preventDefault();
                addTag();
              }
            }}
          />
          <datalist id={tagListId}>
            {(tags.data?.items ?? []).map((t) => (
              <option key={t.tag} value={t.tag}>
                {`${t.runs} run${t.runs === 1 ? "" : "s"}`}
              </option>
            ))}
          </datalist>
        </label>
      </div>
      <div className="filter-row" data-testid="filter-env">
        <EnvironmentFilters
          value={filters.env}
          onChange={(env) => onChange(withFilter(filters, "env", env))}
        />
      </div>
      {(filters.tag.length > 0 || tagError || isFiltered(filters)) && (
        <div className="filter-row filter-active">
          {filters.tag.map((t) => (
            <span key={t} className="tag-chip" data-testid="filter-tag">
              {t}
              <button
                type="button"
                className="tag-remove"
                aria-label={`Remove tag filter ${t}`}
                onClick={() =>
                  onChange(
                    withFilter(
                      filters,
                      "tag",
                      filters.tag.filter((x) => x !== t),
                    ),
                  )
                }
              >
                ×
              </button>
            </span>
          ))}
          {tagError && (
            <span className="field-error small" role="alert">
              {tagError}
            </span>
          )}
          {isFiltered(filters) && (
            <button
              type="button"
              className="btn btn-small"
              data-testid="filter-clear"
              onClick={() => {
                setText("");
                onChange({ ...NO_FILTERS, sort: filters.sort });
              }}
            >
              Clear filters
            </button>
          )}
        </div>
      )}
    </div>
  );
}
