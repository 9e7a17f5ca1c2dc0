"""The web UI in Debian's Chromium (playwright-core) against the real platform with real runs."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack")]

CHROMIUM = "/usr/bin/chromium"
PLAYWRIGHT = Path(REPO) / "frontend" / "node_modules" / "playwright-core"
DIST = Path(REPO) / "frontend" / "dist" / "index.html"


def _needs() -> None:
    for need, fix in (
        (CHROMIUM, "apt-get install chromium (make deps)"),
        (PLAYWRIGHT, "make deps-ui"),
        (DIST, "make ui"),
    ):
        assert Path(need).exists(), f"{need} is missing: {fix}"


def _node(script: str, live: Stack, tmp_path: Path, **extra: str) -> str:
    env = {
        **os.environ,
        "IOWATT_URL": live.url,
        "IOWATT_EMAIL": live.email,
        "IOWATT_PASSWORD": live.password,
        "IOWATT_ARTIFACTS": str(tmp_path),
        **extra,
    }
    proc = subprocess.run(["node", script], cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    report = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{script} failed (screenshots in {tmp_path}):\n{report}\n{live.tail()}"
    assert " 0 failed" in report
    return report


def test_ui_smoke_in_chromium(live: Stack, tmp_path: Path) -> None:
    _needs()
    disk = tempfile.mkdtemp(prefix="iowatt-browser-disk-", dir="/var/tmp")
    ram = tempfile.mkdtemp(prefix="iowatt-browser-ram-", dir="/dev/shm")
    form = tempfile.mkdtemp(prefix="iowatt-browser-form-", dir="/var/tmp")
    Path(f"{form}-b").mkdir()
    try:
        for d in (disk, ram, form, f"{form}-b"):  # the host lists them (ADR 0009)
            live.allow(d)
        ids = [live.queue(disk, name="browser: disk"), live.queue(ram, name="browser: ram")]
        for rid in ids:
            assert live.wait(rid)["status"] == "succeeded"
        _node("tests/browser/smoke.mjs", live, tmp_path, IOWATT_SMOKE_QUEUE="1", IOWATT_SMOKE_TARGET=form)
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
        assert (tmp_path / f"{shot}.png").stat().st_size > 10_000
