"""`make down` and the agent's drain agree (issue 11): down.sh waits for the drain up.sh gives
the agent (plus its kill grace and last uploads) before it kills it, and says what it waits for."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from pathlib import Path

from iowatt_agent.loop import LoopSettings

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ROOT / "scripts"


def test_down_waits_longer_than_the_drain_up_gives_the_agent():
    up = (SCRIPTS / "up.sh").read_text()
    down = (SCRIPTS / "down.sh").read_text()
    [agent_line] = [line for line in up.splitlines() if line.startswith("start agent ")]
    drain = float(re.search(r"--drain-timeout (\d+)", agent_line).group(1))
    assert drain == LoopSettings().drain_timeout_s == 600
    grace = float(re.search(r"^stop agent (\d+) ", down, re.M).group(1))
    # as the systemd unit: the drain, the engine's kill grace, a minute for the last uploads
    assert grace >= drain + LoopSettings().kill_grace_s + 60
    assert f"up to {drain:g} s" in down  # what make down prints says the same


def test_stop_waits_for_a_draining_process_and_shows_its_progress(tmp_path):
    """lib.sh's stop() with a process that takes 11 s to drain: not killed, progress at 10 s."""
    drainer = tmp_path / "drainer.py"
    drainer.write_text(
        "import signal, sys, time\n"
        "signal.signal(signal.SIGTERM, lambda *a: (time.sleep(11), sys.exit(0)))\n"
        "print('ready', flush=True)\n"
        "time.sleep(600)\n"
    )
    script = (
        f'source "{SCRIPTS}/lib.sh"\n'
        'mkdir -p "$RUN" "$LOGS"\n'
        f'start agent "{sys.executable}" "{drainer}"\n'
        # wait for the stand-in's handler (on a loaded 2-core machine Python can take seconds to start)
        'for _ in $(seq 600); do grep -q ready "$LOGS/agent.log" 2>/dev/null && break; sleep 0.1; done\n'
        'grep -q ready "$LOGS/agent.log" || { echo "the stand-in never started" >&2; exit 3; }\n'
        'stop agent 30 "finishing its current run"\n'
        'test ! -e "$RUN/agent.pid"\n'
    )
    t0 = time.monotonic()
    done = subprocess.run(
        ["bash", "-c", script],
        env={"IOWATT_STATE_DIR": str(tmp_path / "state"), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    took = time.monotonic() - t0
    assert done.returncode == 0, done.stderr
    assert "agent: finishing its current run (10 s of 30 s before it is killed)" in done.stdout
    assert "agent stopped" in done.stdout and "killed after" not in done.stdout
    assert took > 10.5  # it waited for the drain (not being killed is the stdout's "agent stopped")
