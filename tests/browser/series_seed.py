"""A series of N synthetic runs written straight into the database in a few statements (the
browser test's 10 and 1,000 points, bench/series's 10,000): one randread job per run at about
20,000 IOPS with 2 % noise and a 12 % drop at 70 % of the runs, a run in 97 left out as
cache-resident, the kernel upgraded half way (a new segment), and the drop stored as a change."""

import uuid

import psycopg

SPEC = (
    '{"jobs": [{"name": "randread", "rw": "randread", "bs_bytes": 4096, "size_bytes": 67108864, '
    '"runtime_s": 60, "time_based": true, "direct": true}]}'
)


# run i at 2026-01-01 + i hours
HOURS = (
    "generate_series(1, %(n)s) i, LATERAL (SELECT timestamptz '2026-01-01' + i * interval '1 hour' AS t) x"
)


def seed_series(
    conn: psycopg.Connection, *, team_id: str, agent_id: str, device_id: str | None, n: int, name: str
) -> str:
    tag = uuid.uuid4().hex
    series_id = str(uuid.uuid4())
    step = int(n * 0.7)
    p = {"tag": tag, "n": n, "team": team_id, "agent": agent_id, "device": device_id, "name": name}
    conn.execute(
        "INSERT INTO runs (id, team_id, name, status, agent_id, device_id, workload_spec, target_path, "
        "attempt, cancel_requested, created_at, started_at, finished_at) "
        "SELECT md5(%(tag)s || i)::uuid, %(team)s, %(name)s || ' ' || i, 'succeeded', %(agent)s, "
        "%(device)s, %(spec)s::jsonb, '/srv/bench', 1, false, t, t, t + interval '60 s' "
        f"FROM {HOURS}",
        {**p, "spec": SPEC},
    )
    conn.execute(
        "INSERT INTO run_results (run_id, upload_id, engine_result, engine_exit_code, agent_version, "
        "started_at, finished_at, uploaded_at) "
        'SELECT md5(%(tag)s || i)::uuid, gen_random_uuid(), \'{"jobs": [{"jobname": "randread"}]}\', 0, '
        "'seed', t, t + interval '60 s', t "
        f"FROM {HOURS}",
        p,
    )
    conn.execute(
        "INSERT INTO result_jobs (run_id, job_index, name, rw, bs_bytes, runtime_ns, usr_cpu_pct, "
        "sys_cpu_pct, read_iops, read_bw_bytes, read_lat_mean_ns, read_clat_p99_ns) "
        "SELECT md5(%(tag)s || i)::uuid, 0, 'randread', 'randread', 4096, 60000000000, 1, 2, v, "
        "(v * 4096)::bigint, 1e9 / v, (4e9 / v)::bigint "
        "FROM generate_series(1, %(n)s) i, LATERAL (SELECT 20000 * (CASE WHEN i > %(step)s THEN 0.88 "
        "ELSE 1 END) * (1 + 0.0693 * (random() - 0.5)) * (CASE WHEN i %% 97 = 0 THEN 2.5 ELSE 1 END) AS v) x",
        {**p, "step": step},
    )
    conn.execute(
        "INSERT INTO series (id, team_id, key, workload_fingerprint, target_kind, agent_id, device_id, "
        "target_path, name, run_count, last_run_at) "
        "VALUES (%(sid)s, %(team)s, md5(%(tag)s) || md5(%(tag)s || 'k'), md5(%(tag)s) || md5(%(tag)s), "
        "'device', %(agent)s, %(device)s, '/srv/bench', %(name)s, %(n)s, "
        "timestamptz '2026-01-01' + %(n)s * interval '1 hour')",
        {**p, "sid": series_id},
    )
    conn.execute(
        "INSERT INTO series_runs (series_id, run_id, at, excluded, segment, facts) "
        "SELECT %(sid)s, md5(%(tag)s || i)::uuid, timestamptz '2026-01-01' + i * interval '1 hour', "
        'CASE WHEN i %% 97 = 0 THEN \'[{"flag": "cache_resident", "message": "the file set fits in '
        "the page cache\"}]'::jsonb ELSE '[]'::jsonb END, "
        "CASE WHEN i > %(half)s THEN 'b' ELSE 'a' END, "
        "jsonb_build_object('kernel', CASE WHEN i > %(half)s THEN '6.8.0' ELSE '6.1.0' END, "
        "'fstype', 'ext4', 'engine_version', '0.1.0', 'conditions', '[]'::jsonb) "
        "FROM generate_series(1, %(n)s) i",
        {**p, "sid": series_id, "half": n // 2},
    )
    conn.execute(
        "INSERT INTO series_detections (id, series_id, metric, job_index, kind, direction, run_id, "
        "previous_run_id, at, mean_before, mean_after, change_pct, change_pct_low, change_pct_high, "
        "runs_before, runs_after, method, parameters, p_value) "
        "VALUES (gen_random_uuid(), %(sid)s, 'read_iops', 0, 'change_point', 'regression', "
        "md5(%(tag)s || %(at)s)::uuid, md5(%(tag)s || %(before)s)::uuid, "
        "timestamptz '2026-01-01' + %(at)s * interval '1 hour', 20000, 17600, -12, -12.6, -11.4, "
        "%(nb)s, %(na)s, 'pelt_l2 + welch', '{}', 1e-9)",
        {**p, "sid": series_id, "at": step + 1, "before": step, "nb": step - n // 2, "na": n - step},
    )
    return series_id
