"""What every ELF file of an agent bundle needs of the host, and whether the bundle keeps to it.

`agent/packaging/build.sh` runs this on the staged bundle before packing it (the build fails on any
finding) and tests/agent_dist reads the same function on the bundle the suite builds (ADR 0036):

- the newest glibc symbol version any file needs (`objdump -p`'s version references, GLIBC_x.y,
  from libc, libm, libpthread, libdl or the loader): at most the floor the bundle claims, and the
  engine's at most the engine's own; no GLIBC_PRIVATE (glibc's internals, any version may change it);
- search paths (RPATH/RUNPATH): none outside the bundle. The agent runs as root: a library search
  path naming the build host's directories (a pyenv prefix, a build root) or any absolute directory
  is one a host may have, or let someone create, with other contents;
- libraries (NEEDED): each one in the bundle, or one every glibc host has (below).

    python3 agent/packaging/bundle_check.py DIR --glibc 2.31 --engine-glibc 2.28 \
        [--drop-outside-search-paths PATCHELF] [--manifest]

prints one line per finding and exits 1, or prints the floor found and exits 0. With
--drop-outside-search-paths it first removes, with patchelf, every RPATH/RUNPATH entry that leads
outside the bundle (build.sh: a prefix-built CPython's, below), keeping those inside it.

With --manifest it then writes DIR/MANIFEST.json, the one record of the glibc the bundle needs (the
newest version the check found, not the limit it was given), which every reader takes from there:

    {"glibc": "2.28", "agent_glibc": "2.28", "engine_glibc": "2.28"}

`glibc` is the host's floor (the newer of the two); build.sh packs the file first in the tarball
(the server reads it from the head of the tarball it serves: the install script refuses a host
with an older glibc before it downloads anything) and puts the number in the .deb's dependency on
libc6.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

# glibc's own libraries (every glibc host has them) and the loader
SYSTEM_LIBRARIES = frozenset(
    {
        "libc.so.6",
        "libm.so.6",
        "libpthread.so.0",
        "libdl.so.2",
        "librt.so.1",
        "libutil.so.1",
        "ld-linux-x86-64.so.2",
        "ld-linux-aarch64.so.1",
    }
)
ENGINES = ("iowatt-engine",)  # the engine's file name, wherever it lies in the bundle
MANIFEST = "MANIFEST.json"  # in the bundle's top directory (its name sorts before every other file's)

Version = tuple[int, ...]


@dataclass
class Elf:
    path: Path  # relative to the bundle's top
    glibc: set[Version] = field(default_factory=set)
    private: bool = False  # needs GLIBC_PRIVATE
    needed: list[str] = field(default_factory=list)
    search_paths: list[str] = field(default_factory=list)  # RPATH and RUNPATH entries

    @property
    def newest(self) -> Version | None:
        return max(self.glibc) if self.glibc else None


def is_elf(path: Path) -> bool:
    if path.is_symlink() or not path.is_file():
        return False
    with path.open("rb") as f:
        return f.read(4) == b"\x7fELF"


def parse_objdump(text: str) -> tuple[set[Version], bool, list[str], list[str]]:
    """objdump -p's dynamic section and version references: (glibc versions, GLIBC_PRIVATE,
    NEEDED, RPATH/RUNPATH entries)."""
    versions: set[Version] = set()
    private = False
    needed: list[str] = []
    paths: list[str] = []
    in_refs = False
    for line in text.splitlines():
        words = line.split()
        if not words:
            continue
        if line.startswith("Version References:"):
            in_refs = True
            continue
        if line and not line[0].isspace():  # the next section's heading
            in_refs = False
        if words[0] == "NEEDED" and len(words) == 2:
            needed.append(words[1])
        elif words[0] in ("RPATH", "RUNPATH") and len(words) == 2:
            paths += [p for p in words[1].split(":")]
        elif in_refs and len(words) == 4 and words[0].startswith("0x"):
            name = words[3]
            if name == "GLIBC_PRIVATE":
                private = True
            elif m := re.fullmatch(r"GLIBC_([0-9]+(?:\.[0-9]+)+)", name):
                versions.add(tuple(int(x) for x in m.group(1).split(".")))
    return versions, private, needed, paths


def inspect(top: Path) -> list[Elf]:
    """Every ELF file under top (symbolic links are not followed)."""
    found = []
    for dirpath, _dirs, files in os.walk(top):
        for name in sorted(files):
            path = Path(dirpath) / name
            if not is_elf(path):
                continue
            objdump = ["objdump", "-p", str(path)]
            out = subprocess.run(objdump, capture_output=True, text=True, check=True).stdout
            versions, private, needed, paths = parse_objdump(out)
            found.append(Elf(path.relative_to(top), versions, private, needed, paths))
    return sorted(found, key=lambda e: str(e.path))


def outside(top: Path, e: Elf, entry: str) -> bool:
    """A search path entry that is not $ORIGIN-relative or leads out of the bundle's top."""
    if not entry.startswith("$ORIGIN"):
        return True
    root = top.resolve()
    where = Path(os.path.normpath(root / e.path.parent / entry.replace("$ORIGIN", ".", 1)))
    return where != root and root not in where.parents


def drop_outside_search_paths(top: Path, elves: list[Elf], patchelf: str) -> int:
    """Remove the search path entries outside the bundle (patchelf); returns how many files changed."""
    changed = 0
    for e in elves:
        keep = [p for p in e.search_paths if not outside(top, e, p)]
        if keep == e.search_paths:
            continue
        path = str(top / e.path)
        if keep:
            subprocess.run([patchelf, "--set-rpath", ":".join(keep), path], check=True)
        else:
            subprocess.run([patchelf, "--remove-rpath", path], check=True)
        changed += 1
    return changed


def findings(top: Path, elves: list[Elf], *, glibc: Version, engine_glibc: Version) -> list[str]:
    """What breaks the bundle's promises (empty: it keeps them)."""
    bad = []
    names = {e.path.name for e in elves}
    for e in elves:
        limit = engine_glibc if e.path.name in ENGINES else glibc
        if e.newest is not None and e.newest > limit:
            newer = sorted(v for v in e.glibc if v > limit)
            bad.append(f"{e.path}: needs {', '.join(fmt(v) for v in newer)} (at most {fmt(limit)})")
        if e.private:
            bad.append(f"{e.path}: needs GLIBC_PRIVATE")
        for p in e.search_paths:
            if outside(top, e, p):
                bad.append(f"{e.path}: library search path {p!r} outside the bundle")
        for lib in e.needed:
            if lib not in SYSTEM_LIBRARIES and lib not in names:
                bad.append(f"{e.path}: needs {lib}, which is neither in the bundle nor glibc's")
    return bad


def fmt(v: Version) -> str:
    return "GLIBC_" + ".".join(map(str, v))


def dotted(v: Version) -> str:
    return ".".join(map(str, v))


def floors(elves: list[Elf]) -> tuple[Version | None, Version | None]:
    """The newest glibc version the agent's files need and the engine's (None: no versioned symbol)."""
    agent = max((e.newest for e in elves if e.newest and e.path.name not in ENGINES), default=None)
    engine = max((e.newest for e in elves if e.newest and e.path.name in ENGINES), default=None)
    return agent, engine


def manifest(elves: list[Elf]) -> dict[str, str]:
    """MANIFEST.json's contents: what a host's glibc must be at least (see the module's text)."""
    agent, engine = floors(elves)
    found = [v for v in (agent, engine) if v]
    if not found:
        raise ValueError("no ELF file of the bundle names a glibc version")
    record = {"glibc": dotted(max(found))}
    if agent:
        record["agent_glibc"] = dotted(agent)
    if engine:
        record["engine_glibc"] = dotted(engine)
    return record


def parse_version(text: str) -> Version:
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)+", text):
        raise argparse.ArgumentTypeError(f"not a glibc version: {text!r}")
    return tuple(int(x) for x in text.split("."))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("top", type=Path, help="the bundle's top directory")
    ap.add_argument("--glibc", type=parse_version, required=True, help="the agent's floor, e.g. 2.31")
    ap.add_argument("--engine-glibc", type=parse_version, required=True, help="the engine's, e.g. 2.28")
    ap.add_argument("--drop-outside-search-paths", metavar="PATCHELF", help="remove those first (patchelf)")
    ap.add_argument("--manifest", action="store_true", help=f"write TOP/{MANIFEST} (the glibc floor found)")
    args = ap.parse_args(argv)
    elves = inspect(args.top)
    patchelf = args.drop_outside_search_paths
    if patchelf and drop_outside_search_paths(args.top, elves, patchelf):
        elves = inspect(args.top)
    if not any(e.path.name in ENGINES for e in elves):
        print(f"bundle_check: no {ENGINES[0]} under {args.top}", file=sys.stderr)
        return 1
    bad = findings(args.top, elves, glibc=args.glibc, engine_glibc=args.engine_glibc)
    for line in bad:
        print(f"bundle_check: {line}", file=sys.stderr)
    if bad:
        return 1
    agent, engine = floors(elves)
    if args.manifest:
        (args.top / MANIFEST).write_text(json.dumps(manifest(elves), sort_keys=True) + "\n")
    print(
        f"bundle_check: {len(elves)} ELF files; the agent needs {fmt(agent) if agent else 'no glibc'}, "
        f"the engine {fmt(engine) if engine else 'no glibc'}; no search path outside the bundle"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
