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


def test_ui_smoke_in_chromium(live: Stack, tmp_path: Path) -> None:
    for need, fix in (
        (CHROMIUM, "apt-get install chromium (make deps)"),
        (PLAYWRIGHT, "make deps-ui"),
        (DIST, "make ui"),
    ):
        assert Path(need).exists(), f"{need} is missing: {fix}"
    disk = tempfile.mkdtemp(prefix="iowatt-browser-disk-", dir="/var/tmp")
    ram = tempfile.mkdtemp(prefix="iowatt-browser-ram-", dir="/dev/shm")
    try:
        ids = [live.queue(disk, name="browser: disk"), live.queue(ram, name="browser: ram")]
        for rid in ids:
            assert live.wait(rid)["status"] == "succeeded"
        env = {
            **os.environ,
            "IOWATT_URL": live.url,
            "IOWATT_EMAIL": live.email,
            "IOWATT_PASSWORD": live.password,
            "IOWATT_ARTIFACTS": str(tmp_path),
            "IOWATT_SMOKE_QUEUE": "1",
            "IOWATT_SMOKE_TARGET": tempfile.mkdtemp(prefix="iowatt-browser-form-", dir="/var/tmp"),
        }
        proc = subprocess.run(
            ["node", "tests/browser/smoke.mjs"],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        report = proc.stdout + proc.stderr
        assert proc.returncode == 0, (
            f"browser smoke failed (screenshots in {tmp_path}):\n{report}\n{live.tail()}"
        )
        assert " 0 failed" in report
    finally:
        shutil.rmtree(ram, ignore_errors=True)
        shutil.rmtree(disk, ignore_errors=True)
