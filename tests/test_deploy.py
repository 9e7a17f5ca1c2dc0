"""docker-compose.yml cannot run on the CI machines (no Docker engine): check it is coherent."""

from pathlib import Path

import yaml

from tests.conftest import REPO


def test_compose_services_healthchecks_and_build_files() -> None:
    compose = yaml.safe_load((Path(REPO) / "docker-compose.yml").read_text())
    services = compose["services"]
    assert {"db", "redis", "api", "worker", "beat", "agent"} <= set(services)
    for name in ("db", "redis", "api", "worker"):
        assert "healthcheck" in services[name], name
    assert services["agent"]["profiles"] == ["agent"]
    assert "alembic upgrade head" in " ".join(services["api"]["command"])
    for name in ("api", "worker", "beat", "agent"):
        dockerfile = services[name]["build"]["dockerfile"]
        assert (Path(REPO) / dockerfile).is_file(), dockerfile
    # the commands name modules that exist
    assert (Path(REPO) / "worker" / "app.py").is_file()
    assert "backend.main:create_app" in " ".join(services["api"]["command"])
    env = services["api"]["environment"]
    assert (
        env["IOWATT_DATABASE_URL"].startswith("postgresql+psycopg://")
        and "@db:5432/" in env["IOWATT_DATABASE_URL"]
    )
