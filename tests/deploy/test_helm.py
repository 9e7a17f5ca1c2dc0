"""deploy/helm/iowatt (issue 30): `helm lint` passes, and the manifests `helm template` renders are
valid Kubernetes objects (kubernetes-validate: the API's own OpenAPI schemas, shipped with the
package, so nothing is fetched) with the asked-for topology: the API as a Deployment of N replicas
behind a Service and an Ingress with TLS, workers as their own Deployment, beat a singleton that is
never two, the migrations a Job run as a hook before install and upgrade, PostgreSQL and Redis
external through a Secret, and the server's containers unprivileged.

helm is built from its Go module (no release binary can be fetched here): ~7 CPU-minutes cold, far
beyond `make test`'s set-up, so `make test` does not build it (`make helm` does; ADR 0042). Without
helm the checks run on `deploy/helm/rendered-test-values.yaml`, what `helm template` renders from
the test values, committed; with helm (`make helm`) they run on a fresh rendering, which must be
that file byte for byte (`make helm-render` writes it), and `helm lint` and the refusals run too."""

import hashlib
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import REPO

Manifests = dict[tuple[str, str], dict[str, Any]]

CHART = Path(REPO) / "deploy" / "helm" / "iowatt"
VALUES = CHART / "ci" / "test-values.yaml"
K8S_VERSION = "1.30.0"  # a version kubernetes-validate ships schemas for (and the chart's floor is 1.25)


RENDERED = Path(REPO) / "deploy" / "helm" / "rendered-test-values.yaml"
# what RENDERED was rendered from (chart_digest), written with it by `make helm-render`: without
# helm (make test, CI) a chart changed after its rendering is still caught
RENDERED_FROM = Path(REPO) / "deploy" / "helm" / "rendered-test-values.sha256"
HELM = shutil.which("helm")
needs_helm = pytest.mark.skipif(
    HELM is None, reason="helm is not built here (make helm: ~7 CPU-minutes cold; ADR 0042)"
)


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    exe = HELM
    assert exe, "helm is missing: make helm builds it (scripts/install-ops-test-tools.sh helm)"
    env = {"HOME": "/nonexistent", "HELM_CACHE_HOME": "/tmp/iowatt-helm/cache",
           "HELM_CONFIG_HOME": "/tmp/iowatt-helm/config", "HELM_DATA_HOME": "/tmp/iowatt-helm/data",
           "PATH": "/usr/bin:/bin"}  # fmt: skip
    return subprocess.run([exe, *args], capture_output=True, text=True, timeout=120, env=env)


def render(*extra: str) -> list[dict[str, Any]]:
    args = ["--values", str(VALUES), "--kube-version", K8S_VERSION, *extra]
    out = helm("template", "iowatt", str(CHART), *args)
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


def rendered_text() -> str:
    """What `helm template` renders from the test values: freshly with helm, else the committed
    rendering."""
    if HELM is None:
        return RENDERED.read_text()
    args = ["--values", str(VALUES), "--kube-version", K8S_VERSION]
    out = helm("template", "iowatt", str(CHART), *args)
    assert out.returncode == 0, out.stderr
    return out.stdout


def chart_digest() -> str:
    """SHA-256 over every file of the chart (the test values included), by path, and the
    Kubernetes version: what `helm template` renders RENDERED from."""
    h = hashlib.sha256(f"kube-version {K8S_VERSION}\n".encode())
    for p in sorted(q for q in CHART.rglob("*") if q.is_file()):
        h.update(f"{p.relative_to(CHART)} {hashlib.sha256(p.read_bytes()).hexdigest()}\n".encode())
    return h.hexdigest()


@pytest.fixture(scope="module")
def manifests() -> Manifests:
    docs = [d for d in yaml.safe_load_all(rendered_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs}


def test_the_committed_rendering_is_of_this_chart() -> None:
    """Without helm the checks below read the committed rendering: it must be of the chart as it
    is (a template changed without `make helm-render` went unnoticed where helm is not built)."""
    assert RENDERED_FROM.read_text().split()[0] == chart_digest(), (
        "deploy/helm/iowatt changed since rendered-test-values.yaml was written: make helm-render"
    )


@needs_helm
def test_the_committed_rendering_is_what_helm_renders() -> None:
    assert rendered_text() == RENDERED.read_text(), "the chart changed: make helm-render"


@needs_helm
def test_helm_lint_passes() -> None:
    out = helm("lint", str(CHART), "--strict", "--values", str(VALUES), "--kube-version", K8S_VERSION)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "0 chart(s) failed" in out.stdout


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


@needs_helm
def test_existing_secrets_replace_the_charts_and_missing_values_are_refused(tmp_path: Path) -> None:
    names = "--set=database.existingSecret=db,redis.existingSecret=rd,secretKey.existingSecret=sk"
    docs = render(names)
    assert not [d for d in docs if d["kind"] == "Secret"]
    api = next(d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "iowatt-api")
    env = {e["name"]: e for e in _container(api)["env"]}
    assert env["IOWATT_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["name"] == "db"
    assert env["IOWATT_SECRET_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "sk"
    # without the values file: publicUrl, the URLs and the key are required, with a message
    out = helm("template", "iowatt", str(CHART))
    assert out.returncode != 0 and "is required" in out.stderr, out.stderr
    short = helm("template", "iowatt", str(CHART), "--values", str(VALUES), "--set", "secretKey.value=short")
    assert short.returncode != 0 and "at least 32 characters" in short.stderr
