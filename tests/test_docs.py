"""Docs that stay true: every `§` citation points at a section that exists, and no doc names a
path of one machine."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SKIP_SUFFIXES = {".json", ".png", ".svg", ".lock", ".ico"}
NUM = r"\d+(?:\.\d+)?"
# `energy.md §2.3`, `docs/contracts.md §4`, `contract §2`, `ADR 0009 §5`, ranges `§2.4–2.7`, `§2-§3`
CITATION = re.compile(
    rf"(?P<doc>[\w./-]+\.md|contracts?|ADR \d{{4}})[\s#*]*§(?P<a>{NUM})(?:\s*[–-]\s*§?(?P<b>{NUM}))?"
)


def repo_files() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    paths = [REPO / p for p in out.decode().split("\0") if p]
    return [p for p in paths if p.is_file() and p.suffix not in SKIP_SUFFIXES]


def markdown_sections(path: Path) -> set[str]:
    """`## 2. Title` → "2", `### 2.3 Title` → "2.3"."""
    return {m[1] for m in re.finditer(rf"^#+\s+({NUM})\.?\s", path.read_text(), re.M)}


def adr_sections(number: str) -> set[str]:
    """An ADR's numbered Decision items (`1. **...**`) are its §1, §2, ..."""
    [path] = (REPO / "docs" / "adr").glob(f"{number}-*.md")
    decision = path.read_text().split("## Decision", 1)[1].split("\n## ", 1)[0]
    return {m[1] for m in re.finditer(r"^(\d+)\. ", decision, re.M)}


def sections_of(doc: str) -> set[str] | None:
    if doc.startswith("ADR "):
        return adr_sections(doc[4:])
    name = "contracts.md" if doc in ("contract", "contracts") else Path(doc).name
    found = [p for p in (REPO / "docs").rglob(name)] + [p for p in REPO.glob(doc) if p.is_file()]
    return markdown_sections(found[0]) if found else None


def expand(a: str, b: str | None) -> list[str]:
    if b is None:
        return [a]
    if "." in a and "." not in b:
        b = f"{a.split('.')[0]}.{b}"
    head = a.split(".")[0] + "." if "." in a else ""
    lo, hi = (int(x.rsplit(".", 1)[-1]) for x in (a, b))
    return [f"{head}{i}" for i in range(lo, hi + 1)]


def test_every_section_citation_exists() -> None:
    bad, seen = [], 0
    for path in repo_files():
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        for m in CITATION.finditer(text):
            seen += 1
            sections = sections_of(m["doc"])
            missing = [s for s in expand(m["a"], m["b"]) if sections is None or s not in sections]
            if missing:
                line = text.count("\n", 0, m.start()) + 1
                bad.append(
                    f"{path.relative_to(REPO)}:{line}: {m[0]!r} ({m['doc']} has no §{', §'.join(missing)})"
                )
    assert seen > 40  # the pattern still finds the citations
    assert bad == [], "\n".join(bad)


def test_the_citation_check_sees_a_missing_section() -> None:
    assert "2.3" in sections_of("energy.md")  # type: ignore[operator]
    assert "9.9" not in sections_of("energy.md")  # type: ignore[operator]
    assert sections_of("engine.md") is None  # not a doc of this repository
    assert adr_sections("0009") >= {"1", "5"}
    assert expand("2.4", "2.7") == ["2.4", "2.5", "2.6", "2.7"] and expand("2", "3") == ["2", "3"]


def test_no_doc_names_a_path_of_one_machine() -> None:
    """Docs say `.venv/bin/...` from the repository root, not where one checkout happens to live."""
    machine = re.compile(r"/work/|/home/\w+/|/root/\.|/tmp/pytest-of-")
    bad = []
    for path in repo_files():
        if path.suffix != ".md":
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if machine.search(line):
                bad.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert bad == [], "\n".join(bad)


def _manifest_names() -> dict[str, set[str]]:
    """Package names per manifest, as ADR 0004's list spells them (no extras, no versions)."""
    import json
    import tomllib

    from packaging.requirements import Requirement

    def py(path: Path) -> set[str]:
        project = tomllib.loads(path.read_text())["project"]
        specs = project.get("dependencies", []) + [
            s for extra in project.get("optional-dependencies", {}).values() for s in extra
        ]
        return {Requirement(s).name.lower() for s in specs if not Requirement(s).name.startswith("iowatt-")}

    pkg = json.loads((REPO / "frontend" / "package.json").read_text())
    libs: set[str] = set()
    for lib in sorted((REPO / "libs").glob("*/pyproject.toml")):
        libs |= py(lib)
    return {
        "pyproject.toml": py(REPO / "pyproject.toml"),
        "agent/pyproject.toml": py(REPO / "agent" / "pyproject.toml"),
        "client/pyproject.toml": py(REPO / "client" / "pyproject.toml"),
        "libs/*/pyproject.toml": libs,
        "frontend/package.json": set(pkg.get("dependencies", {})) | set(pkg.get("devDependencies", {})),
    }


def adr_0004_list() -> dict[str, set[str]]:
    text = (REPO / "docs" / "adr" / "0004-dependencies.md").read_text()
    listed = text.split("## The list", 1)[1]
    out: dict[str, set[str]] = {}
    for item in re.split(r"^- ", listed, flags=re.M)[1:]:
        manifest, names = item.split(":", 1)
        out[manifest.strip("` ")] = set(re.findall(r"`([^`]+)`", names))
    return out


def test_adr_0004_names_every_dependency_of_every_manifest() -> None:
    listed, actual = adr_0004_list(), _manifest_names()
    assert set(listed) == set(actual)
    for manifest, names in actual.items():
        assert listed[manifest] == names, (
            f"{manifest}: not in ADR 0004: {sorted(names - listed[manifest])}; "
            f"in ADR 0004 but not the manifest: {sorted(listed[manifest] - names)}"
        )


def test_every_iowatt_agent_option_the_docs_show_exists() -> None:
    """`iowatt-agent SUB [SUB2] ... --flag` in any doc: SUB is a command and --flag is in its --help
    (bench also takes any engine option as --NAME=VALUE: those are the engine's)."""
    # the CLI's help in this process (typer's runner prints what `iowatt-agent ... --help` prints,
    # byte for byte): one interpreter start per command cost ~2 minutes of the suite
    from iowatt_agent.cli import app
    from typer.testing import CliRunner

    env = {"COLUMNS": "300", "TERM": "dumb", "NO_COLOR": "1"}
    helps: dict[tuple[str, ...], str] = {}

    def help_of(cmd: tuple[str, ...]) -> str | None:
        if cmd not in helps:
            r = CliRunner().invoke(
                app, [*cmd, "--help"], env=env, terminal_width=300, prog_name="iowatt-agent"
            )
            helps[cmd] = r.output if r.exit_code == 0 else ""
        return helps[cmd] or None

    top = help_of(()) or ""
    commands = set(re.findall(r"^\W*([a-z][\w-]*)\s{2,}", top, re.M))
    assert {"enroll", "run", "bench", "inventory", "meters", "targets"} <= commands, top
    engine_help = (
        subprocess.run(
            [str(REPO / "agent" / "engine" / "build" / "iowatt-engine"), "--help"],
            capture_output=True,
            text=True,
        ).stdout
        if (REPO / "agent" / "engine" / "build" / "iowatt-engine").exists()
        else ""
    )
    bad = []
    for path in repo_files():
        if path.suffix not in (".md", ".service"):
            continue
        for m in re.finditer(r"iowatt-agent ([a-z][\w-]*)(?: ([a-z][\w-]*))?([^`\n|]*)", path.read_text()):
            if m[1] not in commands:
                bad.append(f"{path.relative_to(REPO)}: unknown command {m[0]!r}")
                continue
            cmd = (m[1], m[2]) if m[2] and help_of((m[1], m[2])) else (m[1],)
            text = help_of(cmd) or ""
            for flag in re.findall(r"(--[a-z][\w-]*)", m[3]):
                engine_option = cmd == ("bench",) and f"--{flag[2:]}=" in engine_help
                if flag not in text and not engine_option:
                    bad.append(f"{path.relative_to(REPO)}: iowatt-agent {' '.join(cmd)} has no {flag}")
    assert bad == [], "\n".join(sorted(set(bad)))


def test_every_repository_file_a_doc_names_exists() -> None:
    """`agent/systemd/check_sandbox.py`, `backend/device/service.py`, ...: a file a doc (or the
    systemd unit's comments) names by its path from the repository root is there."""
    path_re = re.compile(
        r"(?<![\w/.-])((?:backend|worker|agent|libs|scripts|tests|frontend|migrations|deploy|bench|docs)"
        r"/[\w./-]+\.(?:py|ts|tsx|mjs|sh|c|h|yml|yaml|json|toml|service|md|txt))\b"
    )
    bad = []
    for path in repo_files():
        if path.suffix not in (".md", ".service"):
            continue
        for m in path_re.finditer(path.read_text()):
            if not (REPO / m[1]).exists():
                bad.append(f"{path.relative_to(REPO)}: {m[1]}")
    assert bad == [], "\n".join(sorted(set(bad)))
