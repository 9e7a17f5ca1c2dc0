"""deploy/helm/iowatt (issue 30): `helm lint --strict` passes, and the manifests the chart renders
are valid Kubernetes objects (kubernetes-validate: the API's own OpenAPI schemas, shipped with the
package, so nothing is fetched) with the asked-for topology: the API as a Deployment of N replicas
behind a Service and an Ingress with TLS, workers as their own Deployment, beat a singleton that is
never two, the migrations a Job run as a hook before install and upgrade, PostgreSQL and Redis
external through a Secret, and the server's containers unprivileged.

Lint and rendering are Helm's own code, its Go SDK (helm.sh/helm/v4) as a library: PyPI's
helm-python-sdk, a test dependency in the lock (ADR 0057). `helm_python.lint` is `helm lint`'s
action (action.Lint, with --strict, --values and --kube-version); `Chart.render` is the template
engine `helm template` runs (engine.Render), which returns each template's text instead of `helm
template`'s one stream (sorted by kind, hooks last): the tests read the same objects. So every run,
CI's included, lints and renders the chart as it is; nothing rendered is committed."""

import shutil
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from tests.conftest import REPO

Manifests = dict[tuple[str, str], dict[str, Any]]

CHART = Path(REPO) / "deploy" / "helm" / "iowatt"
VALUES = CHART / "ci" / "test-values.yaml"
K8S_VERSION = "1.30.0"  # a version kubernetes-validate ships schemas for (and the chart's floor is 1.25)


def ci_values() -> dict[str, Any]:
    """ci/test-values.yaml as `helm --values` reads it (Helm's YAML reader, not PyYAML's)."""
    values: dict[str, Any] = helm.values_from_yaml(VALUES.read_text())
    return values


def merged(values: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    """`--values` then `--set`: the overrides win, maps merged key by key."""
    out = dict(values)
    for k, v in overrides.items():
        out[k] = merged(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def render(values: dict[str, Any] | None, chart: Path = CHART) -> list[dict[str, Any]]:
    """The chart's objects as `helm template iowatt CHART` renders them with these values; a
    template that fails (`required`, `fail`, a syntax error) raises helm_python.HelmError with
    Helm's message."""
    with helm.Chart.load(str(chart)) as c:
        texts = c.render(values, name="iowatt")
    return [
        d
        for path, text in sorted(texts.items())
        if path.endswith(".yaml")
        for d in yaml.safe_load_all(text)
        if d
    ]


def lint(chart: Path = CHART) -> dict[str, Any]:
    """`helm lint CHART --strict --values ci/test-values.yaml --kube-version K8S_VERSION`: a report
    whose `errors` are what makes the CLI say "1 chart(s) failed" (with --strict, warnings too)."""
    report: dict[str, Any] = helm.lint(str(chart), ci_values(), strict=True, kube_version=f"v{K8S_VERSION}")
    return report


@pytest.fixture(scope="module")
def manifests() -> Manifests:
    return {(d["kind"], d["metadata"]["name"]): d for d in render(ci_values())}


def test_helm_lint_passes() -> None:
    report = lint()
    assert report["total_charts_linted"] == 1
    assert report["errors"] == [], report["messages"]


@pytest.mark.parametrize(
    ("template", "old", "new", "says"),
    [
        # a template error: an unknown function (parse) and an unknown named template (execution)
        (
            "beat.yaml",
            'include "iowatt.fullname" .',
            'include "iowatt.fullname" . | upcase',
            'function "upcase" not defined',
        ),
        (
            "beat.yaml",
            'include "iowatt.fullname" .',
            'include "iowatt.fullname2" .',
            'no template "iowatt.fullname2"',
        ),
        # a lint error: an object whose name Kubernetes refuses (a warning, an error with --strict)
        (
            "worker.yaml",
            'name: {{ include "iowatt.fullname" . }}-worker\n',
            "name: Iowatt_Worker\n",
            "RFC 1123",
        ),
        # a rendered document that is not YAML
        ("ingress.yaml", "spec:\n", "spec: [\n", "unable to parse YAML"),
    ],
)
def test_helm_lint_fails_on_a_broken_chart(
    tmp_path: Path, template: str, old: str, new: str, says: str
) -> None:
    """The lint can fail: the chart copied and broken in one place."""
    chart = Path(shutil.copytree(CHART, tmp_path / "iowatt"))
    path = chart / "templates" / template
    text = path.read_text()
    assert old in text, f"{template} changed: give this test another place to break"
    path.write_text(text.replace(old, new, 1))
    errors = lint(chart)["errors"]
    assert any(says in e for e in errors), errors


def test_rendered_manifests_are_valid_kubernetes_objects(manifests: Manifests) -> None:
    import kubernetes_validate

    for (kind, name), doc in manifests.items():
        try:
            kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            raise AssertionError(f"{kind} {name}: {e.message} at {list(e.path)}") from None


def test_an_invalid_manifest_is_refused_by_the_validator(manifests: Manifests) -> None:
    """The check can fail: a misspelt field (strict) and a wrong type are refused."""
    import copy

    import kubernetes_validate

    api = copy.deepcopy(manifests[("Deployment", "iowatt-api")])
    api["spec"]["replica"] = 2
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(api, K8S_VERSION, strict=True)
    api = copy.deepcopy(manifests[("Deployment", "iowatt-api")])
    api["spec"]["replicas"] = "three"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(api, K8S_VERSION, strict=True)


def _container(doc: dict[str, Any]) -> dict[str, Any]:
    containers = doc["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    return dict(containers[0])


def test_the_topology(manifests: Manifests) -> None:
    api, worker, beat = (manifests[("Deployment", f"iowatt-{n}")] for n in ("api", "worker", "beat"))
    assert api["spec"]["replicas"] == 3 and worker["spec"]["replicas"] == 2  # ci/test-values.yaml
    assert _container(api)["command"][:3] == ["python", "-m", "backend.serve"]
    assert _container(worker)["command"][:4] == ["celery", "-A", "worker.app", "worker"]
    assert _container(beat)["command"][:4] == ["celery", "-A", "worker.app", "beat"]
    assert beat["spec"]["replicas"] == 1 and beat["spec"]["strategy"] == {"type": "Recreate"}
    # the migrations: a Job run before install and upgrade, after the Secret it reads
    job = manifests[("Job", "iowatt-migrate")]
    # as compose's api and make up run them: a failed migration named with its error, not a traceback
    assert "iowatt-server migrate &&" in " ".join(_container(job)["command"])
    hooks = job["metadata"]["annotations"]
    assert hooks["helm.sh/hook"] == "pre-install,pre-upgrade"
    secret = manifests[("Secret", "iowatt")]
    assert int(secret["metadata"]["annotations"]["helm.sh/hook-weight"]) < int(hooks["helm.sh/hook-weight"])
    # the Service selects the API pods, the Ingress sends everything to it over TLS
    svc = manifests[("Service", "iowatt-api")]
    pod_labels = api["spec"]["template"]["metadata"]["labels"]
    assert svc["spec"]["selector"].items() <= pod_labels.items()
    assert not svc["spec"]["selector"].items() <= worker["spec"]["template"]["metadata"]["labels"].items()
    ing = manifests[("Ingress", "iowatt")]
    assert ing["spec"]["tls"] == [{"hosts": ["iowatt.example.com"], "secretName": "iowatt-tls"}]
    path = ing["spec"]["rules"][0]["http"]["paths"][0]
    assert path["backend"]["service"]["name"] == "iowatt-api"
    # probed on liveness (the process answers), not on /api/v1/health, which is 503 in every pod at
    # once while PostgreSQL is down and would take them all out of the Service
    api_c = _container(api)
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert api_c[probe]["httpGet"]["path"] == "/api/v1/health/live", probe
    # scraped per pod, as deploy/monitoring expects
    assert api["spec"]["template"]["metadata"]["annotations"]["prometheus.io/path"] == "/metrics"


def test_secrets_come_from_a_secret_and_containers_are_unprivileged(
    manifests: Manifests,
) -> None:
    for name in ("iowatt-api", "iowatt-worker", "iowatt-beat"):
        doc = manifests[("Deployment", name)]
        c = _container(doc)
        env = {e["name"]: e for e in c["env"]}
        for var in ("IOWATT_DATABASE_URL", "IOWATT_REDIS_URL", "IOWATT_SECRET_KEY"):
            assert env[var]["valueFrom"]["secretKeyRef"]["name"] == "iowatt", (name, var)
            assert "value" not in env[var]
        assert env["IOWATT_ENV"]["value"] == "prod"
        sc = c["securityContext"]
        assert sc["readOnlyRootFilesystem"] and not sc["allowPrivilegeEscalation"]
        assert sc["capabilities"]["drop"] == ["ALL"]
        pod = doc["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] and pod["automountServiceAccountToken"] is False
    secret = manifests[("Secret", "iowatt")]
    assert secret["stringData"]["database-url"].startswith("postgresql+psycopg://")


def test_existing_secrets_replace_the_charts_and_missing_values_are_refused() -> None:
    names = {
        "database": {"existingSecret": "db"},
        "redis": {"existingSecret": "rd"},
        "secretKey": {"existingSecret": "sk"},
    }
    docs = render(merged(ci_values(), names))
    assert not [d for d in docs if d["kind"] == "Secret"]
    api = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "iowatt-api")
    env = {e["name"]: e for e in _container(api)["env"]}
    assert env["IOWATT_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == "db"
    assert env["IOWATT_SECRET_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "sk"
    # without the values file: publicUrl, the URLs and the key are required, with a message (helm
    # lint only warns of a missing `required` value: the rendering is what refuses it)
    with pytest.raises(helm.HelmRenderError, match="is required"):
        render(None)
    without_db = ci_values()
    del without_db["database"]
    with pytest.raises(
        helm.HelmRenderError, match=r"database\.url \(or database\.existingSecret\) is required"
    ):
        render(without_db)
    with pytest.raises(helm.HelmRenderError, match="at least 32 characters"):
        render(merged(ci_values(), {"secretKey": {"value": "short"}}))
