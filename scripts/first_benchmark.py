"""Queue the first comparison `make up` promises, through the public REST API, and watch it.

The built-in `quick` workload (4 KiB random read, 1 MiB sequential read and write) runs on a
directory on the machine's disk and on /dev/shm (RAM) — the seeds' HDD vs DRAM-SSD comparison
with what every machine has. Each job runs FIRST_JOB_S (10 s), the shortest the compare's
validity check accepts (backend/compare/validity.py MIN_RUNTIME_S): the first result a new user
sees is a valid one, in about a minute. Skipped when it was queued before (make up is re-runnable).
"""

import argparse
import os
import sys
import time
from pathlib import Path

import httpx
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

NAME = "first benchmark: {label}"
FIRST_JOB_S = 10  # = MIN_RUNTIME_S of backend/compare/validity.py (the script runs without the server code)
FINAL = {"succeeded", "failed", "cancelled"}


def first_workload(spec: dict) -> dict:
    """The quick preset with every time-based job lengthened to FIRST_JOB_S."""
    jobs = [
        {**j, "runtime_s": max(j.get("runtime_s") or 0, FIRST_JOB_S)} if j.get("time_based") else j
        for j in spec["jobs"]
    ]
    return {**spec, "jobs": jobs}


def supports_direct_io(directory: Path) -> bool:
    probe = directory / ".iowatt-odirect-probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o600)
        os.close(fd)
        return True
    except OSError:
        return False
    finally:
        probe.unlink(missing_ok=True)


def allowed_targets(agent: dict) -> set[str]:
    policy = (agent.get("inventory") or {}).get("policy") or {}
    return {t["path"] for t in policy.get("targets", [])}


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--api", required=True)
    p.add_argument("--token-file", type=Path, required=True)
    p.add_argument("--disk-dir", type=Path, required=True)
    p.add_argument("--ram-dir", type=Path, required=True)
    p.add_argument("--timeout", type=float, default=110.0)
    args = p.parse_args()
    console = Console()
    token = args.token_file.read_text().strip()
    api = httpx.Client(
        base_url=f"{args.api}/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=30
    )

    runs = api.get("/runs", params={"limit": 500}).raise_for_status().json()["items"]
    mine = [r for r in runs if r["name"].startswith("first benchmark:")]
    if mine:
        console.print(f"    already queued earlier ({len(mine)} runs); see {args.api}/runs", soft_wrap=True)
        return 0
    agents = [a for a in api.get("/agents").raise_for_status().json()["items"] if a["online"]]
    deadline = time.monotonic() + 30
    while not agents and time.monotonic() < deadline:
        time.sleep(0.5)
        agents = [a for a in api.get("/agents").raise_for_status().json()["items"] if a["online"]]
    if not agents:
        console.print("[red]no online agent: see .iowatt/logs/agent.log[/red]")
        return 1
    agent = agents[0]
    args.disk_dir.mkdir(parents=True, exist_ok=True)
    args.ram_dir.mkdir(parents=True, exist_ok=True)
    # The server accepts a run only inside the targets the agent reported (ADR 0009); the agent
    # reports its new policy at start, which may be a moment after `make up` wrote it.
    wanted = {str(args.disk_dir), str(args.ram_dir)}
    while not wanted <= allowed_targets(agent) and time.monotonic() < deadline + 30:
        time.sleep(0.5)
        agent = api.get(f"/agents/{agent['id']}").raise_for_status().json()
    workload = "quick"
    if not (supports_direct_io(args.disk_dir) and supports_direct_io(args.ram_dir)):
        workload = "quick-buffered"
        console.print(
            "    [yellow]O_DIRECT is not supported on one target (tmpfs before Linux 6.6): running the "
            "buffered variant on both, which measures the page cache as much as the device[/yellow]"
        )
    items = api.get("/workloads").raise_for_status().json()["items"]
    quick = next(w for w in items if w["name"] == workload)
    ids = []
    for label, path in (("disk", args.disk_dir), ("RAM /dev/shm", args.ram_dir)):
        body = {
            "agent_id": agent["id"],
            "target_path": str(path),
            # the preset's jobs, each long enough not to be flagged short_run
            "workload": first_workload(quick["spec"]),
            "name": NAME.format(label=label),
        }
        created = api.post("/runs", json=body)
        if created.status_code == 422:
            console.print(f"[red]    the server refused the {label} run: {created.json()}[/red]")
            return 1
        ids.append(created.raise_for_status().json()["id"])

    end = time.monotonic() + args.timeout
    done: dict[str, dict] = {}
    with Progress(
        TextColumn("    {task.description}"),
        BarColumn(),
        TextColumn("{task.fields[status]}"),
        TimeElapsedColumn(),
        console=console,
    ) as bar:
        tasks = {rid: bar.add_task(rid[:8], total=100, status="queued") for rid in ids}
        while len(done) < len(ids) and time.monotonic() < end:
            for rid in ids:
                run = api.get(f"/runs/{rid}").raise_for_status().json()
                pct = 100.0 if run["status"] in FINAL else (run["progress"] or {}).get("percent", 0.0)
                job_index = (run["progress"] or {}).get("job_index", 0)
                overall = (job_index * 100 + pct) / max(1, len(run["workload"]["jobs"]))
                bar.update(
                    tasks[rid],
                    description=run["name"],
                    completed=100 if run["status"] in FINAL else overall,
                    status=run["status"],
                )
                if run["status"] in FINAL:
                    done[rid] = run
            time.sleep(1)
    if len(done) < len(ids):
        console.print(
            f"[yellow]    still running after {args.timeout:.0f} s; follow it at {args.api}/runs[/yellow]"
        )
        return 0
    table = Table(title="first benchmark", title_justify="left")
    table.add_column("job")
    for rid in ids:
        table.add_column(done[rid]["name"].removeprefix("first benchmark: "), justify="right")
    for job in quick["spec"]["jobs"]:
        cells = []
        for rid in ids:
            js = next((j for j in done[rid]["jobs"] if j["name"] == job["name"]), None)
            side = js and (js["read"] or js["write"])
            cells.append(
                f"{side['iops']:,.0f} IOPS  {side['bw_bytes'] / 1e6:,.1f} MB/s"
                if side
                else done[rid]["status"]
            )
        table.add_row(job["name"], *cells)
    console.print(table)
    failed = [r for r in done.values() if r["status"] != "succeeded"]
    for r in failed:
        console.print(f"[red]    {r['name']}: {r['status']}: {r['error']}[/red]")
    # one line whatever the terminal's width: rich would cut the URL into pieces no one can click
    console.print(f"    compare: {args.api}/compare?runs={','.join(ids)}", soft_wrap=True, highlight=False)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
