// Domain types used by the UI: aliases of the schema generated from the server's OpenAPI
// (src/client/schema.d.ts, `npm run gen:client`). Never edit shapes here; regenerate.
import type { components } from "./schema";

type S = components["schemas"];

export type RunStatus = S["RunStatus"];
export type DirSummary = S["DirSummary"];
export type JobSummary = S["JobSummary"];
// a job and a workload as the API answers them (an imported job's unstated settings are null);
// the *In types are what a request sends (every setting stated)
export type JobSpec = S["JobSpec-Output"];
export type WorkloadSpec = S["WorkloadSpec-Output"];
export type JobSpecIn = S["JobSpec-Input"];
export type WorkloadSpecIn = S["WorkloadSpec-Input"];
export type RunProgress = S["Progress"];
export type RunRead = S["RunRead"];
/** an active run's status and latest report, as an open page polls it (GET /runs/{id}/progress) */
export type RunLive = S["RunLive"];
export type RunPage = S["RunPage"];
export type RunCreate = S["RunCreate"];
export type AgentRead = S["AgentRead"];
// the host inventory as served (every field the agent sends; keys from newer agents kept as sent)
export type Inventory = S["Inventory-Output"];
export type BlockDevice = S["BlockDevice-Output"];
export type Mount = S["Mount-Output"];
export type SeriesPoint = S["SeriesPointRead"];
export type RunSeries = S["RunSeries"];
export type WorkloadRead = S["WorkloadRead"];
export type WorkloadCreate = S["WorkloadCreate"];
export type CompareMetric = S["Metric"];
export type CompareRead = S["Comparison"];
export type EnergyRead = S["EnergyRead"];
export type PowerSeries = S["PowerSeries"];
export type PowerPoint = S["PowerPoint"];
export type PhaseRead = S["PhaseRead"];
export type EnvironmentRead = S["EnvironmentRead"];
export type EnvironmentCreate = S["EnvironmentCreate"];
export type EnvironmentUpdate = S["EnvironmentUpdate"];
export type GridIntensityRead = S["GridIntensityRead"];
export type GridSeriesImported = S["GridSeriesImported"];
export type DeviceRead = S["DeviceRead"];
export type DeviceUpdate = S["DeviceUpdate"];
export type EmbodiedDefaultRead = S["EmbodiedDefaultRead"];
export type CompareColumn = S["Column"];
export type Comparability = S["Comparability"];
export type StatsRead = S["StatsRead"];
export type ValidityFlag = S["ValidityFlag"];
export type LatencyCurves = S["LatencyCurves"];
export type CampaignCreate = S["CampaignCreate-Input"];
export type CampaignRead = S["CampaignRead"];
export type CampaignTarget = S["CampaignTarget"];
export type ScheduleCreate = S["ScheduleCreate"];
export type ScheduleRead = S["ScheduleRead"];
export type ScheduleUpdate = S["ScheduleUpdate"];
export type SlotRead = S["SlotRead"];
export type AlertRead = S["AlertRead"];
export type ChannelCreate = S["ChannelCreate"];
export type ChannelCreated = S["ChannelCreated"];
export type ChannelRead = S["ChannelRead"];
export type ChannelUpdate = S["ChannelUpdate"];
export type PolicyRead = S["PolicyRead"];
export type EnrollmentTokenCreate = S["EnrollmentTokenCreate"];
export type EnrollmentTokenCreated = S["EnrollmentTokenCreated"];
export type EnrollmentTokenRead = S["EnrollmentTokenRead"];
export type TokenCreate = S["TokenCreate"];
export type PasswordChange = S["PasswordChange"];
export type EmailChange = S["EmailChange"];
export type TokenCreated = S["TokenCreated"];
export type TokenRead = S["TokenRead"];

export const ACTIVE_STATUSES: readonly RunStatus[] = ["queued", "assigned", "running"];
export const FINAL_STATUSES: readonly RunStatus[] = ["succeeded", "failed", "cancelled"];
/** Every run status, in lifecycle order (filters list them so). */
export const RUN_STATUSES: readonly RunStatus[] = [...ACTIVE_STATUSES, ...FINAL_STATUSES];

export function isActive(status: RunStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}
// who owns an e-mail (docs/adr/0026)
export type UserRead = S["UserRead"];
export type AdminUserRead = S["AdminUserRead"];
export type ResetLinkCreated = S["ResetLinkCreated"];
// series over time and the changes found in them (docs/adr/0040)
export type SeriesRead = S["SeriesRead"];
export type SeriesCreate = S["SeriesCreate"];
export type SeriesUpdate = S["SeriesUpdate"];
export type SeriesHistory = S["SeriesHistory"];
export type HistoryPoint = S["HistoryPoint"];
export type HostChange = S["HostChange"];
export type DetectionRead = S["DetectionRead"];
export type DetectionUpdate = S["DetectionUpdate"];
export type ThresholdsIn = S["ThresholdsIn"];
export type ThresholdsRead = S["ThresholdsRead"];
export type MetricName = S["MetricVerdict"]["metric"];
