"""A backup archive is outside input to `iowatt-server restore`: it is unpacked by backend/ops/backup.py
itself (plain relative files only, 0600), on every Python 3.11 (tarfile's `filter="data"` exists
from 3.11.4; Debian 12's 3.11.2 has none). Hostile archives are refused with a BackupError naming
the member before anything is written, and fuzzed names never write outside the directory or raise
anything else."""

import contextlib
import io
import os
import stat
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.ops.backup import BackupError, _unpack


def _tar(path: Path, members: list[tarfile.TarInfo], data: bytes = b"x") -> Path:
    with tarfile.open(path, "w") as tar:
        for info in members:
            if info.isfile():
                info.size = len(data)
                tar.addfile(info, io.BytesIO(data))
            else:
                tar.addfile(info)
    return path


def _file(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.mode = 0o644
    return info


def _files_under(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_plain_files_are_written_0600_in_directories_0700(tmp_path: Path) -> None:
    names = ["manifest.json", "database.dump", "secrets/server.env", "tls-ca/certs/root.crt"]
    archive = _tar(tmp_path / "a.tar", [_file(n) for n in names], b"content")
    into = tmp_path / "into"
    into.mkdir(mode=0o700)
    _unpack(archive, into)
    assert _files_under(into) == sorted(names)
    for n in names:
        p = into / n
        assert p.read_bytes() == b"content"
        assert stat.S_IMODE(p.stat().st_mode) == 0o600
    assert stat.S_IMODE((into / "tls-ca" / "certs").stat().st_mode) == 0o700


def _link(name: str, target: str, kind: bytes) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, target
    return info


def _dir(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    return info


def _device(name: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.devmajor, info.devminor = tarfile.CHRTYPE, 1, 3
    return info


@pytest.mark.parametrize(
    ("members", "named"),
    [
        ([_file("manifest.json"), _file("../escaped")], "../escaped"),
        ([_file("/etc/escaped")], "/etc/escaped"),
        ([_file("secrets/../../escaped")], "secrets/../../escaped"),
        ([_file("a//b")], "a//b"),
        ([_file("./manifest.json")], "./manifest.json"),
        ([_link("secrets", "/etc", tarfile.SYMTYPE), _file("secrets/passwd")], "secrets"),
        ([_link("dump", "/etc/shadow", tarfile.LNKTYPE)], "dump"),
        ([_dir("tls-ca")], "tls-ca"),
        ([_device("null")], "null"),
        ([_file("manifest.json"), _file("manifest.json")], "manifest.json"),
        ([_file("secrets"), _file("secrets/server.env")], "secrets/server.env"),
    ],
    ids=[
        "dotdot",
        "absolute",
        "inner-dotdot",
        "empty-part",
        "dot",
        "symlink",
        "hardlink",
        "dir",
        "device",
        "twice",
        "file-as-dir",
    ],
)
def test_a_hostile_member_is_refused_by_name_before_anything_is_written(
    tmp_path: Path, members: list[tarfile.TarInfo], named: str
) -> None:
    archive = _tar(tmp_path / "a.tar", members)
    into = tmp_path / "work" / "into"
    into.mkdir(parents=True, mode=0o700)
    with pytest.raises(BackupError, match="refusing member") as e:
        _unpack(archive, into)
    assert repr(named) in str(e.value)
    assert list((tmp_path / "work").rglob("*")) == [into]  # nothing written, inside or beside
    assert not (tmp_path / "escaped").exists()


def test_a_file_that_is_not_a_tar_is_a_backup_error(tmp_path: Path) -> None:
    junk = tmp_path / "junk.tar"
    junk.write_bytes(os.urandom(700))
    with pytest.raises(BackupError, match="not a readable backup archive"):
        _unpack(junk, tmp_path)
    truncated = _tar(tmp_path / "t.tar", [_file("database.dump")], b"y" * 5000)
    truncated.write_bytes(truncated.read_bytes()[:1200])
    (tmp_path / "t").mkdir()
    with pytest.raises(BackupError):
        _unpack(truncated, tmp_path / "t")


_PART = st.sampled_from(["a", "b", "..", ".", "", "secrets", "x y", "é", "\\", "~"])


@settings(
    max_examples=60, deadline=None, derandomize=True, database=None, suppress_health_check=list(HealthCheck)
)
@given(
    names=st.lists(
        st.tuples(st.booleans(), st.lists(_PART, min_size=1, max_size=4)).map(
            lambda t: ("/" if t[0] else "") + "/".join(t[1])
        ),
        min_size=1,
        max_size=4,
    )
)
def test_fuzzed_member_names_stay_inside_or_are_refused(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    base = tmp_path_factory.mktemp("fuzz")
    archive = _tar(base / "a.tar", [_file(n) for n in names])
    into = base / "w" / "into"
    into.mkdir(parents=True, mode=0o700)
    with contextlib.suppress(BackupError):
        _unpack(archive, into)
    written = [p for p in (base / "w").rglob("*") if p.is_file()]
    assert all(into in p.parents for p in written), written
