#!/usr/bin/env python3
"""Reproducible archives for `make release` (docs/release.md, ADR 0043).

    release_build.py python PROJECT_DIR OUT_DIR   a wheel and an sdist of one of this repository's
                                                 Python projects, from its committed files only
    release_build.py tree DIR OUT.tar.gz PREFIX  a directory (the built UI) as one archive
    release_build.py npm-sbom LOCK OUT.cdx.json  a CycloneDX 1.6 SBOM of the npm packages the UI is
                                                 built from (`npm ci --omit=dev`: the lock's
                                                 packages not marked dev), as cyclonedx-py writes
                                                 the Python ones (reproducible: no serial number,
                                                 no time)

Same sources + same SOURCE_DATE_EPOCH = the same bytes: every member's time is SOURCE_DATE_EPOCH,
owners are 0/root-less, modes 0644/0755, members sorted, gzip's own header carries no time or
name, and a wheel's zip entries likewise (`normalize_wheel`, `normalize_sdist`). The projects are
built by their locked build backend (the server's setuptools, the agent's, the client's and the
libraries' flit_core: pyproject's `build-backend`) through its PEP 517 hooks, in a copy of the
project's files as git has them (never an untracked or changed file)."""

import base64
import gzip
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# what the server's project (the repository's root) packs: the rest of the root is other projects
SERVER_PATHS = ("pyproject.toml", "README.md", "LICENSE", "backend", "worker")


def epoch() -> int:
    value = os.environ.get("SOURCE_DATE_EPOCH")
    if not value:
        raise SystemExit("release_build: set SOURCE_DATE_EPOCH (make release sets the commit's time)")
    return max(int(value), 315532800)  # zip cannot say a time before 1980


def _mode(mode: int, is_dir: bool) -> int:
    return 0o755 if is_dir or mode & 0o111 else 0o644


def write_tar_gz(members: list[tuple[tarfile.TarInfo, bytes | None]], out: Path, when: int) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        for info, data in sorted(members, key=lambda m: m[0].name):
            info.mtime, info.uid, info.gid, info.uname, info.gname = when, 0, 0, "", ""
            info.mode = _mode(info.mode, info.isdir())
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    with (
        out.open("wb") as raw,
        gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0, compresslevel=9) as gz,
    ):
        gz.write(buf.getvalue())


def normalize_sdist(path: Path, when: int) -> None:
    with tarfile.open(path, "r:gz") as tar:
        members = [(m, tar.extractfile(m).read() if m.isfile() else None) for m in tar.getmembers()]  # type: ignore[union-attr]
    write_tar_gz(members, path, when)


def normalize_wheel(path: Path, when: int) -> None:
    stamp = time.gmtime(when)[:6]
    with zipfile.ZipFile(path) as z:
        entries = [(i, z.read(i.filename)) for i in z.infolist()]

    # the .dist-info last, its RECORD last of all (as wheel builders write them)
    def key(e: tuple[zipfile.ZipInfo, bytes]) -> tuple[bool, bool, str]:
        name = e[0].filename
        return (".dist-info/" in name, name.endswith(".dist-info/RECORD"), name)

    tmp = path.with_suffix(".tmp")
    with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as z:
        for info, data in sorted(entries, key=key):
            new = zipfile.ZipInfo(info.filename, date_time=stamp)  # type: ignore[arg-type]
            new.external_attr = (_mode(info.external_attr >> 16, info.is_dir()) | 0o100000) << 16
            new.compress_type = zipfile.ZIP_DEFLATED
            new.create_system = 3
            z.writestr(new, data, compresslevel=9)
    tmp.replace(path)


def _tracked(paths: list[str]) -> list[str]:
    out = subprocess.run(["git", "ls-files", "-z", "--", *paths], cwd=REPO, check=True, capture_output=True)
    return [p for p in out.stdout.decode().split("\0") if p]


def build_python(project: str, out_dir: Path) -> list[Path]:
    when = epoch()
    root = (REPO / project).resolve()
    rel = root.relative_to(REPO)
    files = _tracked(list(SERVER_PATHS)) if rel == Path(".") else _tracked([str(rel)])
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="iowatt-release-") as tmp:
        src = Path(tmp) / "src"
        for f in files:
            dest = src / Path(f).relative_to(rel)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / f, dest)
            os.utime(dest, (when, when))
        dist = Path(tmp) / "dist"
        # the project's own backend (setuptools for the server, flit_core for the others); the
        # directory in the code, not in sys.argv: setuptools' hooks rewrite sys.argv
        backend = tomllib.loads((src / "pyproject.toml").read_text())["build-system"]["build-backend"]
        hooks = (
            f"import {backend} as b; d = {str(dist)!r}; "
            "s = b.build_sdist(d); w = b.build_wheel(d); print(f'\\nBUILT {s} {w}')"
        )
        env = {**os.environ, "SOURCE_DATE_EPOCH": str(when), "PYTHONHASHSEED": "0"}
        done = subprocess.run([sys.executable, "-c", hooks], cwd=src, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"release_build: {project}: {done.stderr.strip()[-2000:]}")
        sdist_name, wheel_name = done.stdout.rsplit("\nBUILT ", 1)[1].split()
        normalize_sdist(dist / sdist_name, when)
        normalize_wheel(dist / wheel_name, when)
        made = []
        for name in (sdist_name, wheel_name):
            shutil.copyfile(dist / name, out_dir / name)
            made.append(out_dir / name)
    return made


def build_tree(directory: Path, out: Path, prefix: str) -> Path:
    when = epoch()
    members: list[tuple[tarfile.TarInfo, bytes | None]] = []
    for p in sorted(directory.rglob("*")):
        info = tarfile.TarInfo(f"{prefix}/{p.relative_to(directory)}")
        if p.is_dir():
            info.type, info.mode = tarfile.DIRTYPE, 0o755
            members.append((info, None))
        elif p.is_file():
            data = p.read_bytes()
            info.size, info.mode = len(data), p.stat().st_mode & 0o777
            members.append((info, data))
    out.parent.mkdir(parents=True, exist_ok=True)
    write_tar_gz(members, out, when)
    return out


def npm_sbom(lock: Path, out: Path) -> Path:
    """Every package of package-lock.json (lockfileVersion 2/3) that `npm ci --omit=dev` installs:
    name, version, purl, the registry's SHA-512 (the lock's `integrity`) and licence; packages npm
    installs only on some platforms are scope "optional". Sorted by purl; the same lock gives the
    same bytes."""
    doc = json.loads(lock.read_text())
    root = doc["packages"][""]
    components = []
    for path, pkg in doc["packages"].items():
        if not path or pkg.get("dev") or pkg.get("link") or "version" not in pkg:
            continue
        name = pkg.get("name") or path.rsplit("node_modules/", 1)[1]
        namespace, _, short = name.rpartition("/")
        purl_name = f"{namespace.replace('@', '%40')}/{short}" if namespace else short
        c: dict[str, object] = {
            "type": "library",
            "bom-ref": f"pkg:npm/{purl_name}@{pkg['version']}",
            "name": short,
            "version": pkg["version"],
            "purl": f"pkg:npm/{purl_name}@{pkg['version']}",
            "scope": "optional" if pkg.get("optional") else "required",
        }
        if namespace:
            c["group"] = namespace
        algo, _, digest = str(pkg.get("integrity", "")).partition("-")
        if algo == "sha512" and digest:
            c["hashes"] = [{"alg": "SHA-512", "content": base64.b64decode(digest).hex()}]
        if isinstance(pkg.get("license"), str):
            c["licenses"] = [{"expression": pkg["license"]}]
        if pkg.get("resolved"):
            c["externalReferences"] = [{"type": "distribution", "url": pkg["resolved"]}]
        components.append(c)
    unique = {str(c["bom-ref"]): c for c in components}  # one version at two paths: one component
    refs = sorted(unique)
    bom = {
        "$schema": "http://cyclonedx.org/schema/bom-1.6.schema.json",
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "version": 1,
        "metadata": {
            "component": {
                "type": "application",
                "bom-ref": f"{root['name']}@{root['version']}",
                "name": root["name"],
                "version": root["version"],
                "description": f"the UI, built from {lock.name} (npm ci --omit=dev)",
            }
        },
        "components": [unique[r] for r in refs],
        "dependencies": [{"ref": f"{root['name']}@{root['version']}", "dependsOn": refs}],
    }
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(bom, indent=2, sort_keys=True) + "\n")
    return out


def main(argv: list[str]) -> None:
    if len(argv) == 3 and argv[0] == "python":
        for p in build_python(argv[1], Path(argv[2])):
            print(p)
    elif len(argv) == 4 and argv[0] == "tree":
        print(build_tree(Path(argv[1]), Path(argv[2]), argv[3]))
    elif len(argv) == 3 and argv[0] == "npm-sbom":
        print(npm_sbom(Path(argv[1]), Path(argv[2])))
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
