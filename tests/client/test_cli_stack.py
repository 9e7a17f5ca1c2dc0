"""The `iowatt` command and its client against the real stack (issue 26's "Done when"): one file of
each format imported through the API and through `iowatt import`, every original downloaded back
byte for byte; an imported CrystalDiskMark result beside a measured `crystaldiskmark` run in the
CrystalDiskMark view; every documented exit code (0, 1, 2, 3, 4); the entry point as a real
process. The command runs in-process (typer's CliRunner) on the shared stack (`live`)."""

import json
import shutil
import subprocess
import sys
import tempfile
import uuid
import zipfile
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from iowatt_client import Client
from iowatt_client.cli import EXIT_AUTH, EXIT_FAILED, EXIT_NOT_FOUND, EXIT_OK, EXIT_USAGE, app
from typer.testing import CliRunner

from backend.workload.builtin import BUILTINS
from tests.stack import Stack

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("stack-b")]

SAMPLES = Path(__file__).parents[1] / "imports" / "samples"
MiB = 1 << 20
# one sample of each format the importers read (the registry's keys)
ONE_OF_EACH = {
    "fio-json": "fio/fio-3.33.json",
    "fio-terse": "fio/fio-3.33-v5.terse",
    "fio-normal": "fio/fio-3.33.normal",
    "crystaldiskmark": "crystaldiskmark/cdm9_nvme_mix.txt",
    "kdiskmark": "crystaldiskmark/kdm3_default.txt",
    "diskspd-xml": "diskspd/diskspd22_randrw.xml",
    "diskspd-text": "diskspd/diskspd2017_mix.txt",
    "vdbench-summary": "vdbench/summary_raw_50407.html",
    "vdbench-flatfile": "vdbench/flatfile_raw_50407.html",
    "elbencho-text": "elbencho/elbencho-3.0_resfile.txt",
    "elbencho-csv": "elbencho/elbencho-3.0.25_randrw.csv",
    "sysbench-fileio": "sysbench/sysbench-1.0.20_rndrw.txt",
    "postmark": "postmark/postmark-1.5_two_runs.txt",
    "bonnie-csv": "bonnie/bonnie-1.98_two_runs.csv",
    "iozone": "iozone/iozone-3.492_auto_sd.txt",
}


class Cli:
    def __init__(self, live: Stack, config: Path) -> None:
        self.env = {"IOWATT_URL": live.url, "IOWATT_TOKEN": live.token, "IOWATT_CONFIG": str(config)}
        self.runner = CliRunner()

    def __call__(self, *args: str, code: int = EXIT_OK, env: dict[str, Any] | None = None) -> Any:
        r = self.runner.invoke(app, list(args), env={**self.env, **(env or {})})
        assert r.exit_code == code, f"iowatt {' '.join(args)}: exit {r.exit_code}\n{r.stdout}\n{r.stderr}"
        return r

    def json(self, *args: str, code: int = EXIT_OK) -> Any:
        return json.loads(self(*args, "--json", code=code).stdout)


@pytest.fixture
def cli(live: Stack, tmp_path: Path) -> Cli:
    return Cli(live, tmp_path / "config.json")


@pytest.fixture
def team(live: Stack) -> Iterator[str]:
    """A team of the stack's admin for this test's imports, deleted (with its runs) afterwards."""
    name = f"cli-{uuid.uuid4().hex[:8]}"
    with live.api() as api:
        r = api.post("/teams", json={"name": name})
        assert r.status_code == 201, r.text
        team_id = r.json()["id"]
        try:
            yield name
        finally:
            api.request("DELETE", f"/teams/{team_id}", json={"confirm_name": name})


def test_one_file_of_each_format_through_the_api_and_the_command(live: Stack, cli: Cli, team: str) -> None:
    files = {fmt: SAMPLES / rel for fmt, rel in ONE_OF_EACH.items()}
    with Client(live.url, live.token) as c:
        from backend.imports.formats import registry

        assert sorted(files) == sorted(f.format for f in c.import_formats()) == registry.names()
        team_id = next(t.id for t in c.me().teams if t.name == team)
        # through the API: all the files in one multipart request, a dry run (without the vdbench
        # summary: with the flatfile of its run it would make one run, test_vdbench_directory_...)
        api = {k: v for k, v in files.items() if k != "vdbench-summary"}
        dry = c.import_files(list(api.values()), team_id=team_id, dry_run=True)
        assert [d.format for d in dry] == list(api) and all(d.dry_run and d.runs for d in dry)
        # through the command: stored, each run labelled with its tool
        out = cli.json("import", *map(str, files.values()), "--team", team, "--host", "lab-cli")
        assert [o["format"] for o in out] == list(files)
        assert all(not o["duplicate"] and all(r["run_id"] for r in o["runs"]) for o in out)
        # each original back, byte for byte, from any of its runs
        for o, path in zip(out, files.values(), strict=True):
            for r in o["runs"]:
                assert c.run_source(r["run_id"]) == path.read_bytes(), o["format"]
        # the API again: the same bytes are duplicates naming the same runs
        again = c.import_files(list(api.values()), team_id=team_id)
        assert all(a.duplicate for a in again)
        assert [[r.run_id for r in a.runs] for a in again] == [
            [r["run_id"] for r in o["runs"]] for o in out if o["format"] != "vdbench-summary"
        ]
        run_id = out[0]["runs"][0]["run_id"]
    shown = cli.json("runs", "show", run_id)
    assert shown["origin"]["label"] in cli("runs", "show", run_id).stdout  # a person sees it too
    assert shown["source"] == "import" and shown["origin"]["version"]
    assert shown["origin"]["label"] == f"imported from fio {shown['origin']['version']}"
    listed = cli.json("runs", "list", "--q", "lab-cli", "--limit", "500")
    assert run_id in {r["id"] for r in listed["items"]}
    table = cli("import", "--list-formats").stdout
    assert "crystaldiskmark" in table and "CrystalDiskMark" in table
    dry_out = cli.json("import", str(files["postmark"]), "--team", team, "--dry-run")
    assert dry_out[0]["dry_run"] is True and dry_out[0]["runs"][0]["run_id"] is None


def test_vdbench_directory_is_one_run(live: Stack, cli: Cli, team: str, tmp_path: Path) -> None:
    """Issue 26: `iowatt import DIR` sends the directory's summary/totals/flatfile.html in one
    request: one run, each file downloadable; other files ignored with a note; the same directory
    again is a duplicate; a directory without them is a usage error."""
    out_dir = tmp_path / "vdbench-out"
    out_dir.mkdir()
    names = {"summary.html": "summary_raw_50407.html", "totals.html": "totals_raw_50407.html"}
    names["flatfile.html"] = "flatfile_raw_50407.html"
    for name, sample in names.items():
        shutil.copyfile(SAMPLES / "vdbench" / sample, out_dir / name)
    (out_dir / "logfile.html").write_text("<html>log</html>")
    r = cli("import", str(out_dir), "--team", team, "--json")
    assert "logfile.html" in r.stderr and "ignored" in r.stderr
    [one] = json.loads(r.stdout)
    assert (one["format"], one["duplicate"], len(one["runs"])) == ("vdbench-flatfile", False, 1)
    run_id = one["runs"][0]["run_id"]
    with Client(live.url, live.token) as c:
        for name in names:
            assert c.run_source(run_id, file=name) == (out_dir / name).read_bytes(), name
    [again] = cli.json("import", str(out_dir), "--team", team)
    assert again["duplicate"] is True and [x["run_id"] for x in again["runs"]] == [run_id]
    empty = tmp_path / "empty"
    empty.mkdir()
    (empty / "notes.txt").write_text("x")
    r = cli("import", str(empty), "--team", team, code=EXIT_USAGE)
    assert "no vdbench output files" in r.stderr


def _short_cdm() -> dict[str, Any]:
    """The crystaldiskmark preset's own jobs (its job names and cache mode: what makes a run the
    preset's for the views), as small as they run: 0.2 s per pass on a 16 MiB file, paced (200
    I/Os a second, 20 of 1 MiB: the speed is not what this test reads; at full speed on the disk the
    40 passes cost the engine ~3 CPU-s, the 16-thread ones most)."""
    spec = BUILTINS["crystaldiskmark"][1]
    jobs = [
        j.model_copy(
            update={
                "size_bytes": max(16 * MiB, 2 * (j.bs_bytes or 0)),
                "runtime_s": 0.2,
                "rate_iops": 20 if (j.bs_bytes or 0) >= MiB else 200,
            }
        )
        for j in spec.jobs
    ]
    return spec.model_copy(update={"jobs": jobs}).model_dump(mode="json")


def test_imported_crystaldiskmark_beside_a_measured_run(live: Stack, cli: Cli, tmp_path: Path) -> None:
    target = tempfile.mkdtemp(prefix="iowatt-cli-cdm-", dir="/var/tmp")
    made: list[str] = []
    try:
        live.allow(target)
        spec = tmp_path / "cdm.json"
        spec.write_text(json.dumps(_short_cdm()))
        # a unique copy of the sample (the team may hold the sample itself from another test)
        cdm = tmp_path / "cdm8.txt"
        cdm.write_bytes(
            (SAMPLES / "crystaldiskmark" / "cdm8_default.txt").read_bytes() + f"\n{uuid.uuid4()}\n".encode()
        )
        imported = cli.json("import", str(cdm), "--format", "crystaldiskmark", "--device", "CDM disk")
        imported_id = imported[0]["runs"][0]["run_id"]
        made.append(imported_id)
        measured = cli.json(
            "run",
            str(spec),
            "--target",
            target,
            "--agent",
            live.agent_id,
            "--idle-s",
            "0",
            "--name",
            "cli cdm",
        )
        made.append(measured["id"])
        assert measured["status"] == "succeeded", measured["error"]
        assert measured["preset"] == "crystaldiskmark" or measured["preset"] is None
        view = cli.json("views", "table", "crystaldiskmark", measured["id"])
        assert len(view["rows"]) >= 4 and view["runs"][0]["id"] == measured["id"]
        catalog = cli.json("views", "--run", measured["id"])
        assert "crystaldiskmark" in catalog["applicable"]
        compared = cli("compare", measured["id"], imported_id, "--csv", "--no-fail")
        assert compared.stdout.splitlines()[0].count(",") >= 2
        took = datetime.fromisoformat(measured["finished_at"]) - datetime.fromisoformat(
            measured["started_at"]
        )
        print(f"measured crystaldiskmark run (32 jobs of 0.2 s, 16 MiB files): {took.total_seconds():.1f} s")
        pair = cli.runner.invoke(
            app, ["views", "table", "crystaldiskmark", measured["id"], imported_id, "--json"], env=cli.env
        )
        assert pair.exit_code == EXIT_OK, pair.stderr
        table = json.loads(pair.stdout)
        runs = {r["id"]: r for r in table["runs"]}
        assert runs[imported_id]["label"].endswith("(imported from CrystalDiskMark 8)"), runs
        assert runs[imported_id]["origin"]["kind"] == "imported" and runs[measured["id"]]["origin"] is None
        keys = [c["key"] for c in table["columns"]]
        mine = [
            dict(zip(keys, [c["value"] for c in row["cells"]], strict=True))
            for row in table["rows"]
            if row["group"] == imported_id
        ]
        # CDM 8's default profile on the preset's rows, the figures the file printed, nothing invented
        assert [r["test"] for r in mine] == ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]
        assert all(r["read_best_mbps"] and r["write_best_iops"] and r["read_best_lat"] for r in mine)
        assert all(r["read_median_mbps"] is None and r["write_passes"] is None for r in mine)
    finally:
        for rid in made:
            cli("runs", "delete", rid, "--yes")
        shutil.rmtree(target, ignore_errors=True)


def _slower(doc: dict[str, Any], factor: float) -> dict[str, Any]:
    doc = json.loads(json.dumps(doc))
    for job in doc["jobs"]:
        for d in ("read", "write"):
            for k in ("bw_bytes", "bw", "iops"):
                if k in job[d]:
                    job[d][k] = job[d][k] * factor
    return doc


def test_exit_codes(live: Stack, cli: Cli, tmp_path: Path) -> None:
    # 0: ok
    agents = cli.json("agents")
    assert live.agent_id in {a["id"] for a in agents}
    # 2: usage (a bad option; a request the server refuses as invalid)
    cli("runs", "list", "--limit", "0", code=EXIT_USAGE)
    cli("runs", "show", "not-a-run-id", code=EXIT_USAGE)
    # 3: auth (a bad token; no login at all)
    r = cli("runs", "list", code=EXIT_AUTH, env={"IOWATT_TOKEN": "iowatt_bad_token"})
    assert "401" in r.stderr
    cli("agents", code=EXIT_AUTH, env={"IOWATT_URL": None, "IOWATT_TOKEN": None})
    # 4: not found
    r = cli("runs", "show", str(uuid.uuid4()), code=EXIT_NOT_FOUND)
    assert "404" in r.stderr
    # 1: a comparison with a regression (the same fio file, half as fast), and a failed run
    base = json.loads((SAMPLES / "fio" / "fio-3.33.json").read_text())
    base["time"] = str(uuid.uuid4())  # unique bytes: not a duplicate of another test's import
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    a.write_text(json.dumps(base))
    b.write_text(json.dumps(_slower(base, 0.5)))
    made = []
    try:
        out = cli.json("import", str(a), str(b), "--host", "cli-regress", "--device", "disk R")
        ra, rb = (o["runs"][0]["run_id"] for o in out)
        made += [ra, rb]
        verdict = cli.json("compare", ra, rb, code=EXIT_FAILED)
        assert verdict["regressions"] and all(x["pct_change"] <= -10 for x in verdict["regressions"])
        cli("compare", ra, rb, "--no-fail")
        cli("compare", ra, rb, "--threshold", "60")  # 50 % slower is under a 60 % threshold
        cli("compare", rb, ra)  # b as the baseline: a is faster, no regression
        # a run that fails on the host: its target directory is gone when the agent leases it
        gone = tempfile.mkdtemp(prefix="iowatt-cli-gone-", dir="/dev/shm")
        live.allow(gone)
        Path(gone).rmdir()
        # (as a person sees it: the progress bar on stderr, the outcome on stdout)
        r = cli(
            "run",
            "quick",
            "--target",
            gone,
            "--agent",
            live.agent_id,
            "--idle-s",
            "0",
            "--shorten",
            "0.01",
            code=EXIT_FAILED,
        )
        run_id = r.stderr.split("queued ", 1)[1].split()[0]
        made.append(run_id)
        assert r.stdout.startswith(f"{run_id}: failed"), r.stdout
        assert cli.json("runs", "show", run_id)["error"]
    finally:
        for rid in made:
            cli("runs", "delete", rid, "--yes")
    cli("runs", "show", made[0], code=EXIT_NOT_FOUND)  # deleted


def test_login_stores_a_0600_config_and_the_entry_point_runs(live: Stack, cli: Cli, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    no_env = {"IOWATT_URL": None, "IOWATT_TOKEN": None}
    out = json.loads(cli("login", live.url, "--token", live.token, "--json", env=no_env).stdout)
    assert out["config"] == str(config) and out["email"] == live.email
    assert config.stat().st_mode & 0o777 == 0o600
    assert json.loads(config.read_text()) == {"url": live.url, "token": live.token}
    cli("login", live.url, "--token", "iowatt_wrong", code=EXIT_AUTH, env=no_env)
    # with e-mail and password (a browser session's token is stored)
    out = json.loads(
        cli(
            "login",
            live.url,
            "--email",
            live.email,
            "--json",
            env={**no_env, "IOWATT_PASSWORD": live.password},
        ).stdout
    )
    assert out["email"] == live.email and json.loads(config.read_text())["token"] != live.token
    cli("login", live.url, "--email", live.email, code=EXIT_AUTH, env={**no_env, "IOWATT_PASSWORD": "wrong"})
    config.write_text(json.dumps({"url": live.url, "token": live.token}))
    # the installed command, as a real process, reading the stored config
    iowatt = shutil.which("iowatt", path=str(Path(sys.executable).parent))
    assert iowatt, "pip install -e client (make deps-py)"
    env = {"PATH": "/usr/bin:/bin", "IOWATT_CONFIG": str(config), "HOME": str(tmp_path)}
    p = subprocess.run([iowatt, "agents", "--json"], env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    assert live.agent_id in {a["id"] for a in json.loads(p.stdout)}
    p = subprocess.run(
        [iowatt, "runs", "show", str(uuid.uuid4())], env=env, capture_output=True, text=True, timeout=60
    )
    assert p.returncode == EXIT_NOT_FOUND and p.stderr.startswith("iowatt: 404"), p.stderr
    comp = subprocess.run(
        [iowatt, "--show-completion", "bash"],
        env={**env, "SHELL": "/bin/bash"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert comp.returncode == 0 and "_IOWATT_COMPLETE" in comp.stdout, comp.stderr


def test_cancel_export_and_what_people_see(live: Stack, cli: Cli, tmp_path: Path) -> None:
    target = tempfile.mkdtemp(prefix="iowatt-cli-cancel-", dir="/dev/shm")
    try:
        live.allow(target)
        queued = cli.json(
            "run", "quick", "--target", target, "--idle-s", "0", "--no-wait", "--agent", live.agent_id
        )
        assert queued["status"] in ("queued", "assigned", "running")
        cancelled = cli.json("runs", "cancel", queued["id"])
        assert cancelled["id"] == queued["id"] and (
            cancelled["cancel_requested"] or cancelled["status"] == "cancelled"
        )
        assert live.wait(queued["id"])["status"] == "cancelled"
        cli("runs", "delete", queued["id"], "--yes")
        # a fio job file, as written
        job = tmp_path / "small.fio"
        job.write_text("[global]\nsize=1m\nbs=4k\n\n[seq-read]\nrw=read\n")
        ran = cli.json("run", str(job), "--target", target, "--idle-s", "0", "--agent", live.agent_id)
        assert ran["status"] == "succeeded", ran["error"]
        shown = cli.json("runs", "show", ran["id"], "--result")
        assert (
            shown["workload"]["kind"] == "jobfile" and shown["workload"]["jobfile"]["text"] == job.read_text()
        )
        assert shown["result"]["engine_result"]["jobs"][0]["read"]["io_bytes"] == 1 << 20
        cli("runs", "delete", ran["id"], "--yes")
    finally:
        shutil.rmtree(target, ignore_errors=True)
    out = cli.json("export", "-o", str(tmp_path / "team.zip"))
    with zipfile.ZipFile(tmp_path / "team.zip") as z:
        assert z.namelist() and out["bytes"] == (tmp_path / "team.zip").stat().st_size
    # the tables a person reads
    with live.api() as api:
        agent_name = api.get(f"/agents/{live.agent_id}").json()["name"]
    assert agent_name in cli("agents").stdout
    assert "runs" in cli("runs", "list", "--limit", "3").stdout
    assert "crystaldiskmark" in cli("views").stdout
    assert "quick" in cli("run", "--list").stdout
