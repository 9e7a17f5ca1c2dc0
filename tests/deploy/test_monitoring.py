"""deploy/monitoring (issue 30): the alert rules pass `promtool check rules` and their unit tests
(`promtool test rules`: series that must and must not fire each rule), the example Prometheus
config passes `promtool check config`, every query of the Grafana dashboard parses as PromQL, and
every metric the dashboard and the rules name is one the server exports (read from a real
/metrics answer of the app) or one of node_exporter's that the disk rules use."""

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.testclient import TestClient

from tests.conftest import REPO

MON = Path(REPO) / "deploy" / "monitoring"
RULES = MON / "iowatt-alerts.yml"
DASHBOARD = MON / "grafana" / "iowatt.json"
# not the server's: Prometheus' own per target, and node_exporter's (the disk rules)
EXTERNAL = {"up", "node_filesystem_avail_bytes", "node_filesystem_size_bytes"}
# PromQL words that are not metric names
WORDS = {
    "by", "without", "on", "ignoring", "group_left", "group_right", "offset", "bool", "and", "or",
    "unless", "inf", "nan",
}  # fmt: skip


def promtool(*args: str, cwd: Path = MON) -> subprocess.CompletedProcess[str]:
    exe = shutil.which("promtool")
    assert exe, "promtool is missing: scripts/install-ops-test-tools.sh installs it (make deps)"
    return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def dashboard_queries() -> list[tuple[str, str]]:
    """(panel title, expr) of every query, Grafana's variables replaced as Grafana does."""
    out = []
    for panel in json.loads(DASHBOARD.read_text())["panels"]:
        for t in panel.get("targets", []):
            expr = t["expr"].replace("$__rate_interval", "5m").replace('"$job"', '"iowatt-api"')
            out.append((panel["title"], expr.replace("$job", "iowatt-api")))
    return out


def rule_exprs() -> list[tuple[str, str]]:
    doc = yaml.safe_load(RULES.read_text())
    return [(r["alert"], r["expr"]) for g in doc["groups"] for r in g["rules"]]


def metric_names(expr: str) -> set[str]:
    """The metric names an expression selects: what is left once strings, label matchers,
    ranges, grouping clauses and function calls are taken out."""
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    e = re.sub(r"\{[^}]*\}", " ", e)
    e = re.sub(r"\[[^\]]*\]", " ", e)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)
    names = set()
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][a-zA-Z0-9_:]*)\b(\s*\()?", e):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in WORDS or re.fullmatch(r"\d+[smhdwy]", word):
            continue
        names.add(word)
    return names


def exported(text: str) -> set[str]:
    """The sample names a /metrics answer can carry, from its `# TYPE` lines."""
    suffixes = {"counter": ("_total",), "histogram": ("_bucket", "_count", "_sum"), "info": ("_info",)}
    names = set()
    for name, kind in re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M):
        names.add(name)
        names.update(name + s for s in suffixes.get(kind, ()))
    return names


def test_rules_pass_promtool_check_and_their_unit_tests() -> None:
    checked = promtool("check", "rules", str(RULES))
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert f"SUCCESS: {len(rule_exprs())} rules found" in checked.stdout
    tested = promtool("test", "rules", "tests/iowatt-alerts.test.yml")
    assert tested.returncode == 0, tested.stdout + tested.stderr
    config = promtool("check", "config", "prometheus.yml")
    assert config.returncode == 0, config.stdout + config.stderr
    # each asked-for alert has a rule, and a unit test that expects it to fire
    tests = (MON / "tests" / "iowatt-alerts.test.yml").read_text()
    for alert in (
        "IowattApiDown",
        "IowattWorkerHeartbeatStale",
        "IowattOutboxBacklog",
        "IowattLeasesExpiring",
        "IowattLeasesOverdue",
        "IowattAgentsOffline",
        "IowattDiskFilling",
    ):
        assert alert in dict(rule_exprs()), alert
        assert re.search(rf"alertname: {alert}\n\s+exp_alerts:\n\s+- exp_labels", tests), alert


def test_a_broken_rule_fails_its_unit_test(tmp_path: Path) -> None:
    """The unit tests can fail: a threshold moved makes promtool say so."""
    (tmp_path / "tests").mkdir()
    rule = "max(iowatt_outbox_oldest_unsent_age_seconds) > "
    assert rule + "120" in RULES.read_text()
    (tmp_path / "iowatt-alerts.yml").write_text(RULES.read_text().replace(rule + "120", rule + "900"))
    shutil.copy(MON / "tests" / "iowatt-alerts.test.yml", tmp_path / "tests")
    out = promtool("test", "rules", "tests/iowatt-alerts.test.yml", cwd=tmp_path)
    assert out.returncode != 0 and "IowattOutboxBacklog" in out.stdout + out.stderr, out.stdout


def test_every_dashboard_query_parses(tmp_path: Path) -> None:
    """Each query as a recording rule: `promtool check rules` parses it as Prometheus does."""
    queries = dashboard_queries()
    assert len(queries) >= 25
    records = [{"record": f"q{i}", "expr": e} for i, (_, e) in enumerate(queries)]
    rules: dict[str, Any] = {"groups": [{"name": "dashboard", "rules": records}]}
    (tmp_path / "q.yml").write_text(yaml.safe_dump(rules))
    out = promtool("check", "rules", str(tmp_path / "q.yml"))
    assert out.returncode == 0, out.stdout + out.stderr


def test_metric_names_are_found_in_queries() -> None:
    """The extraction the next test relies on."""
    assert metric_names(
        "histogram_quantile(0.95, sum by (le, route) (rate(iowatt_http_request_duration_seconds_bucket"
        '{job="x", route!="/a/{b}/lease"}[5m]))) / ignoring(kind) max(up offset 1h) > 0.5'
        " and bool on(a) iowatt_x"
    ) == {"iowatt_http_request_duration_seconds_bucket", "up", "iowatt_x"}


def test_dashboard_and_rules_name_only_metrics_the_server_exports(client: TestClient) -> None:
    r = client.get("/metrics")
    assert r.status_code == 200, r.text
    have = exported(r.text) | EXTERNAL
    named: dict[str, set[str]] = {}
    for where, expr in [*dashboard_queries(), *rule_exprs()]:
        for name in metric_names(expr):
            named.setdefault(name, set()).add(where)
    missing = {name: sorted(where) for name, where in named.items() if name not in have}
    assert not missing, missing
    # the asked-for subjects are on the dashboard
    text = DASHBOARD.read_text()
    for metric in (
        "iowatt_http_request_duration_seconds_bucket",
        "iowatt_workers",
        "iowatt_queue_messages",
        "iowatt_agents",
        "iowatt_ingested_total",
        "iowatt_outbox_unsent",
    ):
        assert metric in text, metric


@pytest.mark.parametrize("path", ["grafana/iowatt.json"])
def test_dashboard_is_importable_json(path: str) -> None:
    d = json.loads((MON / path).read_text())
    assert d["uid"] and d["title"] == "iowatt" and d["schemaVersion"] >= 36
    ids = [p["id"] for p in d["panels"]]
    assert len(ids) == len(set(ids))
    for p in d["panels"]:
        assert p["type"] == "row" or p["datasource"]["uid"] == "${datasource}", p["title"]
