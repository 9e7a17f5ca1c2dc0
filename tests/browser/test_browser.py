"""The web UI in Debian's Chromium (playwright-core) against the real platform with real runs."""

import atexit
import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO

import psycopg
import pytest

import backend
from tests.conftest import REPO
from tests.stack import SHORT_WORKLOAD, Stack
from tests.waiting import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-a")]

# the Chromium tests/browser/lib.mjs launches: Debian's headless shell (package
# chromium-headless-shell, which make deps-system installs), else the full browser
HEADLESS_SHELL = Path("/usr/bin/chromium-headless-shell")
CHROMIUM = HEADLESS_SHELL if HEADLESS_SHELL.exists() else Path("/usr/bin/chromium")
PLAYWRIGHT = Path(REPO) / "frontend" / "node_modules" / "playwright-core"
DIST = Path(REPO) / "frontend" / "dist" / "index.html"


def _needs() -> None:
    for need, fix in (
        (CHROMIUM, "apt-get install chromium-headless-shell (make deps-system)"),
        (PLAYWRIGHT, "make deps-ui"),
        (DIST, "make ui"),
    ):
        assert Path(need).exists(), f"{need} is missing: {fix}"


_server: list[tuple[subprocess.Popen[str], str]] = []  # this test process's browser server
_runner: list[subprocess.Popen[str]] = []  # and its runner.mjs


def _stop_browser_server() -> None:
    for proc in [*_runner, *(p for p, _ in _server)]:
        if proc.poll() is None and proc.stdin is not None:
            proc.stdin.close()  # runner.mjs exits; browser_server.mjs closes the browser and exits
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
    _runner.clear()
    _server.clear()


atexit.register(_stop_browser_server)

RUNNER_END = "\0iowatt-runner exit "  # runner.mjs's line after a script's output


def _runner_proc() -> subprocess.Popen[str]:
    """This test process's runner.mjs (one node for every script it runs), started when there is
    none or the last one has exited (crashed, or killed with a script that hung)."""
    if _runner and _runner[0].poll() is not None:
        _runner.clear()
    if not _runner:
        _runner.append(
            subprocess.Popen(
                ["node", "tests/browser/runner.mjs"],
                cwd=REPO,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
        )
    return _runner[0]


def _kill_runner() -> None:
    for proc in _runner:
        proc.kill()
        proc.wait()
    _runner.clear()


def _browser_ws() -> str:
    """The WebSocket endpoint of this test process's browser server (browser_server.mjs), for
    scripts run as nodes of their own (`_browser_server_wanted`; runner.mjs's scripts work in the
    runner's Chromium): one launch for every such script, each in contexts of its own. A server
    that has exited (its browser crashed or was killed) is noticed here and another one started."""
    if _server and _server[0][0].poll() is not None:
        _server.clear()
    if not _server:
        proc = subprocess.Popen(
            ["node", "tests/browser/browser_server.mjs"],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        ws = proc.stdout.readline().strip()
        assert ws.startswith("ws://"), f"browser_server.mjs printed {ws!r} (exit {proc.poll()})"
        _server.append((proc, ws))
    return _server[0][1]


def _browser_server_wanted() -> bool:
    """Scripts run by runner.mjs work in its Chromium (launched by the runner itself: no browser
    server between them); a node per script (IOWATT_BROWSER_RUNNER=0) connects to this process's
    browser server, and so do the runner's scripts with IOWATT_BROWSER_SERVER=1 (to compare)."""
    return os.environ.get("IOWATT_BROWSER_RUNNER") == "0" or os.environ.get("IOWATT_BROWSER_SERVER") == "1"


def _shots_wanted() -> bool:
    """Screenshots are drawn when IOWATT_SHOTS=1 or a test's own IOWATT_*_SHOTS directory is set
    (someone wants to look at them); otherwise each `shot` only checks what the page shows."""
    return os.environ.get("IOWATT_SHOTS", "") not in ("", "0") or any(
        k.startswith("IOWATT_") and k.endswith("_SHOTS") and k != "IOWATT_SHOTS" and v
        for k, v in os.environ.items()
    )


def _shot(report: str, where: Path, name: str, min_bytes: int = 10_000) -> None:
    """The script's `shot NAME` was reached and its page showed something (lib.mjs shotOf prints
    `shot NAME: H px, N chars` once no "Loading…" is left); when screenshots were drawn
    (`_shots_wanted`), where/NAME.png is over min_bytes too."""
    assert f"shot {name}: " in report, f"no shot {name} in:\n{report}"
    if _shots_wanted():
        assert (where / f"{name}.png").stat().st_size > min_bytes, name


def _node(
    script: str,
    live: Stack,
    tmp_path: Path,
    pauses: dict[str, Callable[[], object]] | None = None,
    **extra: str,
) -> str:
    """Run a browser script against the stack; its report. With `pauses`, the script runs with
    IOWATT_PAUSES=1 and stops at each `pause: NAME` line (lib.mjs pause) until pauses[NAME]() has
    set the server up for its next step: one browser across states the test changes."""
    env = {
        **os.environ,
        "IOWATT_URL": live.url,
        "IOWATT_EMAIL": live.email,
        "IOWATT_PASSWORD": live.password,
        "IOWATT_ARTIFACTS": str(tmp_path),
        **({"IOWATT_BROWSER_WS": _browser_ws()} if _browser_server_wanted() else {}),
        **({"IOWATT_SHOTS": "1"} if _shots_wanted() else {}),
        **({"IOWATT_PAUSES": "1"} if pauses else {}),
        **extra,
    }
    returncode, report = _run_script(script, env, pauses)
    if os.environ.get("IOWATT_STEP_CPU") == "1":  # each step's CPU, to find what a script spends
        print(f"{script}:\n{report}")
    assert returncode == 0, f"{script} failed (screenshots in {tmp_path}):\n{report}\n{live.tail()}"
    assert " 0 failed" in report
    return report


def _run_script(
    script: str, env: dict[str, str], pauses: dict[str, Callable[[], object]] | None = None
) -> tuple[int, str]:
    """A browser script run with exactly `env`: by this process's runner.mjs, or as a node of its
    own with IOWATT_BROWSER_RUNNER=0 (as before runner.mjs); its exit status and what it printed."""
    if os.environ.get("IOWATT_BROWSER_RUNNER") == "0":
        return _node_process(script, env, pauses)
    return _node_runner(script, env, pauses)


def _answer_pauses(line: str, pauses: dict[str, Callable[[], object]] | None, stdin: IO[str]) -> None:
    if line.startswith("pause: ") and pauses:
        pauses[line.removeprefix("pause: ").strip()]()
        stdin.write("\n")
        stdin.flush()


def _node_runner(
    script: str, env: dict[str, str], pauses: dict[str, Callable[[], object]] | None
) -> tuple[int, str]:
    """The script run by this process's runner.mjs: its exit status and what it printed."""
    proc = _runner_proc()
    assert proc.stdout is not None and proc.stdin is not None
    lines = []
    try:
        proc.stdin.write(json.dumps({"script": script, "env": env}) + "\n")
        proc.stdin.flush()
        for line in proc.stdout:
            if line.startswith(RUNNER_END):
                return int(line.removeprefix(RUNNER_END)), "".join(lines)
            lines.append(line)
            _answer_pauses(line, pauses, proc.stdin)
    except BrokenPipeError:
        pass
    except BaseException:  # a failed pause, or the test's timeout (a script that hangs): no node left
        _kill_runner()
        raise
    returncode = proc.wait()
    _runner.clear()
    raise AssertionError(
        f"{script}: the browser runner (tests/browser/runner.mjs) exited with {returncode} before "
        f"the script ended (the next test starts another); what it printed:\n{''.join(lines)}"
    )


def _node_process(
    script: str, env: dict[str, str], pauses: dict[str, Callable[[], object]] | None
) -> tuple[int, str]:
    """The script run as a node of its own: its exit status and what it printed."""
    with subprocess.Popen(
        ["node", script],
        cwd=REPO,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    ) as proc:
        assert proc.stdout is not None and proc.stdin is not None
        lines = []
        try:
            for line in proc.stdout:
                lines.append(line)
                _answer_pauses(line, pauses, proc.stdin)
            proc.stdin.close()
            return proc.wait(timeout=60), "".join(lines)
        except BaseException:  # a failed step, or the test's timeout: no browser left behind
            proc.kill()
            raise


def test_ui_smoke_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    disk = tempfile.mkdtemp(prefix="iowatt-browser-disk-", dir="/var/tmp")
    ram = tempfile.mkdtemp(prefix="iowatt-browser-ram-", dir="/dev/shm")
    form = tempfile.mkdtemp(prefix="iowatt-browser-form-", dir="/var/tmp")
    Path(f"{form}-b").mkdir()
    try:
        for d in (disk, ram, form, f"{form}-b"):  # the host lists them (ADR 0009)
            live.allow(d)
        ids = [
            live.queue(disk, SHORT_WORKLOAD, name="browser: disk"),
            live.queue(ram, SHORT_WORKLOAD, name="browser: ram"),
        ]
        for rid in ids:
            assert live.wait(rid)["status"] == "succeeded"
        # the campaign it queues from the UI runs a team workload of two 1 s jobs (the preset's
        # 9 s are not what the smoke test is about)
        with live.api() as api:
            team = api.get("/auth/me").json()["teams"][0]["id"]
            r = api.post("/workloads", json={"name": "smoke-short", "team_id": team, "spec": SHORT_WORKLOAD})
            assert r.status_code == 201, r.text
        _node(
            "tests/browser/smoke.mjs",
            live,
            tmp_path,
            IOWATT_SMOKE_QUEUE="1",
            IOWATT_SMOKE_TARGET=form,
            IOWATT_SMOKE_WORKLOAD="smoke-short",
            IOWATT_SMOKE_VERSION=backend.__version__,  # the UI's footer (issue 30)
        )
    finally:
        for d in (ram, disk, form, f"{form}-b"):
            shutil.rmtree(d, ignore_errors=True)


def test_host_policy_ui_in_chromium(live: Stack, tmp_path: Path) -> None:
    """Issue 9's UI: only the host's targets and meters, the typed confirmation before a
    destructive run, agents/enrolment tokens/API tokens revoked, logout ends the session."""
    _needs()
    report = _node("tests/browser/policy.mjs", live, tmp_path)
    assert "sends destructive" in report
    for shot in (
        "policy-destructive-dialog",
        "policy-agents",
        "policy-enrollment-token",
        "policy-api-tokens",
    ):
        _shot(report, tmp_path, shot)


def test_energy_states_in_chromium(live: Stack, tmp_path: Path) -> None:
    """Issue 10: a run's energy in the UI. Two real runs measured with an estimate meter; once the
    worker computed their energy the page shows the figures and Compare charts by metric kind.
    Then the database is put back in the states the API reports: samples stored but no energy yet
    (`pending`: "energy: computing…", polled with growing waits), and that for longer than the
    deadline since the upload (`failed`: "energy unavailable: <reason>", no more polling)."""
    _needs()
    live.agent_cli("meters", "set", "plate", "estimate:5,9.5")
    work = tempfile.mkdtemp(prefix="iowatt-browser-energy-", dir="/var/tmp")
    try:
        live.allow(work)
        with live.api() as api:
            ids = []
            for name in ("energy: a", "energy: b"):
                body = {
                    "agent_id": live.agent_id,
                    "target_path": work,
                    "workload": SHORT_WORKLOAD,
                    "name": name,
                    "meter": "plate",
                    "idle_s": 0,
                }
                r = api.post("/runs", json=body)
                assert r.status_code == 201, r.text
                ids.append(r.json()["id"])
            for rid in ids:
                assert live.wait(rid)["status"] == "succeeded"

                def computed(rid: str = rid) -> bool:
                    return bool(api.get(f"/runs/{rid}").json()["energy"]["status"] == "ok")

                wait_until(
                    computed,
                    timeout=60,
                    interval=0.3,
                    message=lambda: f"the worker computes the energy; logs: {live.tail()}",
                )
        run = ids[0]
        db = live.commands["api"][1]["IOWATT_DATABASE_URL"].replace("postgresql+psycopg://", "postgresql://")
        with psycopg.connect(db, autocommit=True) as conn:
            old = "now() - interval '16 minutes'"
            # one browser through the five steps; before the last two the run is put in their state
            report = _node(
                "tests/browser/energy.mjs",
                live,
                tmp_path,
                pauses={
                    "computing": lambda: conn.execute("DELETE FROM run_energy WHERE run_id = %s", (run,)),
                    "failed": lambda: conn.execute(
                        f"UPDATE run_results SET uploaded_at = {old} WHERE run_id = %s", (run,)
                    ),
                },
                IOWATT_ENERGY_STEPS="ok,compare,pages,computing,failed",
                IOWATT_RUN_ID=run,
                IOWATT_RUN_IDS=",".join(ids),
            )
        shots = ("energy-ok", "compare-kinds", "compare-devices", "energy-computing", "energy-unavailable")
        for shot in shots:
            _shot(report, tmp_path, shot)
    finally:
        with contextlib.suppress(subprocess.CalledProcessError):
            live.agent_cli("meters", "unset", "plate")
        shutil.rmtree(work, ignore_errors=True)
