// Domain types used by the UI. TEMPORARY: hand-written from docs/contracts.md §3 until
// openapi.json exists; then these become aliases of the generated schema.
export type RunStatus = "queued" | "assigned" | "running" | "succeeded" | "failed" | "cancelled";

export interface DirSummary {
  iops: number;
  bw_bytes: number;
  io_bytes: number;
  total_ios: number;
  lat_mean_ns: number | null;
  clat_p50_ns: number | null;
  clat_p99_ns: number | null;
  clat_p999_ns: number | null;
  clat_max_ns: number | null;
}

export interface JobSummary {
  job_index: number;
  name: string;
  rw: string;
  bs_bytes: number;
  runtime_ns: number;
  usr_cpu_pct: number | null;
  sys_cpu_pct: number | null;
  read: DirSummary | null;
  write: DirSummary | null;
}

export interface JobSpec {
  name: string;
  rw: string;
  bs_bytes: number;
  size_bytes: number;
  offset_bytes: number;
  runtime_s: number | null;
  time_based: boolean;
  ramp_time_s: number;
  rwmixread: number;
  numjobs: number;
  iodepth: number;
  ioengine: string;
  direct: boolean;
}

export interface WorkloadSpec {
  jobs: JobSpec[];
}

export interface RunProgress {
  job_index: number;
  job_name: string;
  percent: number;
  elapsed_ns: number;
  read_iops: number;
  read_bw_bytes: number;
  write_iops: number;
  write_bw_bytes: number;
  updated_at: string;
}

export interface RunRead {
  id: string;
  team_id: string;
  name: string | null;
  status: RunStatus;
  agent_id: string | null;
  agent_name: string | null;
  target_path: string;
  device_id: string | null;
  environment_id: string | null;
  workload: WorkloadSpec;
  workload_id: string | null;
  created_at: string;
  assigned_at: string | null;
  started_at: string | null;
  finished_at: string | null;
  attempt: number;
  error: string | null;
  progress: RunProgress | null;
  jobs: JobSummary[];
}

export interface RunPage {
  items: RunRead[];
  total: number;
}

export interface AgentRead {
  id: string;
  team_id: string;
  name: string;
  hostname: string;
  online: boolean;
  state: string;
  last_heartbeat_at: string | null;
  enrolled_at: string;
  agent_version: string | null;
  inventory: Record<string, unknown> | null;
  current_run_id: string | null;
}

export interface SeriesPoint {
  t_s: number;
  read_iops: number | null;
  read_bw_bytes: number | null;
  write_iops: number | null;
  write_bw_bytes: number | null;
  read_clat_p99_ns: number | null;
  write_clat_p99_ns: number | null;
}

export interface RunSeries {
  run_id: string;
  jobs: { job_index: number; name: string; points: SeriesPoint[] }[];
}

export interface WorkloadRead {
  id: string;
  name: string;
  description: string;
  spec: WorkloadSpec;
  builtin: boolean;
}

export interface CompareMetric {
  key: string;
  label: string;
  unit: string;
  values: (number | null)[];
}

export interface CompareRead {
  runs: RunRead[];
  jobs: { name: string; metrics: CompareMetric[] }[];
}

export interface RunCreate {
  agent_id: string;
  target_path: string;
  workload: WorkloadSpec | null;
  workload_id: string | null;
  name?: string | null;
}

export const ACTIVE_STATUSES: readonly RunStatus[] = ["queued", "assigned", "running"];

export function isActive(status: RunStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}
