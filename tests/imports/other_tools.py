"""What the tests of the other tools' importers share: their samples, every importer of those
modules, and a cheap derandomized fuzz (mutations of the samples as seeds; only ImportFormatError
may escape, sniff answers a bool, parse a ParsedFile)."""

from __future__ import annotations

import math
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.imports.formats import (
    bonnie,
    crystaldiskmark,
    diskspd,
    elbencho,
    iozone,
    postmark,
    sysbench,
    vdbench,
)
from backend.imports.formats.base import Direction, Importer, ImportFormatError, ParsedFile

SAMPLES = Path(__file__).parent / "samples"
ALL: list[Importer] = [
    i
    for m in (crystaldiskmark, diskspd, elbencho, sysbench, postmark, vdbench, bonnie, iozone)
    for i in m.IMPORTERS
]
FUZZ = settings(
    max_examples=40, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
TOKENS = [b"", b"0", b"-1", b"1e999", b"1e999999999", b"NaN", b"\xff\xfe", b"\x00", b":", b"|", b"%", b"=",
          b"[", b"]", b"<", b">", b"\n", b"\r\n", b"9" * 40, b"n/a", b"N/A", b"avg_1-2", b"MiB", b"Q=", b",",
          b"<!DOCTYPE x [<!ENTITY a 'b'>]>", b'"', b"---", b"Time:"]  # fmt: skip


def sample(tool: str, name: str) -> bytes:
    return (SAMPLES / tool / name).read_bytes()


def samples(tool: str) -> list[tuple[str, bytes]]:
    return [(p.name, p.read_bytes()) for p in sorted((SAMPLES / tool).iterdir()) if p.name != "README.md"]


def importer(fmt: str) -> Importer:
    return next(i for i in ALL if i.format == fmt)


def claims(name: str, data: bytes) -> list[str]:
    """The formats (of these modules) whose sniff claims a file."""
    return [i.format for i in ALL if i.sniff(name, data[:65536])]


def finite(x: float | None) -> bool:
    return x is None or (isinstance(x, float | int) and math.isfinite(x))


def check_parsed(p: ParsedFile) -> None:
    """What every answer must be: runs of jobs, finite non-negative figures."""
    assert isinstance(p, ParsedFile) and p.runs
    for run in p.runs:
        assert run.jobs
        for job in run.jobs:
            for d in (job.read, job.write, job.trim):
                if d is None:
                    continue
                assert isinstance(d, Direction)
                for v in (d.bw_bytes, d.iops, d.io_bytes, d.total_ios, d.runtime_ms):
                    assert finite(v) and (v is None or v >= 0), (job.name, d)
            assert all(finite(v) for v in job.metrics.values()), job.metrics


def mutate(seed: bytes, cuts: list[tuple[int, int, bytes]]) -> bytes:
    out = bytearray(seed)
    for pos, length, token in cuts:
        if not out:
            break
        i = pos % len(out)
        out[i : i + length % 48] = token
    return bytes(out)


def read_all(data: bytes, importers: list[Importer]) -> None:
    for imp in importers:
        assert isinstance(imp.sniff("f", data[:65536]), bool)
        try:
            out = imp.parse("f", data)
        except ImportFormatError as e:
            assert str(e).startswith(imp.format)
            continue
        check_parsed(out)


def fuzz_test(tool: str, fmts: list[str]):  # type: ignore[no-untyped-def]
    """A hypothesis test: the tool's samples mutated, truncated or replaced by bytes, read by its
    importers."""
    seeds = [d for _, d in samples(tool)]
    imps = [importer(f) for f in fmts]

    @FUZZ
    @given(
        st.sampled_from(seeds),
        st.lists(
            st.tuples(st.integers(0, 1 << 20), st.integers(0, 200), st.sampled_from(TOKENS)), max_size=6
        ),
        st.one_of(st.none(), st.integers(0, 1 << 20)),
        st.binary(max_size=64),
    )
    def run(seed: bytes, cuts: list[tuple[int, int, bytes]], cut: int | None, noise: bytes) -> None:
        data = mutate(seed, cuts)
        if cut is not None:
            data = data[: cut % (len(data) + 1)]
        read_all(data, imps)
        read_all(noise, imps)

    return run
