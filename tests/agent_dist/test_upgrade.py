"""Upgrading an enrolled host: the install line with --upgrade (what the Agents page shows for an
agent older than the bundle served) replaces the installed bundle with the newest one, keeps the
enrolment, and needs no token; the newest is the highest version, 0.1.10 after 0.1.9."""

import subprocess
from pathlib import Path

from backend.agent_dist import service
from tests.agent_dist.conftest import FAKE_AGENT, make_tarball
from tests.agent_dist.test_install_script import BARE_ENV, run_script, serve


def test_upgrade_installs_the_newest_bundle_and_keeps_the_enrolment(dist_dir: Path, tmp_path: Path) -> None:
    with serve(dist_dir) as url:
        first = run_script(tmp_path, "--server", url, "--no-service", "--no-enroll")
        assert first.returncode == 0, first.stderr
        state = tmp_path / "state"
        (state / "agent.json").write_text('{"agent_id": "kept"}')
        # a newer bundle, whose version sorts before 9.9.9 as text
        newer = FAKE_AGENT.replace("9.9.9", "9.10.0")
        make_tarball(
            dist_dir / "iowatt-agent-9.10.0-linux-x86_64.tar.gz", "iowatt-agent-9.10.0-linux-x86_64", newer
        )
        assert "iowatt-agent-9.10.0-linux-x86_64.tar.gz" in service.install_script()
        assert service.describe().version == "9.10.0"
        up = run_script(tmp_path, "--server", url, "--no-service", "--upgrade")
        assert up.returncode == 0, up.stderr
    assert "downloading iowatt-agent-9.10.0-linux-x86_64.tar.gz" in up.stderr
    calls = tmp_path / "opt" / "iowatt-agent" / "calls"  # the fake agent's log of what it was asked
    assert not calls.exists() or "enroll" not in calls.read_text()
    version = subprocess.run(
        [tmp_path / "bin" / "iowatt-agent", "--version"], capture_output=True, text=True, env=BARE_ENV
    )
    assert version.stdout == "iowatt-agent 9.10.0\n"
    assert (state / "agent.json").read_text() == '{"agent_id": "kept"}'


def test_upgrade_refuses_a_host_not_enrolled_and_a_token(dist_dir: Path, tmp_path: Path) -> None:
    with serve(dist_dir) as url:
        none = run_script(tmp_path, "--server", url, "--no-service", "--upgrade")
        assert none.returncode == 2 and "no enrolled agent" in none.stderr, none.stderr
        token = tmp_path / "token"
        token.write_text("iwe_x")
        both = run_script(tmp_path, "--server", url, "--upgrade", "--token-file", str(token))
        assert both.returncode == 2 and "no --token-file" in both.stderr, both.stderr
    assert not (tmp_path / "opt").exists()
