"""The shape of the server, checked on its source with `ast` (issue 10):

- a run's lifecycle fields are written only in backend/run/ (every transition in run/service.py);
- no module reaches into another domain's private (`_`-prefixed) names;
- routers hold no SQL;
- every domain has the same files (router, schemas, repository, service), with the exceptions
  listed below, each with its reason;
- the import graph points one way: backend/ imports nothing from worker/ (the backend owns the
  outbox sender, ADR 0012), and agent/ and libs/ import nothing from backend/ or worker/;
- every directory of Python source is a package (has `__init__.py`): a namespace directory is
  skipped by the domain check above and left out of a wheel;
- worker tasks call services only: no repository, no SQL construct, no session query in worker/tasks/.

Each checker is a plain function over one parsed module, so the tests at the end show it fails
on an injected violation.
"""

import ast
import functools
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Fields of a Run that only the run domain writes: the status and what moves with it.
LIFECYCLE_FIELDS = frozenset(
    {
        "status",
        "assigned_at",
        "started_at",
        "finished_at",
        "lease_id",
        "lease_expires_at",
        "attempt",
        "error",
        "cancel_requested",
    }
)
SQL_CONSTRUCTS = frozenset({"select", "update", "insert", "delete", "text", "func"})
SESSION_METHODS = frozenset({"execute", "scalar", "scalars", "get", "query", "merge"})
SESSION_NAMES = frozenset({"session", "s", "db"})
DOMAIN_FILES = ("router.py", "schemas.py", "repository.py", "service.py")

# Packages under backend/ that are not domains (no routes, no data of their own).
NOT_DOMAINS = {
    "kit": "domain-agnostic helpers",
    "models": "the ORM models of every domain (storage)",
    "outbox": "task delivery infrastructure (ADR 0012): no routes; its queries live next to the sender",
    "ops": "operating an instance from iowatt-server (migrate, backup, restore): no routes, no domain data",
}
# Domain files that are missing on purpose (or not yet moved): (domain, file) -> why.
MISSING_OK = {
    # health answers from probes (database, Redis, worker heartbeat); its one `SELECT 1` is the
    # database probe itself. Owned by the observability slice, which keeps it in router.py.
    ("health", "schemas.py"): "probes answer plain JSON built in the router",
    ("health", "repository.py"): "no domain data",
    ("health", "service.py"): "probes live in the router",
    # result's routes are under /runs/{id}/result and /runs/{id}/series: run/router.py serves them
    ("result", "router.py"): "served by run/router.py (URLs are /runs/{id}/...)",
    # power's data arrives with the result upload and is read through runs and compare
    ("power", "router.py"): "no routes of its own: served by run/router.py and compare",
    # carbon's defaults are library data (iowatt_energy), its few queries read environments'
    # hourly series, which environment/repository.py owns
    ("carbon", "repository.py"): "reads through environment/repository.py",
    # the agent bundles are files in a directory the build fills (agent_dist_dir), no database rows
    ("agent_dist", "repository.py"): "no domain data: serves files from agent_dist_dir",
}
# Routers that still hold SQL, each with its reason.
ROUTER_SQL_OK = {
    "backend/health/router.py": "`SELECT 1` is the database probe itself (observability slice)",
}


@dataclass(frozen=True)
class Violation:
    path: str
    line: int
    message: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


def domain_of(rel: str) -> str:
    """backend/run/service.py -> "run"; backend/jobs.py -> "jobs"; worker/tasks/run.py -> "worker"."""
    parts = Path(rel).parts
    if parts[0] == "worker":
        return "worker"
    return parts[1].removesuffix(".py")


def _targets(node: ast.AST) -> list[ast.expr]:
    if isinstance(node, ast.Assign):
        out: list[ast.expr] = []
        for t in node.targets:
            out += list(t.elts) if isinstance(t, ast.Tuple | ast.List) else [t]
        return out
    if isinstance(node, ast.AugAssign | ast.AnnAssign):
        return [node.target]
    return []


def _foreign_run(tree: ast.Module) -> bool:
    """`Run` in this module is another class than the ORM model: the importers' `Run` of
    backend/imports/formats/base.py (what one file holds, with the times the file states)."""
    return any(
        isinstance(node, ast.ImportFrom)
        and any(a.name == "Run" and a.asname is None for a in node.names)
        and (node.level > 0 or not (node.module or "").startswith("backend.models"))
        for node in ast.walk(tree)
    )


def lifecycle_writes(rel: str, tree: ast.Module) -> list[Violation]:
    """Outside backend/run/: an assignment to a lifecycle field (`x.status = ...`), a Run built
    with one (`Run(status=...)`), or a bulk `update(Run)`."""
    if rel.startswith("backend/run/"):
        return []
    orm_run = not _foreign_run(tree)
    found = []
    for node in ast.walk(tree):
        for t in _targets(node):
            if isinstance(t, ast.Attribute) and t.attr in LIFECYCLE_FIELDS:
                found.append(
                    Violation(rel, t.lineno, f"writes .{t.attr}: call a function of backend/run/service.py")
                )
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "Run" and orm_run and any(k.arg in LIFECYCLE_FIELDS for k in node.keywords):
                found.append(Violation(rel, node.lineno, "builds a Run with a lifecycle field"))
            if node.func.id == "update" and any(isinstance(a, ast.Name) and a.id == "Run" for a in node.args):
                found.append(Violation(rel, node.lineno, "update(Run) outside the run domain"))
    return found


def private_imports(rel: str, tree: ast.Module) -> list[Violation]:
    """`from backend.x... import _name` or `alias._name` where alias is a module of another domain."""
    own = domain_of(rel)
    found = []
    foreign_aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "backend":
            parts = node.module.split(".")
            for alias in node.names:
                # `from backend.run import service as run_service` imports a module of domain "run"
                domain = parts[1] if len(parts) > 1 else alias.name
                if domain == own:
                    continue
                if alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(Violation(rel, node.lineno, f"imports private {node.module}.{alias.name}"))
                foreign_aliases[alias.asname or alias.name] = domain
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "backend" and len(parts) > 1 and parts[1] != own and alias.asname:
                    foreign_aliases[alias.asname] = parts[1]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in foreign_aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(
                Violation(
                    rel,
                    node.lineno,
                    f"uses private {node.value.id}.{node.attr} of domain {foreign_aliases[node.value.id]}",
                )
            )
    return found


def router_sql(rel: str, tree: ast.Module) -> list[Violation]:
    """In a router.py: SQL constructs imported from sqlalchemy, or session.execute/get/scalars..."""
    if Path(rel).name != "router.py":
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sqlalchemy"):
            for alias in node.names:
                if alias.name in SQL_CONSTRUCTS:
                    found.append(Violation(rel, node.lineno, f"imports sqlalchemy {alias.name}"))
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in SESSION_NAMES
            and node.func.attr in SESSION_METHODS
        ):
            found.append(
                Violation(rel, node.lineno, f"queries in a router ({node.func.value.id}.{node.func.attr})")
            )
    return found


def missing_domain_files(backend: Path) -> list[str]:
    out = []
    for pkg in sorted(p for p in backend.iterdir() if (p / "__init__.py").exists()):
        if pkg.name in NOT_DOMAINS:
            continue
        for f in DOMAIN_FILES:
            if not (pkg / f).exists() and (pkg.name, f) not in MISSING_OK:
                out.append(f"backend/{pkg.name}/{f}")
    return out


# Who may not import whom: top-level source folder -> the packages it must never import.
FORBIDDEN_IMPORTS = {
    "backend": ("worker",),
    "agent": ("backend", "worker"),
    "libs": ("backend", "worker"),
}


def forbidden_imports(rel: str, tree: ast.Module) -> list[Violation]:
    """`import worker...`, `from worker... import`, or `importlib.import_module("worker...")`
    (also inside functions) in a file whose top folder forbids that package."""
    banned = FORBIDDEN_IMPORTS.get(Path(rel).parts[0], ())

    def hit(module: str) -> bool:
        return any(module == b or module.startswith(b + ".") for b in banned)

    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id) == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names = [node.args[0].value]
        found += [Violation(rel, node.lineno, f"imports {n}") for n in names if hit(n)]
    return found


# Roots of Python source: the root itself is a package (True) or a src/ folder holding packages.
PACKAGE_ROOTS = {"backend": True, "worker": True, "agent/src": False}


def _package_roots(root: Path) -> dict[Path, bool]:
    out = {root / top: is_pkg for top, is_pkg in PACKAGE_ROOTS.items()}
    out.update({src: False for src in sorted(root.glob("libs/*/src"))})
    return out


def missing_init_files(root: Path) -> list[str]:
    """Every directory between a source root and a `.py` file under it that has no `__init__.py`
    (the root itself too where it is a package: backend/, worker/)."""
    out: set[str] = set()
    for top, is_pkg in _package_roots(root).items():
        for path in top.rglob("*.py"):
            rel = path.relative_to(top)
            if {"__pycache__", "build", ".venv"} & set(rel.parts) or any(
                p.endswith(".egg-info") for p in rel.parts
            ):
                continue
            dirs = [top / Path(*rel.parts[:n]) for n in range(0 if is_pkg else 1, len(rel.parts))]
            out.update(d.relative_to(root).as_posix() for d in dirs if not (d / "__init__.py").exists())
    return sorted(out)


def worker_task_queries(rel: str, tree: ast.Module) -> list[Violation]:
    """In worker/tasks/: a repository imported (`from backend.x import repository`,
    `from backend.x.repository import f`, `import backend.x.repository`), a SQL construct imported from
    sqlalchemy, or a session queried directly: a task opens a unit of work and calls a service."""
    if not rel.startswith("worker/tasks/"):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("sqlalchemy"):
                found += [
                    Violation(rel, node.lineno, f"imports sqlalchemy {a.name}")
                    for a in node.names
                    if a.name in SQL_CONSTRUCTS
                ]
            elif node.module.split(".")[-1] == "repository":
                found.append(Violation(rel, node.lineno, f"imports from {node.module}: call its service"))
            else:
                found += [
                    Violation(rel, node.lineno, f"imports {node.module}.repository: call its service")
                    for a in node.names
                    if a.name == "repository"
                ]
        elif isinstance(node, ast.Import):
            found += [
                Violation(rel, node.lineno, f"imports {a.name}: call its service")
                for a in node.names
                if a.name.split(".")[-1] == "repository"
            ]
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in SESSION_NAMES
            and node.func.attr in SESSION_METHODS
        ):
            found.append(
                Violation(rel, node.lineno, f"queries in a task ({node.func.value.id}.{node.func.attr})")
            )
    return found


@functools.cache
def _tree(rel: str) -> ast.Module:
    """A source file parsed once per process for the checks that read the repository (only read:
    no check changes a tree); they share an xdist group, so one process parses (~1 CPU-s for
    backend/ and worker/, each check parsed them again)."""
    return ast.parse((ROOT / rel).read_text(), filename=rel)


def _sources(*tops: str) -> list[tuple[str, ast.Module]]:
    out = []
    for top in tops:
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if "/.venv/" in f"/{rel}" or "/build/" in f"/{rel}":
                continue
            out.append((rel, _tree(rel)))
    return out


def _modules() -> list[tuple[str, ast.Module]]:
    out = []
    for top in ("backend", "worker"):
        for path in sorted((ROOT / top).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            out.append((rel, _tree(rel)))
    return out


# --- the repository as it is ----------------------------------------------------------------------


@pytest.mark.xdist_group("architecture-sources")
def test_only_the_run_domain_writes_a_runs_lifecycle() -> None:
    found = [v for rel, tree in _modules() for v in lifecycle_writes(rel, tree)]
    assert not found, "\n".join(map(str, found))


@pytest.mark.xdist_group("architecture-sources")
def test_no_module_uses_another_domains_private_names() -> None:
    found = [v for rel, tree in _modules() for v in private_imports(rel, tree)]
    assert not found, "\n".join(map(str, found))


@pytest.mark.xdist_group("architecture-sources")
def test_routers_hold_no_sql() -> None:
    found = [v for rel, tree in _modules() if rel not in ROUTER_SQL_OK for v in router_sql(rel, tree)]
    assert not found, "\n".join(map(str, found))


def test_every_domain_has_the_same_files() -> None:
    assert missing_domain_files(ROOT / "backend") == []


@pytest.mark.xdist_group("architecture-sources")
def test_the_import_graph_points_one_way() -> None:
    found = [v for rel, tree in _sources(*FORBIDDEN_IMPORTS) for v in forbidden_imports(rel, tree)]
    assert not found, "\n".join(map(str, found))


def test_every_source_directory_is_a_package() -> None:
    assert missing_init_files(ROOT) == []


@pytest.mark.xdist_group("architecture-sources")
def test_worker_tasks_call_services_only() -> None:
    found = [v for rel, tree in _modules() for v in worker_task_queries(rel, tree)]
    assert not found, "\n".join(map(str, found))


def test_the_listed_exceptions_are_still_needed() -> None:
    """An exception whose file now exists, or whose router no longer holds SQL, is removed."""
    stale = [f"{d}/{f}" for d, f in MISSING_OK if (ROOT / "backend" / d / f).exists()]
    for rel in ROUTER_SQL_OK:
        tree = ast.parse((ROOT / rel).read_text())
        if not router_sql(rel, tree) and not _raw_sql(tree):
            stale.append(rel)
    assert stale == []


def _raw_sql(tree: ast.Module) -> bool:
    """health's probe runs `s.execute(text("SELECT 1"))` on a session from a factory."""
    return any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "execute"
        for n in ast.walk(tree)
    )


# --- the checkers fail on injected violations -----------------------------------------------------


def _check(tmp_path: Path, rel: str, source: str) -> tuple[list[Violation], list[Violation], list[Violation]]:
    path = tmp_path / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    tree = ast.parse(path.read_text())
    return lifecycle_writes(rel, tree), private_imports(rel, tree), router_sql(rel, tree)


@pytest.mark.parametrize(
    "source",
    [
        "def done(run):\n    run.status = RunStatus.succeeded\n",
        "def done(run, now):\n    run.status, run.finished_at = RunStatus.succeeded, now\n",
        "def go(r):\n    r.attempt += 1\n",
        "def new():\n    return Run(name='x', status=RunStatus.running)\n",
        "def bulk(session):\n    session.execute(update(Run).values(status='failed'))\n",
    ],
)
def test_a_lifecycle_write_outside_the_run_domain_is_found(tmp_path: Path, source: str) -> None:
    writes, _, _ = _check(tmp_path, "backend/result/service.py", source)
    assert writes and all("backend/result/service.py:" in str(w) for w in writes)
    inside, _, _ = _check(tmp_path, "backend/run/service.py", source)
    assert inside == []  # the run domain itself may


def test_the_importers_run_is_not_the_orm_model(tmp_path: Path) -> None:
    """An importer's `Run` (backend/imports/formats/base.py) carries the times its file states; the
    ORM's `Run` built the same way outside the run domain is still found."""
    call = "\n\ndef parsed(t):\n    return Run(name='x', jobs=[], started_at=t, finished_at=t)\n"
    rel = "backend/imports/formats/x.py"
    theirs, _, _ = _check(tmp_path, rel, "from backend.imports.formats.base import Job, Run" + call)
    assert theirs == []
    orm, _, _ = _check(tmp_path, rel, "from backend.models import Run" + call)
    assert len(orm) == 1 and "lifecycle" in str(orm[0])


@pytest.mark.parametrize(
    "source",
    [
        "from backend.run import service as run_service\n\ndef f(s):\n    return run_service._agent_run(s)\n",
        "from backend.run.service import _agent_run\n",
        "import backend.run.service as rs\n\nrs._finish(None)\n",
    ],
)
def test_a_private_name_of_another_domain_is_found(tmp_path: Path, source: str) -> None:
    _, private, _ = _check(tmp_path, "backend/result/service.py", source)
    assert len(private) == 1, private
    _, own, _ = _check(tmp_path, "backend/run/router.py", source)
    assert own == []  # the run domain's own private names


def test_a_private_name_used_by_a_worker_task_is_found(tmp_path: Path) -> None:
    src = "from backend.run import service\n\ndef t(s, r):\n    service._finish(r, 'fail', 'x')\n"
    _, private, _ = _check(tmp_path, "worker/tasks/run.py", src)
    assert len(private) == 1


@pytest.mark.parametrize(
    "source",
    [
        "from sqlalchemy import select\n",
        "def f(session):\n    return session.get(Device, 1)\n",
        "def f(session):\n    return list(session.scalars(q))\n",
    ],
)
def test_sql_in_a_router_is_found(tmp_path: Path, source: str) -> None:
    _, _, sql = _check(tmp_path, "backend/device/router.py", source)
    assert len(sql) == 1
    _, _, elsewhere = _check(tmp_path, "backend/device/repository.py", source)
    assert elsewhere == []


def test_a_domain_missing_a_file_is_found(tmp_path: Path) -> None:
    for f in ("router.py", "schemas.py", "service.py", "__init__.py"):
        (tmp_path / "newthing").mkdir(exist_ok=True)
        (tmp_path / "newthing" / f).write_text("")
    assert missing_domain_files(tmp_path) == ["backend/newthing/repository.py"]


@pytest.mark.parametrize(
    ("rel", "source"),
    [
        ("backend/jobs.py", "from worker.app import celery_app\n"),
        ("backend/result/service.py", "def f():\n    import worker.tasks.run\n"),
        ("backend/outbox/sender.py", "import importlib\n\nimportlib.import_module('worker.app')\n"),
        ("agent/src/iowatt_agent/loop.py", "from backend.run.schemas import RunRead\n"),
        ("libs/workload/src/iowatt_workload/__init__.py", "import worker\n"),
    ],
)
def test_an_import_against_the_graph_is_found(tmp_path: Path, rel: str, source: str) -> None:
    assert len(forbidden_imports(rel, ast.parse(source))) == 1
    # the same lines where they are allowed: the worker imports the backend, not the reverse
    assert forbidden_imports("worker/tasks/run.py", ast.parse(source.replace("backend", "x"))) == []
    assert (
        forbidden_imports("backend/jobs.py", ast.parse("from backend.kit import units\nimport workers\n"))
        == []
    )


def test_a_directory_without_init_is_found(tmp_path: Path) -> None:
    for rel in (
        "backend/__init__.py",
        "backend/newthing/service.py",
        "backend/kit/__init__.py",
        "backend/kit/deep/x.py",
        "worker/__init__.py",
        "agent/src/iowatt_agent/__init__.py",
        "agent/src/iowatt_agent/meters/__init__.py",
        "agent/src/iowatt_agent/meters/rapl.py",
        "agent/src/iowatt_agent/tpch/sql/q1.py",
        "libs/energy/src/iowatt_energy/__init__.py",
        "libs/energy/src/iowatt_energy/grid/data/zones.py",
        "libs/energy/src/iowatt_energy.egg-info/x.py",
        "backend/run/__pycache__/x.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("")
    assert missing_init_files(tmp_path) == [
        "agent/src/iowatt_agent/tpch",
        "agent/src/iowatt_agent/tpch/sql",
        "backend/kit/deep",
        "backend/newthing",
        "libs/energy/src/iowatt_energy/grid",
        "libs/energy/src/iowatt_energy/grid/data",
    ]
    (tmp_path / "worker" / "__init__.py").unlink()
    (tmp_path / "worker" / "tasks").mkdir()
    (tmp_path / "worker" / "tasks" / "run.py").write_text("")
    assert {"worker", "worker/tasks"} <= set(missing_init_files(tmp_path))


@pytest.mark.parametrize(
    "source",
    [
        "from backend.run import repository\n",
        "from backend.agent import repository as agent_repo\n",
        "from backend.run.repository import queued_ids\n",
        "import backend.run.repository\n",
        "from sqlalchemy import select\n",
        "def t():\n    with unit_of_work() as session:\n        return session.scalars(q)\n",
    ],
)
def test_a_worker_task_reaching_past_the_service_is_found(source: str) -> None:
    assert len(worker_task_queries("worker/tasks/run.py", ast.parse(source))) == 1
    # the same line in a service is the service's business; a task calling the service is fine
    assert worker_task_queries("backend/run/service.py", ast.parse(source)) == []
    ok = "from backend.run import service as run_service\n\ndef t(s):\n    run_service.queued_ids(s)\n"
    assert worker_task_queries("worker/tasks/run.py", ast.parse(ok)) == []
