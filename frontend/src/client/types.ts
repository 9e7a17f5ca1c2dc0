// Domain types used by the UI: aliases of the schema generated from the server's OpenAPI
// (src/client/schema.d.ts, `npm run gen:client`). Never edit shapes here; regenerate.
import type { components } from "./schema";

type S = components["schemas"];

export type RunStatus = S["RunStatus"];
export type DirSummary = S["DirSummary"];
export type JobSummary = S["JobSummary"];
export type JobSpec = S["JobSpec"];
export type WorkloadSpec = S["WorkloadSpec"];
export type RunProgress = S["Progress"];
export type RunRead = S["RunRead"];
export type RunPage = S["RunPage"];
export type RunCreate = S["RunCreate"];
export type AgentRead = S["AgentRead"];
export type SeriesPoint = S["SeriesPointRead"];
export type RunSeries = S["RunSeries"];
export type WorkloadRead = S["WorkloadRead"];
export type CompareMetric = S["Metric"];
export type CompareRead = S["Comparison"];

export const ACTIVE_STATUSES: readonly RunStatus[] = ["queued", "assigned", "running"];

export function isActive(status: RunStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}
