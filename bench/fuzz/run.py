#!/usr/bin/env python3
"""The long fuzzing run of issue 9: Schemathesis against a real uvicorn + PostgreSQL + Redis.

Starts private PostgreSQL and Redis (tests/services.py), the API under uvicorn with team A's world
(tests/security/server.py), then runs `schemathesis run` once per principal — agent X (only the
operations the authorization matrix lets an agent call), a member, an admin, in that order so the
admin's deletions come last; `--principals` adds the anonymous caller (no Authorization header), the
viewer and user B of the other team, run before the member — with the phases examples, coverage,
fuzzing and stateful, and the checks not_a_server_error, status_code_conformance, content_type_conformance and
response_schema_conformance. Every request and answer is recorded (HAR) and counted here,
independently of Schemathesis' own verdict: requests, server errors (5xx) and statuses the OpenAPI
does not document for the operation, by operation.

    .venv/bin/python bench/fuzz/run.py                  # the recorded run (>= 20,000 requests)
    .venv/bin/python bench/fuzz/run.py --max-examples 5 # a quick look
    .venv/bin/python bench/fuzz/run.py --principals agent_x,anonymous,viewer,user_b,member,admin

Exit status 1 when any server error or undocumented status was seen or a Schemathesis check failed.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tests.security.fuzzing import known_ids  # noqa: E402
from tests.security.server import api_server  # noqa: E402
from tests.security.test_authz_matrix import EXPECTED  # noqa: E402
from tests.security.world import INVENTORY_WITH_POLICY, PRINCIPALS  # noqa: E402
from tests.services import postgres, redis_server  # noqa: E402

CHECKS = "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance"
PHASES = "examples,coverage,fuzzing,stateful"
AGENT_OPS = [op for op, row in EXPECTED.items() if row[PRINCIPALS.index("agent_x")] == "2xx"]


# OpenAPI links for the stateful phase (FastAPI emits none): what a creating call answers feeds the
# calls on the object it created. (source operation, status) -> [(target operation, parameters)].
LINKS: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {
    ("POST /api/v1/runs", "201"): [
        (f"{m} /api/v1/runs/{{run_id}}{tail}", {"run_id": "$response.body#/id"})
        for m, tail in (
            ("GET", ""),
            ("POST", "/cancel"),
            ("GET", "/result"),
            ("GET", "/power"),
            ("GET", "/series"),
        )
    ]
    + [("GET /api/v1/compare", {"runs": "$response.body#/id"})],
    ("POST /api/v1/runs/{run_id}/cancel", "200"): [
        ("GET /api/v1/runs/{run_id}", {"run_id": "$response.body#/id"})
    ],
    ("POST /api/v1/environments", "201"): [
        ("PATCH /api/v1/environments/{environment_id}", {"environment_id": "$response.body#/id"}),
        (
            "PUT /api/v1/environments/{environment_id}/grid-intensity",
            {"environment_id": "$response.body#/id"},
        ),
    ],
    ("POST /api/v1/workloads", "201"): [
        ("GET /api/v1/workloads/{workload_id}", {"workload_id": "$response.body#/id"})
    ],
    ("POST /api/v1/campaigns", "201"): [
        ("GET /api/v1/campaigns/{campaign_id}", {"campaign_id": "$response.body#/id"}),
        ("GET /api/v1/runs", {"campaign_id": "$response.body#/id"}),
    ],
    ("POST /api/v1/auth/tokens", "201"): [
        ("DELETE /api/v1/auth/tokens/{token_id}", {"token_id": "$response.body#/id"})
    ],
    ("POST /api/v1/agents/enrollment-tokens", "201"): [
        ("DELETE /api/v1/agents/enrollment-tokens/{token_id}", {"token_id": "$response.body#/id"}),
    ],
    ("POST /api/v1/agents/enroll", "201"): [
        ("GET /api/v1/agents/{agent_id}", {"agent_id": "$response.body#/agent_id"}),
        ("POST /api/v1/agents/{agent_id}/revoke", {"agent_id": "$response.body#/agent_id"}),
        ("DELETE /api/v1/agents/{agent_id}", {"agent_id": "$response.body#/agent_id"}),
    ],
}


def with_links(spec: dict[str, Any]) -> dict[str, Any]:
    spec = json.loads(json.dumps(spec))

    def op(label: str) -> dict[str, Any]:
        method, path = label.split(" ", 1)
        return spec["paths"][path][method.lower()]

    for (source, status), targets in LINKS.items():
        links = op(source)["responses"][status].setdefault("links", {})
        for target, params in targets:
            links[op(target)["operationId"]] = {
                "operationId": op(target)["operationId"],
                "parameters": params,
            }
    return spec


def _template_of(spec: dict[str, Any], method: str | None, path: str) -> str | None:
    """The OpenAPI path template a concrete path belongs to (literal segments beat parameters);
    method None: any template of that shape, whatever its methods."""
    parts = path.rstrip("/").split("/") if path != "/" else [""]
    best, best_score = None, -1
    for template, item in spec["paths"].items():
        t = template.split("/")
        if len(t) != len(parts) or (method is not None and method.lower() not in item):
            continue
        if all(a == b or a.startswith("{") for a, b in zip(t, parts, strict=True)):
            score = sum(1 for a in t if not a.startswith("{"))
            if score > best_score:
                best, best_score = template, score
    return best


def _documented(responses: dict[str, Any], status: int) -> bool:
    return str(status) in responses or f"{status // 100}XX" in responses or "default" in responses


def tally(spec: dict[str, Any], har_files: list[Path]) -> dict[str, Any]:
    per_op: dict[str, Counter[str]] = defaultdict(Counter)
    undocumented: Counter[tuple[str, int]] = Counter()
    probes: Counter[tuple[str, int]] = Counter()
    for har in har_files:
        for entry in json.loads(har.read_text())["log"]["entries"]:
            method = entry["request"]["method"].upper()
            path = urlsplit(entry["request"]["url"]).path
            status = int(entry["response"]["status"])
            template = _template_of(spec, method, path)
            if template is None:
                # Schemathesis probing a method the OpenAPI does not list for a path (expects 405)
                label = f"{method} {_template_of(spec, None, path) or path}"
                probes[(label, status)] += 1
                if status >= 500:
                    undocumented[(label, status)] += 1
                continue
            op = f"{method} {template}"
            c = per_op[op]
            c["requests"] += 1
            if status == 0:
                c["no answer"] += 1
                continue
            if status >= 500:
                c["server errors"] += 1
            if not _documented(spec["paths"][template][method.lower()]["responses"], status):
                c["undocumented"] += 1
                undocumented[(op, status)] += 1
            c[f"{status // 100}xx"] += 1
    return {"per_op": per_op, "undocumented": undocumented, "probes": probes}


def report(t: dict[str, Any], runs: list[dict[str, Any]], seconds: float, command: str) -> str:
    per_op, probes = t["per_op"], t["probes"]
    total = Counter[str]()
    for c in per_op.values():
        total.update(c)
    probe_statuses = Counter[int]()
    for (_, status), n in probes.items():
        probe_statuses[status] += n
    server_errors = total["server errors"] + sum(n for s, n in probe_statuses.items() if s >= 500)
    lines = [
        f"command: `{command}`",
        "",
        f"requests: {total['requests'] + sum(probes.values())}  "
        f"server errors (5xx): {server_errors}  "
        f"undocumented statuses: {total['undocumented']}  no answer: {total['no answer']}  "
        f"time: {seconds:.0f} s",
        "",
        "| principal | Schemathesis exit | its summary |",
        "|---|---|---|",
    ]
    lines += [f"| {r['who']} | {r['exit']} | {r['summary']} |" for r in runs]
    lines += [
        "",
        "| operation | requests | 2xx | 4xx | 5xx | undocumented |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for op in sorted(per_op, key=lambda o: (o.split(" ", 1)[1], o)):
        c = per_op[op]
        row = [c["requests"], c["2xx"], c["4xx"], c["server errors"], c["undocumented"]]
        lines.append(f"| `{op}` | " + " | ".join(str(n) for n in row) + " |")
    lines += [
        "",
        f"Method probes (Schemathesis sending a method the OpenAPI does not list for a path; not "
        f"operations): {sum(probes.values())} requests, answered "
        + ", ".join(f"{s}: {n}" for s, n in sorted(probe_statuses.items())),
    ]
    lines += [
        f"- `{op}` answered {status}: {n}x" for (op, status), n in sorted(probes.items()) if status != 405
    ]
    if t["undocumented"]:
        lines += ["", "undocumented statuses:"]
        lines += [
            f"- `{op}` answered {status}: {n}x" for (op, status), n in sorted(t["undocumented"].items())
        ]
    return "\n".join(lines)


def _summary(log: str) -> str:
    """Schemathesis' closing lines (test phases and failures), one line."""
    keep = [
        ln.strip()
        for ln in log.splitlines()
        if any(
            k in ln
            for k in ("passed", "failed", "skipped", "errored", "No issues found", "Failures", "cases")
        )
    ]
    return " / ".join(keep[-6:]).replace("|", "/")[:600] or "(no summary)"


def _header() -> str:
    import platform
    from datetime import UTC, datetime

    import schemathesis

    def git(*a: str) -> str:
        return subprocess.run(["git", *a], cwd=REPO, capture_output=True, text=True).stdout.strip()

    dirty = (
        " (with uncommitted changes in the work tree)"
        if git("status", "--porcelain", "--", "backend")
        else ""
    )
    return (
        "# Long fuzzing run (issue 9)\n\n"
        f"Recorded {datetime.now(UTC):%Y-%m-%d %H:%M} UTC on {git('rev-parse', '--short', 'HEAD')}{dirty}, "
        f"Schemathesis {schemathesis.__version__}, Python {platform.python_version()}, "
        f"{os.cpu_count()} CPUs. "
        "What it does and how it counts: the docstring of bench/fuzz/run.py. Server errors and statuses the "
        "OpenAPI does not document are counted from the recorded requests (HAR), not from Schemathesis' "
        "verdict; method probes (a method the OpenAPI does not list for a path) are counted apart.\n\n"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--max-examples", type=int, default=150, help="fuzzing examples per operation")
    ap.add_argument("--seed", type=int, default=20261122)
    ap.add_argument("--out", type=Path, default=None, help="directory for HAR files and logs (default: temp)")
    ap.add_argument(
        "--principals",
        default="agent_x,member,admin",
        help="who calls, in this order (agent_x, anonymous, viewer, user_b, member, admin)",
    )
    ap.add_argument("--record", type=Path, default=None, help="write the report (markdown) to this file too")
    args = ap.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="iowatt-fuzz-long-"))
    out.mkdir(parents=True, exist_ok=True)
    command = " ".join([".venv/bin/python", "bench/fuzz/run.py", *sys.argv[1:]])
    started = time.monotonic()
    runs: list[dict[str, Any]] = []
    with postgres() as pg, redis_server() as redis, api_server(pg, redis, db="iowatt_fuzz_long") as srv:
        spec = httpx.get(f"{srv.url}/openapi.json", timeout=30).json()
        ids = known_ids(srv.world)
        schema_file = out / "openapi-with-links.json"
        schema_file.write_text(json.dumps(with_links(spec)))
        env = {
            **os.environ,
            "SCHEMATHESIS_HOOKS": "fuzz_hooks",
            "PYTHONPATH": f"{REPO / 'bench' / 'fuzz'}:{REPO}",
            "IOWATT_FUZZ_IDS": json.dumps(ids),
        }
        st = str(Path(sys.executable).parent / "schemathesis")
        for who in args.principals.split(","):
            auth = (
                []
                if who == "anonymous"
                else ["--header", f"Authorization: {srv.world.headers[who]['Authorization']}"]
            )
            cmd = [
                st,
                "run",
                str(schema_file),
                "--url",
                srv.url,
                *auth,
                "--checks",
                CHECKS,
                "--phases",
                PHASES,
                "--max-examples",
                str(args.max_examples),
                "--seed",
                str(args.seed),
                "--workers",
                "1",
                "--continue-on-failure",
                "--generation-database",
                "none",
                "--suppress-health-check",
                "all",
                "--request-timeout",
                "60",
                "--report",
                "har",
                "--report-har-path",
                str(out / f"{who}.har"),
                "--no-color",
            ]
            if who == "agent_x":
                for op in AGENT_OPS:
                    cmd += ["--include-name", op]
            print(f"--- schemathesis as {who}", flush=True)
            proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True)
            (out / f"{who}.log").write_text(proc.stdout + proc.stderr)
            runs.append({"who": who, "exit": proc.returncode, "summary": _summary(proc.stdout)})
            if who == "agent_x":  # the fuzzer rewrote X's inventory: give it back its policy
                put = httpx.put(
                    f"{srv.url}/api/v1/agents/{srv.world.ids['agent_x']}/inventory",
                    json=INVENTORY_WITH_POLICY,
                    headers=srv.world.headers["agent_x"],
                    timeout=30,
                )
                print(f"agent X's inventory restored: {put.status_code}", flush=True)
            print(proc.stdout[-2500:], flush=True)
        api_log = srv.log_tail(20000)
    t = tally(spec, [out / f"{r['who']}.har" for r in runs])
    text = report(t, runs, time.monotonic() - started, command)
    (out / "api.log").write_text(api_log)
    (out / "report.md").write_text(text + "\n")
    print(text)
    print(f"\nHAR files, Schemathesis logs and the API log: {out}")
    if args.record:
        args.record.write_text(_header() + text + "\n")
    bad = sum(c["server errors"] + c["undocumented"] for c in t["per_op"].values())
    return 1 if bad or any(r["exit"] != 0 for r in runs) else 0


if __name__ == "__main__":
    sys.exit(main())
