"""Fuzz the fio importers (issue 26): mutations of fio's own output (the samples as seeds) and
arbitrary bytes never raise anything but ImportFormatError, whichever importer reads them, and
what they answer is a ParsedFile. Derandomized and few examples, so `make test` stays cheap."""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from backend.imports.formats import fio_json, fio_normal, fio_terse
from backend.imports.formats.base import Importer, ImportFormatError, ParsedFile

SAMPLES = Path(__file__).parent / "samples" / "fio"
SEEDS = [p.read_bytes() for p in sorted(SAMPLES.iterdir()) if p.name.startswith("fio-")]
IMPORTERS: list[Importer] = [fio_json.FioJson(), fio_terse.FioTerse(), fio_normal.FioNormal()]
FUZZ = settings(
    max_examples=40, derandomize=True, deadline=None, database=None, suppress_health_check=list(HealthCheck)
)
TOKENS = [b"", b"0", b"-1", b"1e999", b"NaN", b"\xff", b"\x00", b";", b"%", b"=", b"[", b"]", b"{", b"}",
          b'"', b"\n", b"99.99th=[", b"k", b"msec", b"null", b"true", b"9" * 40]  # fmt: skip


def _mutate(seed: bytes, cuts: list[tuple[int, int, bytes]]) -> bytes:
    out = bytearray(seed)
    for pos, length, token in cuts:
        if not out:
            break
        i = pos % len(out)
        out[i : i + length % 64] = token
    return bytes(out)


def _read_all(data: bytes) -> None:
    for imp in IMPORTERS:
        try:
            assert isinstance(imp.sniff("f", data[:65536]), bool)
            out = imp.parse("f", data)
        except ImportFormatError:
            continue
        assert isinstance(out, ParsedFile) and out.runs


@FUZZ
@given(
    st.sampled_from(range(len(SEEDS))),
    st.lists(st.tuples(st.integers(0, 10**7), st.integers(0, 200), st.sampled_from(TOKENS)), max_size=6),
)
def test_mutated_samples_raise_only_format_errors(seed: int, cuts: list[tuple[int, int, bytes]]) -> None:
    _read_all(_mutate(SEEDS[seed], cuts))


@FUZZ
@given(st.sampled_from(range(len(SEEDS))), st.integers(0, 10**7))
def test_truncated_samples_raise_only_format_errors(seed: int, at: int) -> None:
    s = SEEDS[seed]
    _read_all(s[: at % (len(s) + 1)])


@settings(max_examples=30, derandomize=True, deadline=None, database=None)
@given(st.binary(max_size=2000))
def test_arbitrary_bytes_raise_only_format_errors(data: bytes) -> None:
    _read_all(data)


@pytest.mark.parametrize(
    "text",
    [
        b'{"fio version": "fio-3.33", "jobs": [1, 2]}',
        b'{"fio version": "fio-3.33", "jobs": [{"jobname": "a", "read": {"io_bytes": "x", "bw_bytes": []}}]}',
        b'{"fio version": "fio-3.33", "jobs": [{"read": {"total_ios": 1e400, "bw_bytes": 1, '
        b'"io_bytes": -5}}]}',
        b'{"fio version": 3, "jobs": {}}',
        b"[" * 100_000,
        b'{"jobs": [' + b"[" * 100_000,
        b"3;fio-3.33;" + b";" * 300,
        b"2;j;0;0;" + b"1e308;" * 200,
        b"j: (groupid=0, jobs=1): err= 0: pid=1\n  read: IOPS=1k, BW=1ZiB/s (1MB/s)(1KiB/1msec)\n",
    ],
)
def test_hostile_shapes(text: bytes) -> None:
    _read_all(text)
