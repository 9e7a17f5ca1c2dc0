"""Import-size benchmark (issue 26): a fio json+ file of --size-mb MB (many jobs, full latency
histograms) imported through the API: the time the POST takes and the API process's memory growth
(peak resident set, VmHWM, minus the resident set before the request).

Starts a private PostgreSQL and Redis (like the tests), migrates, makes a user and team, starts
uvicorn, writes the file (jobs cloned from a real fio 3.33 json+ job of tests/imports/samples/fio,
each with its own name and about 1,800 histogram bins per direction, as a long run's json+ has),
posts it as a file's bytes (application/octet-stream), then downloads it back and compares hashes.

    nice -n 19 .venv/bin/python bench/imports/run.py --size-mb 200

Prints one line per step and the load average; docs/benchmarks.md "Imports" records the results.
"""

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from bench.compare.run import _cpu_s, _start_api  # noqa: E402
from tests.services import free_port, postgres, redis_server  # noqa: E402

TEMPLATE = REPO / "tests/imports/samples/fio/fio-3.33.jsonplus"
BINS = 1800


def _rss_kib(pid: int) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            out[key] = int(rest.split()[0])
    return out


def write_file(path: Path, size_mb: int) -> tuple[int, int]:
    """fio's json+ document of about size_mb MB; (jobs, bytes)."""
    text = TEMPLATE.read_text()
    doc = json.loads(text[text.index("{") :])
    proto = next(j for j in doc["jobs"] if j["read"]["total_ios"] or j["write"]["total_ios"])
    rnd = random.Random(26)

    def bins() -> dict[str, int]:
        start = rnd.randint(500, 5000)
        return {str(start + k * 64): rnd.randint(1, 5000) for k in range(BINS)}

    head = {k: v for k, v in doc.items() if k not in ("jobs", "disk_util")}
    target = size_mb * 1_000_000
    n = 0
    with path.open("w") as f:
        f.write(json.dumps(head, indent=2)[:-2] + ',\n  "jobs" : [\n')
        written = f.tell()
        while written < target:
            job = json.loads(json.dumps(proto))
            job["jobname"] = f"job-{n:05d}"
            job["groupid"] = n // 100
            for side in ("read", "write"):
                job[side].setdefault("clat_ns", {})["bins"] = bins()
            f.write((",\n" if n else "") + json.dumps(job, indent=2))
            written = f.tell()
            n += 1
        f.write("\n  ],\n" + '  "disk_util" : ' + json.dumps(doc.get("disk_util", []), indent=2) + "\n}\n")
        return n, f.tell()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=200)
    ap.add_argument("--dir", default=tempfile.gettempdir(), help="where the file is written")
    args = ap.parse_args()
    from alembic import command
    from sqlalchemy import create_engine
    from sqlalchemy.orm import Session

    from tests.conftest import alembic_config
    from tests.factories import create_user

    path = Path(tempfile.mkstemp(prefix="iowatt-bench-", suffix=".jsonplus", dir=args.dir)[1])
    try:
        t = time.perf_counter()
        jobs, size = write_file(path, args.size_mb)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        print(f"file: {size / 1e6:.1f} MB, {jobs} jobs, written in {time.perf_counter() - t:.1f} s")
        with postgres() as pg, redis_server() as redis_url:
            url = pg.create_database("iowatt_bench")
            command.upgrade(alembic_config(url), "head")
            eng = create_engine(url)
            with Session(eng) as s:
                u = create_user(s, email="bench@iowatt.local")
                s.commit()
                token, team_id = u.token, str(u.team.id)
            eng.dispose()
            port = free_port()
            env = {
                **os.environ,
                "IOWATT_DATABASE_URL": url,
                "IOWATT_REDIS_URL": redis_url,
                "IOWATT_ENV": "test",
            }
            api = _start_api(REPO, port, env)
            try:
                base = f"http://127.0.0.1:{port}/api/v1"
                headers = {"Authorization": f"Bearer {token}"}
                with httpx.Client(base_url=base, headers=headers, timeout=600) as c:
                    c.get("/runs", params={"limit": 1})  # warm the app's imports and pools
                    before = _rss_kib(api.pid)
                    cpu0 = _cpu_s(api.pid)
                    t = time.perf_counter()
                    with path.open("rb") as f:
                        r = c.post(
                            "/imports",
                            params={
                                "team_id": team_id,
                                "file_name": path.name,
                                "host": "bench",
                                "device": "bench disk",
                            },
                            content=f,
                            headers={"Content-Type": "application/octet-stream"},
                        )
                    took = time.perf_counter() - t
                    cpu = _cpu_s(api.pid) - cpu0
                    after = _rss_kib(api.pid)
                    assert r.status_code == 201, r.text[:2000]
                    out = r.json()
                    run_id = out["runs"][0]["run_id"]
                    growth = (after["VmHWM"] - before["VmRSS"]) / 1024
                    print(
                        f"POST /imports: {took:.1f} s (API CPU {cpu:.1f} s), "
                        f"{len(out['runs'][0]['jobs'])} jobs; API resident set "
                        f"{before['VmRSS'] / 1024:.0f} MiB before, peak {after['VmHWM'] / 1024:.0f} MiB "
                        f"(growth {growth:.0f} MiB); load average {os.getloadavg()[0]:.2f}"
                    )
                    t = time.perf_counter()
                    h = hashlib.sha256()
                    with c.stream("GET", f"/runs/{run_id}/source") as resp:
                        assert resp.status_code == 200
                        for chunk in resp.iter_bytes():
                            h.update(chunk)
                    same = h.hexdigest() == digest
                    print(f"GET /runs/{{id}}/source: {time.perf_counter() - t:.1f} s, byte for byte: {same}")
                    return 0 if same and took < 20 and growth < 300 else 1
            finally:
                api.terminate()
                api.wait()
    finally:
        path.unlink(missing_ok=True)


if __name__ == "__main__":
    raise SystemExit(main())
