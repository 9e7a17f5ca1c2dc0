"""The team export's format (docs/teams.md § Export): what each file of the zip holds.

Every file is JSON (objects with the database's column names; UUIDs and UTC timestamps as
strings) or CSV with a header row. Secrets never enter it: no token or token hash of any kind
(personal, session, agent, enrolment, invitation, share link), no password hash."""

FORMAT = "iowatt-team-export"
VERSION = 1

# Columns left out of the files, per table (secrets, and the agent protocol's per-lease state)
SECRET_COLUMNS: dict[str, frozenset[str]] = {
    "users": frozenset({"password_hash", "oidc_subject"}),
    "agents": frozenset({"token_hash", "previous_token_hash"}),
    "share_links": frozenset({"token_hash"}),
    "invitations": frozenset({"token_hash"}),
    "runs": frozenset({"lease_id", "started_boot_id"}),
}

RUNS_CSV = (
    "id",
    "name",
    "status",
    "source",
    "agent_id",
    "device_id",
    "environment_id",
    "workload_id",
    "campaign_id",
    "target_path",
    "created_at",
    "started_at",
    "finished_at",
    "error",
    "tags",
)
JOBS_CSV = (
    "run_id",
    "job_index",
    "name",
    "rw",
    "bs_bytes",
    "runtime_ns",
    "usr_cpu_pct",
    "sys_cpu_pct",
    "kernel_worker_cpu_pct",
    "read_iops",
    "read_bw_bytes",
    "read_io_bytes",
    "read_total_ios",
    "read_lat_mean_ns",
    "read_clat_p50_ns",
    "read_clat_p99_ns",
    "read_clat_p999_ns",
    "read_clat_max_ns",
    "write_iops",
    "write_bw_bytes",
    "write_io_bytes",
    "write_total_ios",
    "write_lat_mean_ns",
    "write_clat_p50_ns",
    "write_clat_p99_ns",
    "write_clat_p999_ns",
    "write_clat_max_ns",
)
SERIES_CSV = (
    "run_id",
    "job_index",
    "t_ns",
    "read_iops",
    "read_bw_bytes",
    "read_clat_p99_ns",
    "write_iops",
    "write_bw_bytes",
    "write_clat_p99_ns",
)
ENERGY_CSV = (
    "run_id",
    "tier",
    "estimated",
    "idle_w",
    "load_w_mean",
    "runtime_s",
    "total_j",
    "dynamic_j",
    "uncertainty_j",
    "j_per_gb",
    "j_per_mio",
    "iops_per_w",
    "mb_s_per_w",
    "grid_g_per_kwh",
    "grid_source",
    "carbon_method",
    "pue",
    "operational_gco2e",
    "dynamic_gco2e",
    "embodied_gco2e",
    "embodied_source",
    "computed_at",
)
