"""Every option the engine refuses, with its reason, has one owner: the engine's tables
(`refused_opts`, `refused_engines`, `refused_values` in agent/engine/src/jobfile.c), printed by
`--limits` as block.jobfile.refused. README § Refused options is that list, rendered here: the test
fails when they differ and prints the block to paste (or run this file: `python3
tests/engine/test_refusals.py [ENGINE]` prints it). Each catalogued value refusal's example must
exit 2 naming its option; every check in the sources whose message says it refuses (not
implemented, not supported, refused) must name a catalogued option; and every option Debian's
fio 3.33 knows is either the engine's or refused with a reason (never "unknown option")."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "agent" / "engine" / "README.md"
SRC = REPO / "agent" / "engine" / "src"
BEGIN, END = "<!-- refused:begin (generated: tests/engine/test_refusals.py) -->", "<!-- refused:end -->"
FIO = shutil.which("fio")

# names a refusing check may carry that are not job options: other modes' parameters and flags
NOT_JOB_OPTIONS = {"postmark", "rd", "fsd", "fwd", "openflags", "xfersize", "showcmd", "output", "readonly"}


def limits(engine: Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(
        subprocess.run([str(engine), "--limits"], capture_output=True, text=True, check=True).stdout
    )
    return doc


def render(doc: dict[str, Any]) -> str:
    rows = ["| option | refused when | why |", "|---|---|---|"]
    for r in doc["block"]["jobfile"]["refused"]:
        when = f"`{r['when']}`" if r["option"] == "ioengine" else r["when"]
        when, why = when.replace("|", r"\|"), r["why"].replace("|", r"\|")
        rows.append(f"| `{r['option']}` | {when} | {why} |")
    return "\n".join([BEGIN, *rows, END])


def readme_block() -> str:
    text = README.read_text()
    start, end = text.find(BEGIN), text.find(END)
    assert start >= 0 and end > start, f"README has no {BEGIN} ... {END} block"
    return text[start : end + len(END)]


def test_the_readme_lists_every_refusal_with_its_reason(engine_bin: Path) -> None:
    expected = render(limits(engine_bin))
    assert readme_block() == expected, (
        "README § Refused options differs from the engine's tables; paste:\n" + expected
    )


def test_refused_options_are_not_options_of_the_engine(engine_bin: Path) -> None:
    doc = limits(engine_bin)
    rows = doc["block"]["options"]
    known = set(rows) | {r["alias"] for r in rows.values() if r.get("alias")}
    whole = set(doc["block"]["jobfile"]["refused_options"])
    assert not whole & known, f"refused as unknown but the engine has them: {sorted(whole & known)}"
    for r in doc["block"]["jobfile"]["refused"]:
        if r["when"] != "any" and r["option"] not in ("status-interval", "terse-version", "include"):
            assert r["option"] in known, f"{r['option']}: a value refusal of an option the engine lacks"


def test_each_value_refusal_exits_2_naming_its_option(engine_bin: Path, scratch: Path) -> None:
    f, g = scratch / "f.dat", scratch / "g.dat"
    for p in (f, g):
        p.write_bytes(b"\0" * (1 << 20))
    checked = 0
    wrong: list[str] = []
    for r in limits(engine_bin)["block"]["jobfile"]["refused"]:
        if not r["example"]:
            continue
        extra = [a.replace("F:G", f"{f.name}:{g.name}") for a in r["example"].split()]
        own = [] if any(a.startswith("--nrfiles") for a in extra) else [f"--filename={f.name}"]
        args = ["--name=r", *own, "--size=1m", *extra]
        if any(a.startswith(("--status-interval", "--terse-version")) for a in extra):
            args = [*extra, "--name=r", f"--filename={f.name}", "--size=1m"]
        p = subprocess.run([str(engine_bin), *args], capture_output=True, text=True, timeout=60, cwd=scratch)
        if p.returncode != 2 or f"{r['option']}:" not in p.stderr or len(p.stderr.strip().splitlines()) != 1:
            wrong.append(f"{r['option']} ({r['example']}): exit {p.returncode}: {p.stderr.strip()[:200]}")
        checked += 1
    assert not wrong, "\n".join(wrong)
    assert checked >= 25


def _refusing_checks() -> list[tuple[str, str, str]]:
    """(source, option, message) of every die_usage whose message says it refuses."""
    call = re.compile(r'die_usage\(\s*"([^"]+)"\s*,\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
    refusing = re.compile(r"not implemented|not supported|refused|is refused", re.I)
    found = []
    for path in sorted(SRC.glob("*.c")):
        for m in call.finditer(path.read_text()):
            message = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(2)))
            if refusing.search(message):
                found.append((path.name, m.group(1), message))
    return found


def test_every_refusing_check_names_a_catalogued_option(engine_bin: Path) -> None:
    catalogued = {r["option"] for r in limits(engine_bin)["block"]["jobfile"]["refused"]}
    missing = [
        f"{src}: {opt}: {msg[:80]}"
        for src, opt, msg in _refusing_checks()
        if opt not in catalogued and opt not in NOT_JOB_OPTIONS
    ]
    assert not missing, "refusals missing from refused_values (src/jobfile.c):\n" + "\n".join(missing)


def fio_option_names() -> set[str]:
    """Every option name Debian's fio lists: `fio --cmdhelp=all` (the general options) and the
    options of the ioengines the engine has (`--enghelp=libaio`, `--enghelp=io_uring`; psync and
    null have none)."""
    assert FIO
    names = set()
    for arg in ("--cmdhelp=all", "--enghelp=libaio", "--enghelp=io_uring"):
        out = subprocess.run([FIO, arg], capture_output=True, text=True, timeout=30).stdout
        for line in out.splitlines():
            m = re.match(r"^\s*([A-Za-z0-9_]+)\s*:", line)
            if m:
                names.add(m.group(1))
    return names


@pytest.mark.skipif(FIO is None, reason="Debian's fio is not installed")
def test_every_fio_option_is_the_engines_or_refused_with_a_reason(engine_bin: Path) -> None:
    doc = limits(engine_bin)
    rows = doc["block"]["options"]
    known = set(rows) | {r["alias"] for r in rows.values() if r.get("alias")}
    refused = set(doc["block"]["jobfile"]["refused_options"])
    fio = fio_option_names()
    assert len(fio) > 200, len(fio)
    missing = sorted(fio - known - refused)
    assert not missing, (
        f"fio options the engine would call unknown (give each a reason in refused_opts): {missing}"
    )


if __name__ == "__main__":
    engine = Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "agent" / "engine" / "build" / "iowatt-engine"
    print(render(limits(engine)))
