"""Writes a zip archive again with its members in name order: build.sh runs it on PyInstaller's
`_internal/base_library.zip` when SOURCE_DATE_EPOCH is set (`make release`), so that two builds of
one commit give the same bundle bytes (docs/release.md). PyInstaller writes that archive's members
in its module graph's order, which changes from one build to the next; what each member holds and
its time are already fixed (hash-based .pyc files, the zip format's 1980 time).

    sort_zip.py ZIP"""

import os
import shutil
import sys
import zipfile
from pathlib import Path


def sort_members(path: Path) -> None:
    """The same members, each with its own header (time, compression, attributes), by name."""
    tmp = path.with_name(f".{path.name}.sorting")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w") as out:
        for info in sorted(src.infolist(), key=lambda i: i.filename):
            out.writestr(info, src.read(info))
    shutil.copymode(path, tmp)
    os.replace(tmp, path)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: sort_zip.py ZIP")
    sort_members(Path(sys.argv[1]))
