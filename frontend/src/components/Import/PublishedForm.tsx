// Published figures by hand (POST /imports/published): a datasheet's or review's numbers, stored
// as a run marked published, labelled everywhere as not measured here.
import { useState } from "react";
import { Link } from "react-router-dom";
import { errorMessage } from "../../lib/errors";
import {
  type ImportResult,
  importPublished,
  PUBLISHED_UNITS,
  type PublishedFigure,
} from "../../queries/imports";

/** The figures typed one a line, "test; value; unit" ("SEQ1M Q8T1 read; 7000; MB/s"), or the
 * line that does not read. */
export function parseFigures(text: string): { figures: PublishedFigure[]; error: string | null } {
  const figures: PublishedFigure[] = [];
  const lines = text.split("\n");
  for (const [i, raw] of lines.entries()) {
    const line = raw.trim();
    if (!line) continue;
    const parts = line.split(/\t|;/).map((p) => p.trim());
    const [test, value, unit] = parts;
    const n = Number(value);
    if (parts.length !== 3 || !test || value === "" || !Number.isFinite(n) || n < 0)
      return {
        figures,
        error: `line ${i + 1}: write "test; value; unit", e.g. "4K random read; 1000000; IOPS"`,
      };
    if (!(PUBLISHED_UNITS as readonly string[]).includes(unit ?? ""))
      return { figures, error: `line ${i + 1}: the unit is one of ${PUBLISHED_UNITS.join(", ")}` };
    figures.push({ test, value: n, unit: unit as PublishedFigure["unit"] });
  }
  if (!figures.length) return { figures, error: "type at least one figure" };
  return { figures, error: null };
}

/** The direction the server reads a figure as when none is given (backend/imports/service.py):
 * "write" when the test says write or wr, else read. */
export function figureDirection(test: string): "read" | "write" {
  return /write|wr\b/i.test(test) ? "write" : "read";
}

/** What the typed figures read as, before anything is stored: each with its unit and direction. */
function FiguresPreview({ text }: { text: string }) {
  if (!text.trim()) return null;
  const { figures, error } = parseFigures(text);
  return (
    <div className="small" data-testid="published-preview">
      {error ? (
        <span className="field-error">{error}</span>
      ) : (
        <>
          <span className="muted">
            {figures.length} figure{figures.length === 1 ? "" : "s"} read, to be labelled published:
          </span>
          <ul className="published-preview">
            {figures.map((f, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: a typed line's place is its identity
              <li key={i} data-testid="published-preview-figure">
                {f.test}: <strong>{f.value.toLocaleString("en-US")}</strong> {f.unit}{" "}
                <span className="muted">({figureDirection(f.test)})</span>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

export function PublishedForm({ teamId, onStored }: { teamId: string; onStored?: () => void }) {
  const [vendor, setVendor] = useState("");
  const [model, setModel] = useState("");
  const [reference, setReference] = useState("");
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [stored, setStored] = useState<ImportResult | null>(null);

  const submit = async () => {
    const { figures, error: bad } = parseFigures(text);
    if (!vendor.trim() || !model.trim() || !reference.trim()) {
      setError("vendor, model and where the figures are published are needed");
      return;
    }
    if (bad) {
      setError(bad);
      return;
    }
    setBusy(true);
    setError(null);
    try {
      setStored(
        await importPublished({
          team_id: teamId,
          vendor: vendor.trim(),
          model: model.trim(),
          reference: reference.trim(),
          figures,
        }),
      );
      onStored?.();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <details className="card" data-testid="published-form">
      <summary>Published figures (a datasheet or a review): not measured here</summary>
      <p className="muted small">
        A catalogue number beside a measurement: one figure a line, “test; value; unit” (units{" "}
        {PUBLISHED_UNITS.join(", ")}; MB/s = 10<sup>6</sup> bytes/s). The run is labelled “published
        by &lt;vendor&gt;: not measured here” wherever it shows.
      </p>
      <div className="published-row">
        <label className="field">
          <span>Vendor</span>
          <input
            value={vendor}
            onChange={(e) => setVendor(e.target.value)}
            data-testid="published-vendor"
          />
        </label>
        <label className="field">
          <span>Model</span>
          <input
            value={model}
            onChange={(e) => setModel(e.target.value)}
            data-testid="published-model"
          />
        </label>
        <label className="field published-reference">
          <span>Published at (URL, page)</span>
          <input
            value={reference}
            onChange={(e) => setReference(e.target.value)}
            data-testid="published-reference"
          />
        </label>
      </div>
      <label className="field">
        <span>Figures</span>
        <textarea
          rows={4}
          value={text}
          onChange={(e) => setText(e.target.value)}
          placeholder={"SEQ1M Q8T1 read; 7000; MB/s\n4K random read; 1000000; IOPS"}
          data-testid="published-figures"
        />
      </label>
      <FiguresPreview text={text} />
      <button
        type="button"
        className="btn btn-primary"
        disabled={busy}
        onClick={submit}
        data-testid="published-store"
      >
        Store published figures
      </button>
      {error && (
        <div className="alert alert-error" role="alert" data-testid="published-error">
          {error}
        </div>
      )}
      {stored && (
        <p className="alert alert-info" data-testid="published-stored">
          {stored.duplicate
            ? "Stored before: nothing added. "
            : "Stored, marked not measured here. "}
          {stored.runs
            .filter((r) => r.run_id)
            .map((r) => (
              <Link key={r.run_id} to={`/runs/${r.run_id}`}>
                {r.name}
              </Link>
            ))}
        </p>
      )}
    </details>
  );
}
