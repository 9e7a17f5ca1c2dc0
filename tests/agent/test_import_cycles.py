"""No import cycles inside the agent (agent/src/iowatt_agent): a module that needs another's names
gets them from a module below both (as bench_args.py holds `bench`'s arguments for bench.py and
tpch/bench.py), so the import order never matters and a module can be read, tested and replaced
on its own.

The graph is read from the source with `ast`, every import counted: at the top, inside a
function (imported when called) and under `if TYPE_CHECKING:` (a cycle of types is the same
tangle, only hidden from the interpreter). `from . import x` is an edge to the module x when x is
one, else to the package. Importing a package's module runs the package's `__init__` too, but
that is how packages work, not a cycle of the code's own making: such implied edges are left out.
"""

from __future__ import annotations

import ast
from pathlib import Path

AGENT = Path(__file__).resolve().parents[2] / "agent" / "src" / "iowatt_agent"


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Module -> the modules of the same package tree it imports (names relative to `root`;
    "" is the package itself)."""
    files = {module_name(root, p): p for p in root.rglob("*.py")}
    top = root.name
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        package = [p for p in package if p]
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package[: len(package) - (node.level - 1)]
                    target = ".".join([*base, *([node.module] if node.module else [])])
                elif node.module and (node.module == top or node.module.startswith(f"{top}.")):
                    target = node.module.removeprefix(top).removeprefix(".")
                else:
                    continue
                for alias in node.names:
                    sub = f"{target}.{alias.name}".lstrip(".")
                    edges.add(sub if sub in files else target)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name == top or alias.name.startswith(f"{top}."):
                        edges.add(alias.name.removeprefix(top).removeprefix("."))
        graph[name] = {e for e in edges if e in files and e != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(component)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def describe(component: set[str], graph: dict[str, set[str]]) -> str:
    return "; ".join(f"{m} -> {', '.join(sorted(graph[m] & component))}" for m in sorted(component))


def test_the_agent_has_no_import_cycle() -> None:
    graph = import_graph(AGENT)
    assert {"bench", "bench_args", "tpch.bench", "tpch.run", "tpch.worker", "tpch.steps"} <= set(graph)
    found = cycles(graph)
    assert not found, "import cycles: " + " | ".join(describe(c, graph) for c in found)


def test_the_threads_share_a_status_object_and_the_runner_knows_no_kind() -> None:
    """The heartbeat and the worker loop meet in status.py (neither imports the other); the
    engine's runner gets a kind's phase names from its caller, so kinds may name runner's types."""
    graph = import_graph(AGENT)
    assert "loop" not in graph["heartbeat"] and "status" in graph["heartbeat"] and "status" in graph["loop"]
    assert not {"loop", "heartbeat"} & graph["status"]
    assert not {m for m in graph["runner"] if m == "kinds" or m.startswith("kinds.")}


def test_bench_and_tpch_bench_import_their_arguments_from_below() -> None:
    graph = import_graph(AGENT)
    assert "tpch.bench" in graph["bench"] or "tpch" in graph["bench"]  # the dispatch reaches it
    assert "bench" not in graph["tpch.bench"] and "bench_args" in graph["tpch.bench"]
    assert graph["bench_args"] == set()


def write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_check_finds_every_kind_of_import_in_a_cycle(tmp_path: Path) -> None:
    pkg = tmp_path / "iowatt_agent"
    write(pkg, "__init__.py", "")
    write(pkg, "a.py", "from .b import x\n")  # top level
    write(pkg, "b.py", "def f():\n    from . import a\n")  # inside a function
    write(pkg, "sub/__init__.py", "")
    write(pkg, "sub/c.py", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ..d import y\n")
    write(pkg, "d.py", "import iowatt_agent.sub.c\n")  # absolute
    write(pkg, "e.py", "from iowatt_agent import a\nfrom .sub import c\n")  # no cycle: nothing imports e
    graph = import_graph(pkg)
    assert graph["e"] == {"a", "sub.c"}
    assert sorted(map(sorted, cycles(graph))) == [["a", "b"], ["d", "sub.c"]]
