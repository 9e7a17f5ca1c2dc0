"""The Python lock (docs/adr/0004-dependencies.md): uv.lock is resolved from the pyproject pins,
requirements/*.txt are exported from it with a hash for every file, and `make deps-py` (pip installs
the locked uv, uv the rest) and both images install only from those files, hash-checked. Offline:
uv checks the lock against the manifests without the network."""

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parent.parent
UV = Path(sys.prefix) / "bin" / "uv"
MANIFESTS = [
    "pyproject.toml",
    "agent/pyproject.toml",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "libs").glob("*/pyproject.toml")),
]
# what each requirements file is exported as (the Makefile's `lock` recipe runs the same)
EXPORTS = {
    "build.txt": ["--only-group", "build"],
    "dev.txt": ["--all-packages", "--all-extras", "--all-groups"],
    "server.txt": ["--package", "iowatt-server"],
    "agent.txt": ["--package", "iowatt-agent"],
    # what `make up` installs (deps-py-run): the platform's packages, no test tool
    "run.txt": ["--package", "iowatt-server", "--package", "iowatt-agent", "--extra", "tpch"],
}


def _lock() -> tuple[dict[str, set[str]], set[str]]:
    """Locked versions per package (a universal lock may hold two, by Python version) and the
    workspace's own projects."""
    doc = tomllib.loads((REPO / "uv.lock").read_text())
    versions: dict[str, set[str]] = {}
    workspace: set[str] = set()
    for pkg in doc["package"]:
        name = canonicalize_name(pkg["name"])
        if "editable" in pkg["source"] or "virtual" in pkg["source"]:
            workspace.add(name)
            if "version" not in pkg:  # a dynamic version (the server, agent, client: docs/release.md)
                continue
        versions.setdefault(name, set()).add(pkg["version"])
    return versions, workspace


def _requirements(path: Path) -> dict[str, list[tuple[str, list[str]]]]:
    """name -> [(version, hashes)] of a hash-checked requirements file."""
    return _requirements_text(path.read_text())


def _requirements_text(text: str) -> dict[str, list[tuple[str, list[str]]]]:
    text = re.sub(r"\\\n\s*", " ", text)
    out: dict[str, list[tuple[str, list[str]]]] = {}
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        spec, *options = line.split(" --hash=")
        req = Requirement(spec.strip())
        (pin,) = req.specifier
        assert pin.operator == "==", line
        out.setdefault(canonicalize_name(req.name), []).append((pin.version, [o.strip() for o in options]))
    return out


def test_every_pin_of_every_manifest_is_the_locked_version() -> None:
    versions, workspace = _lock()
    bad = []
    for manifest in MANIFESTS:
        project = tomllib.loads((REPO / manifest).read_text())
        specs = list(project["project"].get("dependencies", []))
        for extra in project["project"].get("optional-dependencies", {}).values():
            specs += extra
        for group in project.get("dependency-groups", {}).values():
            specs += group
        for spec in specs:
            req = Requirement(spec)
            name = canonicalize_name(req.name)
            if name in workspace:
                continue
            pins = [s.version for s in req.specifier if s.operator == "=="]
            if not pins or pins[0] not in versions.get(name, set()):
                bad.append(f"{manifest}: {spec} (locked: {sorted(versions.get(name, set()))})")
    assert bad == [], "pin a version and run `make lock`:\n" + "\n".join(bad)


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_each_requirements_file_is_the_lock_with_a_hash_for_every_file(name: str) -> None:
    versions, workspace = _lock()
    reqs = _requirements(REPO / "requirements" / name)
    assert reqs, name
    for pkg, pins in reqs.items():
        assert pkg not in workspace, f"{name}: {pkg} is this repository's own project"
        for version, hashes in pins:
            assert version in versions.get(pkg, set()), f"{name}: {pkg}=={version} is not in uv.lock"
            assert hashes and all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes), (name, pkg)
    if name == "dev.txt":  # the development venv holds every locked package
        assert set(reqs) == set(versions) - workspace


@pytest.mark.skipif(not UV.exists(), reason="uv is a dev dependency: `make deps-py` installs it")
@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_each_requirements_file_is_exactly_what_make_lock_exports(name: str) -> None:
    exported = subprocess.run(
        [str(UV), "export", "--frozen", "--no-emit-workspace", "-q", *EXPORTS[name]],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    body = lambda text: [ln for ln in text.splitlines() if not ln.startswith("#")]  # noqa: E731
    assert body(exported) == body((REPO / "requirements" / name).read_text()), f"run `make lock` ({name})"


@pytest.mark.skipif(not UV.exists(), reason="uv is a dev dependency: `make deps-py` installs it")
def test_the_lock_matches_the_manifests_without_the_network() -> None:
    r = subprocess.run(
        [str(UV), "lock", "--locked", "--offline", "--python", sys.executable],
        cwd=REPO,
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, f"uv.lock is stale: run `make lock`\n{r.stderr}"


def _venv_recipe(makefile: str) -> str:
    """The virtualenv's install recipe (the Makefile's `venv_install`, which both stamps call)."""
    return makefile.split("\ndefine venv_install\n", 1)[1].split("\nendef\n", 1)[0]


def test_make_and_the_images_install_only_hash_checked_wheels_from_the_lock() -> None:
    makefile = (REPO / "Makefile").read_text()
    recipe = _venv_recipe(makefile)
    installs = {
        "Makefile deps-py": recipe,
        "Dockerfile.server": (REPO / "deploy" / "Dockerfile.server").read_text(),
        "Dockerfile.agent": (REPO / "deploy" / "Dockerfile.agent").read_text(),
    }
    for where, text in installs.items():
        lines = re.sub(r"\\\n\s*", " ", text).splitlines()
        pips = [ln for ln in lines if re.search(r"\bpip install\b", ln)]
        assert pips, where
        for line in pips:
            for cmd in re.split(r"&&", line):
                if "pip install" not in cmd:
                    continue
                if " -r " in cmd:  # third-party packages: the lock, hashes required, no sdist builds
                    assert "--require-hashes" in cmd and "--only-binary :all:" in cmd, (where, cmd)
                    assert re.search(r"-r \S*requirements/\w+\.txt", cmd) or (
                        where == "Makefile deps-py"
                        and ("-r $(VENV)/uv-requirement.txt" in cmd or "-r $(1)" in cmd)
                    ), (where, cmd)
                else:  # this repository's projects: nothing more from an index
                    assert "--no-deps" in cmd and "--no-build-isolation" in cmd, (where, cmd)
    # `make deps-py`: pip installs uv alone, from its lines of the lock's export (hashes and all),
    # and uv installs the rest
    lines = re.sub(r"\\\n\s*", " ", recipe).splitlines()
    (extract,) = [ln for ln in lines if "> $(VENV)/uv-requirement.txt" in ln]
    assert "requirements/dev.txt" in extract, extract
    (bootstrap,) = [ln for ln in lines if "uv-requirement.txt" in ln and "pip install" in ln]
    assert "--no-deps" in bootstrap and "$(BIN)/python -m pip install" in bootstrap, bootstrap
    uv_pips = [ln for ln in lines if "$(BIN)/uv pip install" in ln]
    assert any("-r requirements/build.txt -r $(1)" in ln for ln in uv_pips), uv_pips
    # make up: the platform's packages; make test (and every developer target): all of them
    for stamp, reqs in ((".installed-run", "run.txt"), (".installed", "dev.txt")):
        rule = makefile.split(f"\n$(VENV)/{stamp}:", 1)[1].split("\n\n", 1)[0]
        assert f"\t$(call venv_install,requirements/{reqs})\n" in rule, rule
        assert f"requirements/{reqs}" in rule.split("\n", 1)[0], rule  # a prerequisite


# the tests', linters' and release's tools (pyproject.toml's `dev` extra and their own dependencies)
TEST_TOOLS = {"pytest", "pytest-xdist", "hypothesis", "schemathesis", "ruff", "mypy", "aiosmtpd", "pypdf",
              "kubernetes-validate", "cyclonedx-bom", "uv"}  # fmt: skip
# the code the platform runs: make up's server, worker and agent, the client, the libraries, the
# migrations and up.sh's first benchmark
PLATFORM_CODE = ["backend", "worker", "migrations", "agent/src", "client/src", "libs/energy/src",
                 "libs/policy/src", "libs/workload/src", "scripts/first_benchmark.py"]  # fmt: skip
IMPORT = re.compile(
    r"^[ \t]*(?:from[ \t]+([A-Za-z_]\w*)[\w.]*[ \t]+import\b|import[ \t]+([A-Za-z_]\w*))", re.M
)


def test_make_up_installs_what_the_platform_imports_and_no_test_tool() -> None:
    """requirements/run.txt (`make up`, issue 30) holds no test tool, and every third-party package
    the platform's code imports: a `make up` virtualenv without the tests' packages runs it (its 409
    modules imported with run.txt alone when this was written). An import of a package only the dev
    extra brings in (pyyaml, packaging, ...) fails here instead of on a user's machine."""
    from importlib.metadata import packages_distributions

    run = set(_requirements(REPO / "requirements" / "run.txt"))
    assert not run & TEST_TOOLS, sorted(run & TEST_TOOLS)
    assert {"fastapi", "celery", "duckdb", "pymysql"} <= run  # the server, the agent and its TPC-H
    files = [
        p for d in PLATFORM_CODE for p in ([REPO / d] if d.endswith(".py") else (REPO / d).rglob("*.py"))
    ]
    imported: dict[str, str] = {}
    for f in files:
        for a, b in IMPORT.findall(f.read_text()):
            imported.setdefault(a or b, str(f.relative_to(REPO)))
    _, workspace = _lock()
    dists = packages_distributions()
    missing = []
    for module, where in sorted(imported.items()):
        if module in sys.stdlib_module_names or module not in dists:
            continue  # the standard library, this repository's packages, a word of a docstring
        names = {canonicalize_name(d) for d in dists[module]}
        if not names & (run | workspace):
            missing.append(f"{module} ({', '.join(sorted(names))}), imported by {where}")
    assert not missing, "not in requirements/run.txt (a dependency of the server or agent?):\n" + "\n".join(
        missing
    )


def test_the_uv_lines_make_deps_py_picks_from_dev_txt_are_the_locked_uv_with_its_hashes() -> None:
    """What the recipe's awk keeps of requirements/dev.txt: `uv==VERSION` and its hash lines only."""
    makefile = (REPO / "Makefile").read_text()
    (program,) = re.findall(r"awk '([^']*)' requirements/dev\.txt > \$\(VENV\)/uv-requirement\.txt", makefile)
    picked = subprocess.run(
        ["awk", program.replace("$$", "$"), str(REPO / "requirements" / "dev.txt")],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    reqs = _requirements_text(picked)
    versions, _ = _lock()
    assert list(reqs) == ["uv"], picked[:500]
    ((version, hashes),) = reqs["uv"]
    assert version in versions["uv"] and len(hashes) > 1


NPM_LOCKS = ["frontend", "tests/oidc/provider"]


@pytest.mark.parametrize("project", NPM_LOCKS)
def test_each_npm_lock_names_every_tarball_and_its_integrity(project: str) -> None:
    """`npm ci` takes a package whose lock entry has `resolved` straight from that URL; without it,
    npm fetched and parsed the registry's metadata document of every package to find the tarball
    (the UI's and the OIDC provider's installs: ~25 -> ~19 CPU-s on an empty cache). The project's
    .npmrc keeps a user's `omit-lockfile-registry-resolved` from stripping the URLs again."""
    lock = json.loads((REPO / project / "package-lock.json").read_text())
    assert lock["lockfileVersion"] == 3
    missing = []
    for path, entry in lock["packages"].items():
        if path == "" or entry.get("link"):
            continue
        name = entry.get("name") or path.rsplit("node_modules/", 1)[1]
        tarball = f"{name.rsplit('/', 1)[-1]}-{entry['version']}.tgz"
        url = f"https://registry.npmjs.org/{name}/-/{tarball}"
        if entry.get("resolved") != url or not entry.get("integrity", "").startswith("sha512-"):
            missing.append(path)
    assert not missing, f"{project}/package-lock.json: no registry tarball or integrity for {missing}"
    npmrc = (REPO / project / ".npmrc").read_text().splitlines()
    assert "omit-lockfile-registry-resolved=false" in npmrc


# the UI's test and lint tools: `make test` installs them (npm ci), `make up` does not (--omit=dev)
UI_TEST_TOOLS = {"vitest", "jsdom", "@testing-library/dom", "@testing-library/react", "axe-core",
                 "playwright-core", "@biomejs/biome"}  # fmt: skip
# a module's imports and re-exports (over several lines too), side-effect and dynamic imports
TS_IMPORT = re.compile(
    r"""^(?:import|export)\b[^;"'`]*?\bfrom\s*["']([^"']+)["']"""
    r"""|^import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)""",
    re.M,
)


def _npm_package(specifier: str) -> str:
    parts = specifier.split("/")
    return "/".join(parts[:2]) if specifier.startswith("@") else parts[0]


def test_make_up_builds_the_ui_without_its_test_tools() -> None:
    """`make up` installs the UI's dependencies only (`npm ci --omit=dev`, issue 30): what the built
    UI and its build (tsconfig.build.json: the sources without the tests, and vite.config.ts)
    import is in `dependencies`, the test and lint tools are devDependencies, and the lock marks
    them so (npm ci --omit=dev leaves out exactly the lock's `dev` entries)."""
    ui = REPO / "frontend"
    pkg = json.loads((ui / "package.json").read_text())
    deps, dev = pkg["dependencies"], pkg["devDependencies"]
    assert dev.keys() >= UI_TEST_TOOLS and not UI_TEST_TOOLS & deps.keys()
    build = json.loads((ui / "tsconfig.build.json").read_text())
    assert build["extends"] == "./tsconfig.json" and build["include"] == ["src", "vite.config.ts"]
    assert {"src/**/*.test.ts", "src/**/*.test.tsx", "src/test"} <= set(build["exclude"])
    base = json.loads((ui / "tsconfig.json").read_text())
    files = [ui / "vite.config.ts"] + [
        p
        for p in sorted((ui / "src").rglob("*.ts*"))
        if not re.search(r"\.test\.tsx?$", p.name) and "test" not in p.relative_to(ui / "src").parts[:1]
    ]
    needed = {"vite", "typescript-native"} | {
        "vite" if t.startswith("vite/") else f"@types/{t}" for t in base["compilerOptions"]["types"]
    }
    for path in files:
        for spec in ("".join(m) for m in TS_IMPORT.findall(path.read_text())):
            if spec.startswith("."):  # the UI's own modules: never a test's
                assert not re.search(r"(^|/)test(/|$)|\.test$", spec), (path, spec)
                continue
            name = _npm_package(spec)
            needed.add(name)
            if f"@types/{name}" in deps.keys() | dev.keys():  # its types come from DefinitelyTyped
                needed.add(f"@types/{name}")
    assert {"react", "recharts", "@vitejs/plugin-react", "@types/react"} <= needed  # the scan finds them
    missing = sorted(needed - deps.keys())
    assert not missing, f"the build imports devDependencies or undeclared packages: {missing}"
    lock = json.loads((ui / "package-lock.json").read_text())
    root = lock["packages"][""]
    assert root["dependencies"] == deps and root["devDependencies"] == dev
    for name in deps:
        assert not lock["packages"][f"node_modules/{name}"].get("dev"), name
    for name in UI_TEST_TOOLS:
        assert lock["packages"][f"node_modules/{name}"].get("dev") is True, name
