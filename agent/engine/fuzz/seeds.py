"""Writes the fuzz targets' seed corpora (fuzz/corpus/<target>/seed-*) from the engine's tests
and the options corpus: every vdbench parameter text and PostMark command text the tests use,
every option set of tests/options_corpus.py as a command line and as a JSON job file, and a few
heap-btree command lines. Re-run after adding tests: python3 agent/engine/fuzz/seeds.py"""

from __future__ import annotations

import ast
import hashlib
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
TESTS = REPO / "tests" / "engine"
OPTIONS = HERE.parent / "tests" / "options_corpus.py"


def strings(path: Path) -> list[str]:
    """Every string constant and f-string skeleton (placeholders dropped) in a Python file."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            out.append("".join(v.value for v in node.values if isinstance(v, ast.Constant)))
    return out


def option_sets() -> list[list[str]]:
    """The `ok` and `bad` lists of options_corpus.py (lists of string constants only)."""
    sets = []
    for node in ast.walk(ast.parse(OPTIONS.read_text())):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.List):
            for item in node.value.elts:
                if isinstance(item, ast.Tuple) and item.elts:
                    item = item.elts[0]
                if isinstance(item, ast.List) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in item.elts
                ):
                    sets.append([e.value for e in item.elts])
    return sets


def write(target: str, texts: list[str]) -> int:
    d = HERE / "corpus" / target
    d.mkdir(parents=True, exist_ok=True)
    n = 0
    for t in dict.fromkeys(texts):
        data = t.encode()
        (d / f"seed-{hashlib.sha1(data).hexdigest()[:16]}").write_bytes(data)
        n += 1
    return n


def main() -> None:
    texts = [s for p in sorted(TESTS.glob("*.py")) for s in strings(p)]
    vdb = [t for t in texts if "fsd=" in t or "fwd=" in t or "rd=" in t]
    seeds = REPO.parent / "shared" / "seeds"
    for p in sorted(seeds.glob("*.txt")) if seeds.is_dir() else []:
        lines = [
            ln
            for ln in p.read_text(errors="replace").splitlines()
            if ln.strip().startswith(("fsd=", "fwd=", "rd="))
        ]
        if lines:
            vdb.append("\n".join(lines) + "\n")
    pm = [t + "\nrun\nquit\n" if "run" not in t else t for t in texts if t.lstrip().startswith("set ")]
    pm += [
        "set size 500 10000\nset number 500\nset transactions 500\nrun\n",
        "run\n",
        "show\nhelp\n?\nrun\nexit\n",
    ]
    sets = option_sets()
    argv = ["\n".join(["--filename=/tmp/f", "--size=1m", *s]) for s in sets]
    jobs = []
    for s in sets:
        job = {}
        for a in s:
            if a.startswith("--") and "=" in a:
                k, v = a[2:].split("=", 1)
                job[k] = v
        jobs.append(json.dumps({"global": {"filename": "/tmp/f", "size": "1m"}, "jobs": [job]}))
    jobs += [t for t in texts if t.lstrip().startswith("{") and '"jobs"' in t]
    # fio INI job files: fio's examples (tests/engine/fio-examples), the INI texts of the tests,
    # and every option set as a one-job INI file
    examples = TESTS / "fio-examples"
    ini = [p.read_text(errors="replace") for p in sorted(examples.glob("*.fio"))] if examples.is_dir() else []
    ini += [t for t in texts if t.lstrip().startswith(("[", ";", "#")) and "]\n" in t]
    for s in sets:
        lines = [a[2:] for a in s if a.startswith("--")]
        ini.append("[global]\nfilename=/tmp/f\nsize=1m\n[job]\n" + "\n".join(lines) + "\n")
    ini.append("; untrusted\n[global]\nbeneath=/fuzz\n[a]\nfilename=a\\:b:c\nsize=$pagesize*2\n")
    heap = [
        "--heap-btree\n--directory=/tmp/d\n--records=1000",
        "--heap-btree\n--directory=/tmp/d\n--records=5000\n--cache-fraction=0.1,50%,1\n--structure=both",
        "--heap-btree\n--directory=/tmp/d\n--records=100\n--queries=10\n--heap-queries=5\n--randseed=7\n--check\n--parse-only",
        "--heap-btree=1\n--directory=/tmp/d\n--beneath=/tmp\n--records=10\n--structure=btree\n--output-format=json+\n--progress=jsonl",
    ]
    for name, items in (
        ("vdbench", vdb),
        ("postmark", pm),
        ("argv", argv),
        ("jobfile", jobs),
        ("ini", ini),
        ("heapbtree", heap),
    ):
        print(name, write(name, items))


if __name__ == "__main__":
    main()
