import type { AgentRead, CompareRead, JobSummary, RunRead } from "../client/types";

/** One finished psync job: no io_uring figures (the server sends null for them). */
export const PSYNC_JOB: JobSummary = {
  job_index: 0,
  name: "rand4k",
  rw: "randread",
  bs_bytes: 4096,
  runtime_ns: 2e9,
  usr_cpu_pct: 1,
  sys_cpu_pct: 2,
  kernel_worker_cpu_pct: null,
  target_nowait: null,
  read: {
    iops: 1000,
    bw_bytes: 4_096_000,
    io_bytes: 8_192_000,
    total_ios: 2000,
    lat_mean_ns: 1000,
    clat_p50_ns: 900,
    clat_p99_ns: 5000,
    clat_p999_ns: 9000,
    clat_max_ns: 20000,
  },
  write: null,
};

/** The same job on io_uring against a target without nowait (tmpfs, zram): the io-wq kernel
 * workers did the device work and cost more CPU than the job thread. */
export const IO_URING_JOB: JobSummary = {
  ...PSYNC_JOB,
  usr_cpu_pct: 18.2,
  sys_cpu_pct: 73.66,
  kernel_worker_cpu_pct: 87.527341,
  target_nowait: false,
};

/** A run's energy when no meter was configured (what the server sends for such runs). */
export const NO_ENERGY: RunRead["energy"] = {
  status: "none",
  reason: "no meter configured for this run",
  source: null,
  meter_name: null,
  meter_driver: null,
  tier: null,
  tier_label: null,
  estimated: false,
  samples: null,
  idle_w: null,
  idle_drift_w: null,
  load_w_mean: null,
  runtime_s: null,
  total_j: null,
  dynamic_j: null,
  uncertainty_j: null,
  dynamic_uncertainty_j: null,
  j_per_gb: null,
  dynamic_j_per_gb: null,
  j_per_mio: null,
  iops_per_w: null,
  mb_s_per_w: null,
  coverage: null,
  accuracy_pct: null,
  accuracy_declared: null,
  flags: [],
  grid_g_per_kwh: null,
  grid_source: null,
  carbon_method: null,
  pue: null,
  operational_gco2e: null,
  gco2e_per_tb: null,
  dynamic_gco2e: null,
  embodied_gco2e: null,
  embodied_source: null,
  phases: [],
  dropped: {},
};

/** A measured run's energy: BMC meter, 264.18 W over 15 s as in the HDD vs DRAM-SSD paper. */
export const OK_ENERGY: RunRead["energy"] = {
  ...NO_ENERGY,
  status: "ok",
  reason: null,
  source: "ipmi://bmc-1",
  tier: "bmc",
  tier_label: "BMC",
  estimated: false,
  samples: 450,
  idle_w: 200,
  idle_drift_w: 5,
  load_w_mean: 264.18,
  runtime_s: 15,
  total_j: 3962.7,
  dynamic_j: 962.7,
  uncertainty_j: 12.3,
  dynamic_uncertainty_j: 20,
  j_per_gb: 123.4,
  dynamic_j_per_gb: 30,
  j_per_mio: 45.6,
  iops_per_w: 1234,
  mb_s_per_w: 12.34,
  coverage: 0.9,
  accuracy_pct: 5,
  accuracy_declared: false,
  flags: ["low_coverage", "idle_drift", "accuracy_assumed"],
  grid_g_per_kwh: 380,
  grid_source: "Ember 2023 (DE)",
  carbon_method: "annual",
  pue: 1.4,
  operational_gco2e: 0.5856,
  gco2e_per_tb: 143.0,
  dynamic_gco2e: 0.14,
  embodied_gco2e: 0.02,
  embodied_source: "Tannu & Nair 2023, HDD",
  phases: [
    { name: "idle_before", duration_s: 30, mean_w: 198, energy_j: 5940, samples: 300, coverage: 1 },
    { name: "load", duration_s: 15, mean_w: 264.18, energy_j: 3962.7, samples: 150, coverage: 0.9 },
  ],
  dropped: { dropped_negative: 2, dropped_duplicate: 0 },
};

export const POWER_SERIES = {
  run_id: "r1",
  status: "ok",
  reason: null,
  tier: "bmc",
  tier_label: "BMC",
  estimated: false,
  source: "ipmi://bmc-1",
  quantity: "power",
  t0_utc: "2026-11-21T10:00:00Z",
  load_start_s: 30,
  phases: [
    { name: "idle_before", start_ns: 0, end_ns: 30e9 },
    { name: "load", start_ns: 30e9, end_ns: 45e9 },
    { name: "idle_after", start_ns: 45e9, end_ns: 75e9 },
  ],
  points: [-10, 0, 5, 10, 20].map((t) => ({
    t_s: t,
    w_mean: t >= 0 && t <= 15 ? 264 : 200,
    w_min: 190,
    w_max: 270,
  })),
};

type Metric = CompareRead["jobs"][number]["metrics"][number];
type MetricShape = Pick<Metric, "kind" | "better" | "direction" | "percentile">;

/** What the server's metric table (backend/compare/service.py) sends for the keys tests use. */
const SERVER_METRICS: Record<string, MetricShape> = {
  read_iops: { kind: "iops", better: "higher", direction: "read", percentile: null },
  write_iops: { kind: "iops", better: "higher", direction: "write", percentile: null },
  read_bw_bytes: { kind: "bandwidth", better: "higher", direction: "read", percentile: null },
  write_bw_bytes: { kind: "bandwidth", better: "higher", direction: "write", percentile: null },
  read_clat_p50_ns: { kind: "latency", better: "lower", direction: "read", percentile: 50 },
  read_clat_p99_ns: { kind: "latency", better: "lower", direction: "read", percentile: 99 },
  write_clat_p99_ns: { kind: "latency", better: "lower", direction: "write", percentile: 99 },
  read_clat_p999_ns: { kind: "latency", better: "lower", direction: "read", percentile: 99.9 },
  usr_cpu_pct: { kind: "cpu", better: "lower", direction: null, percentile: null },
  idle_w: { kind: "power", better: "lower", direction: null, percentile: null },
  load_w_mean: { kind: "power", better: "lower", direction: null, percentile: null },
  runtime_s: { kind: "time", better: "lower", direction: null, percentile: null },
  total_j: { kind: "energy", better: "lower", direction: null, percentile: null },
  j_per_gb: { kind: "efficiency", better: "lower", direction: null, percentile: null },
  iops_per_w: { kind: "efficiency", better: "higher", direction: null, percentile: null },
  operational_gco2e: { kind: "carbon", better: "lower", direction: null, percentile: null },
  gco2e_per_tb: { kind: "carbon", better: "lower", direction: null, percentile: null },
};

/** A compare metric as the server sends it; ratios default to value ÷ values[base]. */
export function metric(
  key: string,
  label: string,
  unit: string,
  values: (number | null)[],
  over: Partial<Metric> & { base?: number } = {},
): Metric {
  const { base = 0, ...rest } = over;
  const b = values[base];
  const shape = SERVER_METRICS[key];
  if (!shape && !rest.kind) throw new Error(`fixture metric ${key}: give its kind and better`);
  return {
    key,
    label,
    unit,
    ...(shape ?? { kind: "cpu", better: "lower", direction: null, percentile: null }),
    higher_is_better: (rest.better ?? shape?.better) === "higher",
    values,
    ratios: values.map((v) => (v == null || b == null || b === 0 ? null : v / b)),
    changes: values.map(() => null),
    stats: values.map((v) =>
      v == null
        ? null
        : {
            n: 1,
            mean: v,
            stdev: null,
            cv: null,
            ci95_low: null,
            ci95_high: null,
            ci_method: null,
            values: [v],
          },
    ),
    within_noise: values.map(() => null),
    ...rest,
  };
}

/** A comparison with one column per run (group_by=none) unless columns are given. */
export function comparison(
  runs: RunRead[],
  jobs: CompareRead["jobs"],
  over: Partial<CompareRead> & { base?: number } = {},
): CompareRead {
  const { base = 0, ...rest } = over;
  const columns =
    over.columns ??
    runs.map((r, i) => ({
      key: r.id,
      label: r.name,
      run_ids: [r.id],
      device_name: r.device_name,
      environment_name: null,
      is_baseline: i === base,
    }));
  return {
    runs,
    columns,
    baseline: columns.find((c) => c.is_baseline)?.key ?? "",
    filtered_out: [],
    group_by: "none",
    comparability: {
      verdict: "comparable",
      fingerprint: "workload",
      fingerprints: {},
      differences: [],
    },
    jobs,
    energy: [],
    validity: {},
    suggestions: [],
    ...rest,
  };
}

type Policy = NonNullable<AgentRead["policy"]>;
type Target = Policy["targets"][number];

/** A reported target; devices add model, serial hash and size. */
export function target(
  t: Pick<Target, "path" | "kind" | "writable" | "destructive"> & Partial<Target>,
): Target {
  return { model: null, serial_sha256: null, size_bytes: null, free_inodes: null, ...t };
}

/** The host's limits as the server sends them (null: the host's default, no limit). */
export function limits(l: Partial<Policy["limits"]> = {}): Policy["limits"] {
  return {
    max_threads: null,
    max_iodepth: null,
    max_bs_bytes: null,
    max_bytes_written: null,
    max_runtime_s: null,
    max_memory_bytes: null,
    max_files: null,
    ...l,
  };
}

/** A host policy (ADR 0009) with one target of each kind and two meters. */
export const POLICY: Policy = {
  targets: [
    target({ path: "/srv/bench", kind: "directory", writable: true, destructive: false }),
    target({ path: "/data/ref.bin", kind: "file", writable: false, destructive: false }),
    target({
      path: "/dev/disk/by-id/nvme-Samsung_SSD_990_PRO_S7DNNJ0X123456",
      kind: "device",
      writable: true,
      destructive: true,
      model: "Samsung SSD 990 PRO 2TB",
      // sha256("S7DNNJ0X123456")
      serial_sha256: "1110b51aacfc8c3f16281fe3e4ed30c9d6e3736e24c3b8eefe85c9571a91b0d9",
      size_bytes: 2_000_398_934_016,
    }),
    target({
      path: "/dev/disk/by-id/ata-ST4000NM000A_WS20ABCD",
      kind: "device",
      writable: false,
      destructive: false,
    }),
  ],
  meters: [
    { name: "bmc", driver: "ipmi", tier: "bmc" },
    { name: "plug", driver: "shelly", tier: "plug" },
  ],
  default_meter: "bmc",
  limits: limits({ max_threads: 16, max_iodepth: 64 }),
  allowed_dbms: [],
};

/** An online agent that reported POLICY. */
export function policyAgent(over: Partial<AgentRead> = {}): AgentRead {
  return {
    id: "a1",
    team_id: "t1",
    name: "local",
    hostname: "box",
    kind: "agent",
    online: true,
    state: "idle",
    last_heartbeat_at: new Date().toISOString(),
    enrolled_at: new Date().toISOString(),
    revoked_at: null,
    token_expires_at: new Date(Date.now() + 29.5 * 86400 * 1000).toISOString(),
    agent_version: "0.1.0",
    inventory: null,
    policy: POLICY,
    current_run_id: null,
    ...over,
  };
}
