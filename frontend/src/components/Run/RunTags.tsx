import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useId, useState } from "react";
import "./runs-list.css";
import { Link } from "react-router-dom";
import type { RunRead } from "../../client/types";
import { errorMessage } from "../../lib/errors";
import { useCan } from "../../lib/role";
import { tagProblem } from "../../lib/runFilters";
import { keys } from "../../queries/keys";
import { setRunTags, tagsQuery } from "../../queries/runs";

/** A run's tags as chips; each links to the runs list filtered by it. */
export function TagChips({ tags, small }: { tags: readonly string[]; small?: boolean }) {
  if (tags.length === 0) return null;
  return (
    <span className={`tag-chips${small ? " small" : ""}`} data-testid="tag-chips">
      {tags.map((t) => (
        <Link
          key={t}
          className="tag-chip"
          to={`/runs?${new URLSearchParams({ tag: t })}`}
          data-testid="tag-chip"
          title={`Runs tagged ${t}`}
        >
          {t}
        </Link>
      ))}
    </span>
  );
}

const MAX_TAGS = 20;

/**
 * The run page's tags: chips for everyone; members of the run's team add (Enter) and remove
 * (×) tags. Each change is saved at once (PUT /runs/{id}/tags) and the server's answer is shown.
 */
export function RunTags({ run }: { run: RunRead }) {
  const qc = useQueryClient();
  const can = useCan();
  const editable = can("run.tag", run.team_id);
  const [draft, setDraft] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const listId = useId();
  const known = useQuery({ ...tagsQuery(run.team_id), enabled: editable });
  const save = useMutation({
    mutationFn: (tags: string[]) => setRunTags(run.id, tags),
    onSuccess: (updated) => {
      qc.setQueryData(keys.runs.detail(run.id), updated);
      qc.invalidateQueries({ queryKey: keys.runs.lists() });
      qc.invalidateQueries({ queryKey: keys.runs.allTags() });
      setDraft("");
    },
  });

  const add = () => {
    const t = draft.trim();
    if (!t) return;
    const why = tagProblem(t);
    if (why) return setProblem(why);
    if (run.tags.includes(t)) return setDraft("");
    if (run.tags.length >= MAX_TAGS) return setProblem(`a run has at most ${MAX_TAGS} tags`);
    setProblem(null);
    save.mutate([...run.tags, t]);
  };

  if (!editable) {
    return run.tags.length > 0 ? (
      <div className="run-tags" data-testid="run-tags">
        <TagChips tags={run.tags} />
      </div>
    ) : null;
  }
  return (
    <div className="run-tags" data-testid="run-tags">
      {run.tags.map((t) => (
        <span key={t} className="tag-chip" data-testid="tag-chip">
          <Link to={`/runs?${new URLSearchParams({ tag: t })}`}>{t}</Link>
          <button
            type="button"
            className="tag-remove"
            aria-label={`Remove tag ${t}`}
            data-testid="tag-remove"
            disabled={save.isPending}
            onClick={() => save.mutate(run.tags.filter((x) => x !== t))}
          >
            ×
          </button>
        </span>
      ))}
      <input
        className="tag-input"
        placeholder={run.tags.length ? "add a tag" : "add a tag (Enter)"}
        aria-label="Add a tag"
        data-testid="tag-input"
        list={listId}
        maxLength={64}
        value={draft}
        disabled={save.isPending}
        onChange={(e) => {
          setDraft(e.target.value);
          setProblem(null);
        }}
        onKeyDown={(e) => {
          if (e.key === "Enter") {
            e.preventDefault();
            add();
          }
        }}
      />
      <datalist id={listId}>
        {(known.data?.items ?? [])
          .filter((k) => !run.tags.includes(k.tag))
          .map((k) => (
            <option key={k.tag} value={k.tag} />
          ))}
      </datalist>
      {(problem || save.error) && (
        <span className="field-error small" role="alert" data-testid="tag-error">
          {problem ?? errorMessage(save.error)}
        </span>
      )}
    </div>
  );
}
