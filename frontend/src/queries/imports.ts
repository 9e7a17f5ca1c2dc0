// Imports (docs/imports.md): the only module that calls POST /api/v1/imports. A file goes as its
// own bytes (application/octet-stream, the labels as query parameters), pasted text as JSON.
import { queryOptions } from "@tanstack/react-query";
import { api, unwrap } from "../client";
import type { components } from "../client/schema";
import { ApiError } from "../lib/errors";
import { keys } from "./keys";

type S = components["schemas"];
export type ImportResult = S["ImportResult"];
export type ImportedRun = S["ImportedRun"];
export type ImportedJob = S["ImportedJob"];
export type ImportedDirection = S["ImportedDirection"];

export interface ImportLabels {
  teamId: string;
  host?: string;
  device?: string;
  name?: string;
  format?: string;
}

export type ImportFormat = S["ImportFormat"];

/** The formats the importers read, from the server's registry (GET /imports/formats): the Import
 * page's format list, as `iowatt import --list-formats` prints it. */
export const importFormatsQuery = () =>
  queryOptions({
    queryKey: keys.imports.formats(),
    queryFn: async () => unwrap(await api.GET("/api/v1/imports/formats")),
    staleTime: 60 * 60_000,
  });

/** A format hint's choices: "Detect" (no hint), then the server's formats by tool. */
export function formatOptions(
  formats: readonly ImportFormat[] | undefined,
): { value: string; label: string; title?: string }[] {
  return [
    { value: "", label: "Detect" },
    ...(formats ?? []).map((f) => ({
      value: f.format,
      label: `${f.tool}: ${f.file_kinds.join(" / ")}`,
      title: `${f.format}; versions ${f.versions.join(", ")}`,
    })),
  ];
}

function labelQuery(l: ImportLabels) {
  return {
    team_id: l.teamId,
    ...(l.host ? { host: l.host } : {}),
    ...(l.device ? { device: l.device } : {}),
    ...(l.name ? { name: l.name } : {}),
    ...(l.format ? { format: l.format } : {}),
  };
}

/** One file's bytes: a dry run answers what the server found, else it stores the runs. */
export async function importFile(
  file: File,
  labels: ImportLabels,
  dryRun: boolean,
): Promise<ImportResult> {
  return unwrap(
    await api.POST("/api/v1/imports", {
      params: { query: { ...labelQuery(labels), file_name: file.name, dry_run: dryRun } },
      // the generated type says JSON; the route also takes the file's bytes as they are
      body: file as never,
      bodySerializer: (b: unknown) => b as BodyInit,
      headers: { "Content-Type": "application/octet-stream" },
    }),
  );
}

/** Pasted text, as JSON. */
export async function importText(
  text: string,
  fileName: string,
  labels: ImportLabels,
  dryRun: boolean,
): Promise<ImportResult> {
  return unwrap(
    await api.POST("/api/v1/imports", {
      params: { query: { dry_run: dryRun } },
      body: {
        team_id: labels.teamId,
        text,
        file_name: fileName || "pasted.txt",
        ...(labels.host ? { host: labels.host } : {}),
        ...(labels.device ? { device: labels.device } : {}),
        ...(labels.name ? { name: labels.name } : {}),
        ...(labels.format ? { format: labels.format } : {}),
      },
    }),
  );
}

export type PublishedImport = S["PublishedImport"];
export type PublishedFigure = S["PublishedFigure"];
/** The units a published figure may be given in (the server's PublishedUnit). */
export const PUBLISHED_UNITS = [
  "B/s",
  "KB/s",
  "MB/s",
  "GB/s",
  "KiB/s",
  "MiB/s",
  "GiB/s",
  "IOPS",
  "kIOPS",
  "ns",
  "us",
  "µs",
  "ms",
] as const satisfies readonly PublishedFigure["unit"][];

/** A datasheet's or review's figures, stored as a run marked published (not measured here). */
export async function importPublished(body: PublishedImport): Promise<ImportResult> {
  return unwrap(await api.POST("/api/v1/imports/published", { body }));
}

/** The file an imported run was made of, byte for byte, and its name (GET /runs/{id}/source). */
export async function downloadSource(
  runId: string,
  file?: string,
): Promise<{ blob: Blob; name: string }> {
  const r = await api.GET("/api/v1/runs/{run_id}/source", {
    params: { path: { run_id: runId }, query: file === undefined ? {} : { file } },
    parseAs: "blob",
  });
  if (r.error !== undefined || r.data === undefined) throw new ApiError(r.response.status, r.error);
  const m = /filename="([^"]+)"/.exec(r.response.headers.get("content-disposition") ?? "");
  return { blob: r.data as unknown as Blob, name: m?.[1] ?? `run-${runId}-source` };
}
