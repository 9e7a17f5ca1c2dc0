// Where an imported or published run's figures come from (run.origin, backend/imports): shown
// wherever a run is named (runs list, run page, comparisons) so nobody takes it for a measurement here.
import "./origin-badge.css";
import type { components } from "../../client/schema";
import { downloadSource } from "../../queries/imports";
import { DownloadButton } from "../DownloadButton";

type Origin = components["schemas"]["RunOrigin"];

export function OriginBadge({ origin }: { origin: Origin | null | undefined }) {
  if (!origin) return null;
  const published = origin.kind === "published";
  const title = published
    ? `published figures${origin.reference ? ` (${origin.reference})` : ""}: not measured here`
    : `imported from ${origin.tool}${origin.version ? ` ${origin.version}` : ""} (${origin.format}${
        origin.file_name ? `, ${origin.file_name}` : ""
      }): settings not controlled by iowatt`;
  return (
    <span
      className={`badge ${published ? "badge-published" : "badge-import"}`}
      title={title}
      data-testid="run-origin"
      data-origin={origin.kind}
    >
      {origin.label}
    </span>
  );
}

/** Downloads the file an imported or published run was made of, as it was imported; a run made
 * of several files (a vdbench output directory) offers each of them. */
export function SourceButton({ runId, origin }: { runId: string; origin?: Origin | null }) {
  const files = origin?.files ?? [];
  if (files.length > 1)
    return (
      <>
        {files.map((f) => (
          <DownloadButton
            key={f.file_name}
            fetchFile={() => downloadSource(runId, f.file_name)}
            label={`Download ${f.file_name}`}
            title="one of the imported files, byte for byte"
            testId="source-download-file"
          />
        ))}
      </>
    );
  return (
    <DownloadButton
      fetchFile={() => downloadSource(runId)}
      label="Download original"
      title="the imported file, byte for byte"
      testId="source-download"
    />
  );
}
