"""The NVMe purge's choices and nvme-cli's output read (iowatt_agent.nvme, pts.purge_plans, issue 29):
Sanitize by the action SANICAP offers (crypto erase, then block erase, then overwrite), its status
log polled to the end, Format NVM when there is no sanitize, and neither when it would erase a
namespace the host did not list; the fall-back chain with nvme-cli and blkdiscard as programs on
PATH that answer as the real ones do. The id-ctrl output is QEMU 7.2's as nvme-cli 2.3 printed it
in tests/agent/test_nvme_guest.py's guest; the sanitize logs are nvme-cli's documented shape (its
JSON printer: `{"<dev>": {"sprog", "sstat": {"status": "(N) ..."}, "cdw10_info", ...}}`). Both
parsers are fuzzed: outside text is a result or NvmeOutputError, nothing else."""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path

import hypothesis.strategies as st
import pytest
from hypothesis import HealthCheck, given, settings
from iowatt_agent import nvme, pts

DATA = Path(__file__).parent / "data" / "nvme"
ID_CTRL = (DATA / "qemu-7.2-id-ctrl.json").read_text()
NEVER = 0xFFFFFFFF  # nvme-cli prints the log's "no time reported" as is


def id_ctrl(**fields: int) -> str:
    doc = json.loads(ID_CTRL)
    doc.update(fields)
    return json.dumps(doc, indent=2)


def sanitize_log(
    status: int, sprog: int = 0xFFFF, cdw10: int = 0, passes: int = 0, dev: str = "nvme0", erased: int = 0
) -> str:
    texts = {
        0: "NVM Subsystem has never been sanitized.",
        1: "The most recent sanitize operation completed",
        2: "A sanitize operation is currently in progress.",
        3: "The most recent sanitize operation failed.",
    }
    doc = {
        "sprog": sprog,
        "sstat": {
            "global_erased": erased,
            "no_cmplted_passes": passes,
            "status": f"({status}) {texts.get(status, '')}",
        },
        "cdw10_info": cdw10,
        **{k: NEVER for k in ("time_over_write", "time_block_erase", "time_crypto_erase")},
    }
    return json.dumps({dev: doc}, indent=2)


def test_qemus_controller_offers_format_and_no_sanitize() -> None:
    ctrl = nvme.parse_id_ctrl(ID_CTRL)
    assert (ctrl.sanicap, ctrl.oacs, ctrl.fna, ctrl.cmic) == (0, 266, 0, 0)
    assert ctrl.format_nvm and not ctrl.sanitize_actions and not ctrl.format_erases_every_namespace
    actions = nvme.parse_id_ctrl(id_ctrl(sanicap=7)).sanitize_actions
    assert [a.name for a in actions] == ["crypto", "block", "overwrite"]
    assert nvme.parse_id_ctrl(id_ctrl(fna=2)).format_erases_every_namespace
    # nvme-cli 1.x printed a line before the JSON on some paths; numbers may come as strings
    assert nvme.parse_id_ctrl("warning: x\n" + id_ctrl(sanicap="3")).sanicap == 3  # type: ignore[arg-type]
    for bad, what in (
        ("", "no JSON"),
        ("[1]", "no JSON object"),
        ('{"oacs": 2, "fna": 0, "cmic": 0}', "sanicap"),
        (id_ctrl(sanicap=-1), "32-bit"),
        (id_ctrl(oacs=True), "32-bit"),
        ("{", "not JSON"),
    ):
        with pytest.raises(nvme.NvmeOutputError, match=what):
            nvme.parse_id_ctrl(bad)


def test_the_sanitize_status_log_as_nvme_cli_prints_it() -> None:
    st_ = nvme.parse_sanitize_log(sanitize_log(2, sprog=16384, cdw10=0x0C))
    assert st_.in_progress and st_.progress == 0.25 and st_.sanact == 4
    done = nvme.parse_sanitize_log(sanitize_log(1, cdw10=0x0C))
    assert done.succeeded and done.sanact == 4 and not done.in_progress
    assert nvme.parse_sanitize_log(sanitize_log(4, cdw10=2)).succeeded  # done, no-deallocate asked
    assert nvme.parse_sanitize_log(sanitize_log(3, cdw10=0x0A)).failed
    assert nvme.parse_sanitize_log(sanitize_log(1, cdw10=3, passes=1)).passes == 1
    # a version printed the status under its text as the key; older ones SSTAT as a number
    odd = json.loads(sanitize_log(2, sprog=32768))
    odd["nvme0"]["sstat"] = {"A sanitize operation is currently in progress.": "(2) A sanitize ..."}
    assert nvme.parse_sanitize_log(json.dumps(odd)).in_progress
    flat = {"sprog": 65535, "sstat": 1 | 3 << 3, "cdw10_info": 4}
    assert nvme.parse_sanitize_log(json.dumps(flat)) == nvme.SanitizeStatus(1, 65535 / 65536, 4, 3, False)
    # SSTAT bit 8, Global Data Erased: printed as "global_erased", or in the plain number
    assert nvme.parse_sanitize_log(sanitize_log(1, cdw10=2, erased=1)).global_erased is True
    assert nvme.parse_sanitize_log(sanitize_log(1, cdw10=2)).global_erased is False
    assert nvme.parse_sanitize_log(json.dumps(flat | {"sstat": 1 | 1 << 8})).global_erased is True
    unsaid = json.loads(sanitize_log(1))
    del unsaid["nvme0"]["sstat"]["global_erased"]
    assert nvme.parse_sanitize_log(json.dumps(unsaid)).global_erased is None
    for bad, what in (
        ('{"a": {}, "b": {}}', "sprog"),
        ('{"sprog": 65536, "sstat": 1}', "out of range"),
        ('{"sprog": 1}', "sstat"),
        ('{"sprog": 1, "sstat": {"status": "done"}}', "no status"),
        ('{"sprog": 1, "sstat": [1]}', "neither"),
    ):
        with pytest.raises(nvme.NvmeOutputError, match=what):
            nvme.parse_sanitize_log(bad)


@pytest.fixture
def nvme_host(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """nvme-cli and blkdiscard installed, the device able to discard; the names of the
    controller's other namespaces are the list returned (empty: the device is its only one)."""
    others: list[str] = []
    monkeypatch.setattr(pts.shutil, "which", lambda name: f"/usr/sbin/{name}")
    monkeypatch.setattr(pts, "discard_supported", lambda real: True)
    monkeypatch.setattr(pts, "nvme_namespaces", lambda real: others)
    return others


def test_sanitize_by_the_strongest_action_then_format_then_discard(nvme_host: list[str]) -> None:
    def plans(**fields: int) -> list[pts.Plan]:
        return pts.purge_plans("auto", "/dev/nvme0n1", run=lambda argv: id_ctrl(**fields))

    crypto = plans(sanicap=0b111)
    assert [p[0] for p in crypto] == ["nvme-sanitize-crypto", "nvme-format", "blkdiscard"]
    assert crypto[0][1] == [["nvme", "sanitize", "/dev/nvme0n1", "--sanact=4", "--ause"]]
    assert "crypto erase (the controller offers: crypto erase, block erase, overwrite)" in crypto[0][2]
    assert plans(sanicap=0b110)[0][1] == [["nvme", "sanitize", "/dev/nvme0n1", "--sanact=2", "--ause"]]
    overwrite = plans(sanicap=0b100)[0]
    assert overwrite[0] == "nvme-sanitize-overwrite" and overwrite[1][0][3:] == [
        "--sanact=3",
        "--ause",
        "--owpass=1",
        "--ovrpat=0",
    ]
    # QEMU's controller: no sanitize, a format; the discard after it says why there was no sanitize
    qemu = pts.purge_plans("auto", "/dev/nvme0n1", run=lambda argv: ID_CTRL)
    assert [p[0] for p in qemu] == ["nvme-format", "blkdiscard"]
    assert qemu[0][2] == "NVMe Format, user data erase; no sanitize: the controller offers none (SANICAP 0)"
    no_format = plans(oacs=0)
    assert [p[0] for p in no_format] == ["blkdiscard"] and no_format[0][2] == (
        "every block discarded (TRIM/UNMAP/deallocate); no sanitize: the controller offers none (SANICAP 0); "
        "no format: the controller has no Format NVM (OACS bit 1)"
    )
    # nvme-cli's output unreadable: format as before, said
    unread = pts.purge_plans("auto", "/dev/nvme0n1", run=lambda argv: "Segmentation fault")
    assert [p[0] for p in unread] == ["nvme-format", "blkdiscard"] and "unreadable" in unread[0][2]
    crypto_only = id_ctrl(sanicap=1)
    assert pts.purge_plan("auto", "/dev/nvme0n1", run=lambda argv: crypto_only)[0] == "nvme-sanitize-crypto"
    assert pts.purge_plans("blkdiscard", "/dev/nvme0n1", run=lambda argv: crypto_only)[0][0] == "blkdiscard"
    assert pts.purge_plans("none", "/dev/nvme0n1") == [("none", [], "no purge asked")]


def test_no_sanitize_or_format_reaches_a_namespace_the_host_did_not_list(nvme_host: list[str]) -> None:
    """A sanitize acts on the whole subsystem; a format on every namespace when FNA says so."""
    nvme_host.append("nvme0n2")
    shared = pts.purge_plans("auto", "/dev/nvme0n1", run=lambda argv: id_ctrl(sanicap=1))
    assert [p[0] for p in shared] == ["nvme-format", "blkdiscard"]  # FNA 0: the format is the namespace's
    why = "no sanitize: it erases every namespace and nvme0n1 shares its controller with nvme0n2"
    assert why in shared[0][2] and "nvme0n2" not in shared[1][2]
    for fna in (1, 2):
        plans = pts.purge_plans("auto", "/dev/nvme0n1", run=lambda argv, f=fna: id_ctrl(sanicap=1, fna=f))
        assert [p[0] for p in plans] == ["blkdiscard"]
        assert "no format: it may erase every namespace" in plans[0][2]
    unread = pts.purge_plans("auto", "/dev/nvme0n1", run=lambda argv: "")
    assert [p[0] for p in unread] == ["blkdiscard"]  # what FNA says is unknown: no format
    nvme_host.clear()  # a dual-port drive: the subsystem may have namespaces of another host
    dual = pts.purge_plans("auto", "/dev/nvme0n1", run=lambda argv: id_ctrl(sanicap=1, cmic=2))
    assert [p[0] for p in dual] == ["nvme-format", "blkdiscard"]
    assert "no sanitize: it erases the whole subsystem, which may have other controllers (CMIC)" in dual[0][2]
    assert pts.purge_plan("auto", "/dev/nvme0n1", run=lambda argv: id_ctrl(sanicap=1, cmic=1))[0] == (
        "nvme-sanitize-crypto"  # CMIC bit 0 alone: more than one port, one controller
    )


def test_nvme_namespaces_are_read_from_sysfs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("nvme0n1", "nvme0n2", "nvme0n1p1", "nvme1n1", "nvme10n1", "sda"):
        (tmp_path / name).mkdir()
    monkeypatch.setattr(pts, "SYS_BLOCK", tmp_path)
    assert pts.nvme_namespaces("/dev/nvme0n1") == ["nvme0n2"]
    assert pts.nvme_namespaces("/dev/nvme1n1") == []
    assert pts.nvme_namespaces("/dev/sda") == []


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.slept: list[float] = []

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


def test_the_sanitize_is_polled_to_its_end_with_progress() -> None:
    logs = iter([sanitize_log(2, 0, 12), sanitize_log(2, 32768, 12), sanitize_log(1, cdw10=12)])
    clock, seen = Clock(), list[float]()
    why = nvme_wait(lambda: next(logs), clock, seen)
    assert why is None and seen == [0.0, 0.5] and clock.slept == [2.0, 2.0]

    def answers(*texts: str) -> str | None:
        it = iter(texts)
        return nvme_wait(lambda: next(it), Clock(), [])

    assert answers(sanitize_log(2, 0, 12), sanitize_log(3, cdw10=12)) == (
        "the sanitize status log says the operation failed"
    )
    assert "unreadable" in (answers("NVMe status: Invalid Field in Command") or "")
    assert "last action is 2, not 4" in (answers(sanitize_log(1, cdw10=2)) or "")
    assert "status 0" in (answers(sanitize_log(0)) or "")
    forever = Clock()
    why = nvme_wait(lambda: sanitize_log(2, 6554, 12), forever, [], timeout_s=10)
    assert why == "not complete after 10 s (10 %)" and forever.now == 10.0


def test_a_status_log_still_as_before_the_command_is_not_this_sanitizes() -> None:
    """Right after `nvme sanitize` returns, the log may still read as before the command: an
    earlier sanitize's completion (the same action: SCDW10 alike) or "never sanitized". That is not
    this sanitize's end: it is read again until the log moves, for up to SANITIZE_START_S."""
    earlier = sanitize_log(1, cdw10=12)  # completed, data written since (GDE 0)
    before = nvme.parse_sanitize_log(earlier)
    logs = iter([earlier, earlier, sanitize_log(2, 0, 12), sanitize_log(1, cdw10=12, erased=1)])
    clock, seen = Clock(), list[float]()
    assert nvme_wait(lambda: next(logs), clock, seen, before=before) is None
    assert seen == [0.0] and clock.slept == [2.0, 2.0, 2.0]  # the old code took the first read
    # never sanitized, then done without its "in progress" being seen: the log moved, it is this one
    never = sanitize_log(0, sprog=0)
    logs = iter([never, sanitize_log(1, cdw10=12, erased=1)])
    assert nvme_wait(lambda: next(logs), Clock(), [], before=nvme.parse_sanitize_log(never)) is None
    # an earlier failure still shown, then this sanitize's progress and end (the old code: "failed")
    failed = sanitize_log(3, cdw10=12)
    logs = iter([failed, sanitize_log(2, 100, 12), sanitize_log(1, cdw10=12)])
    assert nvme_wait(lambda: next(logs), Clock(), [], before=nvme.parse_sanitize_log(failed)) is None
    # the log never moves: the sanitize did not start (so the purge falls back to the format)
    stuck = Clock()
    why = nvme_wait(lambda: earlier, stuck, [], before=before)
    assert why == (
        "the sanitize status log still reads as before the command (status 1) after 30 s: "
        "the sanitize did not start"
    )
    assert stuck.now == 30.0
    # ... unless it says nothing was written since the last completed sanitize (GDE): erased either way
    clean, waited = sanitize_log(1, cdw10=12, erased=1), Clock()
    assert nvme_wait(lambda: clean, waited, [], before=nvme.parse_sanitize_log(clean)) is None
    assert waited.now == 30.0
    # a moved log after it was seen in progress is taken even if it equals the one before
    logs = iter([sanitize_log(2, 0, 12), earlier])
    assert nvme_wait(lambda: next(logs), Clock(), [], before=before) is None


def nvme_wait(
    read: Callable[[], str],
    clock: Clock,
    seen: list[float],
    timeout_s: float = 3600,
    before: nvme.SanitizeStatus | None = None,
) -> str | None:
    return pts.wait_sanitize(
        read,
        4,
        before=before,
        timeout_s=timeout_s,
        sleep=clock.sleep,
        clock=lambda: clock.now,
        report=seen.append,
    )


def _program(bin_dir: Path, name: str, body: str) -> None:
    path = bin_dir / name
    path.write_text(f'#!/bin/sh\necho "$0 $*" >> {bin_dir}/calls\n{body}\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_a_failed_sanitize_falls_back_to_format_then_to_discard(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The purge's commands run as programs: nvme-cli and blkdiscard stand-ins on PATH that answer
    what the real ones print (the sanitize starts, its log says it failed; the format is refused)."""
    bins = tmp_path / "bin"
    bins.mkdir()
    (bins / "id-ctrl.json").write_text(id_ctrl(sanicap=1))
    (bins / "before.json").write_text(sanitize_log(0, sprog=0, dev="nvme0n1"))
    (bins / "failed.json").write_text(sanitize_log(3, cdw10=12, dev="nvme0n1"))
    _program(  # the status log reads before.json until a sanitize is sent, then failed.json
        bins,
        "nvme",
        f'case "$1" in\n id-ctrl) cat {bins}/id-ctrl.json ;;\n'
        f" sanitize-log) if [ -e {bins}/sent ]; then cat {bins}/failed.json;"
        f" else cat {bins}/before.json; fi ;;\n sanitize) touch {bins}/sent ;;\n"
        ' format) echo "NVMe status: Invalid Format(0x410a)" >&2; exit 1 ;;\nesac',
    )
    _program(bins, "blkdiscard", "exit 0")
    monkeypatch.setenv("PATH", f"{bins}:{os.environ['PATH']}")
    monkeypatch.setattr(pts, "discard_supported", lambda real: True)
    monkeypatch.setattr(pts, "nvme_namespaces", lambda real: [])
    record = pts.purge("auto", "/dev/nvme0n1")
    assert record["method"] == "blkdiscard" and record["commands"] == ["blkdiscard /dev/nvme0n1"]
    assert record["note"].startswith(
        "nvme-sanitize-crypto failed (the sanitize status log says the operation failed); "
        "nvme-format failed (NVMe status: Invalid Format(0x410a)); every block discarded"
    )
    calls = [line.split(" ", 1)[1] for line in (bins / "calls").read_text().splitlines()]
    assert calls == [
        "id-ctrl /dev/nvme0n1 -o json",
        "sanitize-log /dev/nvme0n1 -o json",  # what the log said before
        "sanitize /dev/nvme0n1 --sanact=4 --ause",
        "sanitize-log /dev/nvme0n1 -o json",
        "sanitize /dev/nvme0n1 --sanact=1",  # the failure mode left, so the format may run
        "format /dev/nvme0n1 --ses=1 --force --timeout=21600000",
        "/dev/nvme0n1",
    ]
    (bins / "failed.json").write_text(sanitize_log(1, cdw10=12, dev="nvme0n1"))
    (bins / "sent").unlink()
    done = pts.purge("auto", "/dev/nvme0n1")
    assert done["method"] == "nvme-sanitize-crypto"
    assert done["commands"] == ["nvme sanitize /dev/nvme0n1 --sanact=4 --ause"]
    _program(
        bins, "blkdiscard", "echo 'blkdiscard: BLKDISCARD ioctl failed: Operation not supported' >&2\nexit 1"
    )
    (bins / "failed.json").write_text(sanitize_log(3, cdw10=12, dev="nvme0n1"))
    (bins / "sent").unlink()
    with pytest.raises(
        pts.PtsFailed, match="^purge failed: nvme-sanitize-crypto failed .*; blkdiscard failed"
    ):
        pts.purge("auto", "/dev/nvme0n1")
    # a sanitize already running (the log before says so): none is sent, the purge goes on down
    _program(bins, "blkdiscard", "exit 0")
    (bins / "before.json").write_text(sanitize_log(2, 4096, 12, dev="nvme0n1"))
    (bins / "sent").unlink()
    (bins / "calls").unlink()
    busy = pts.purge("auto", "/dev/nvme0n1")
    assert busy["method"] == "blkdiscard" and busy["note"].startswith(
        "nvme-sanitize-crypto failed (a sanitize is already in progress (the sanitize status log)); "
    )
    assert not any(line.split()[1] == "sanitize" for line in (bins / "calls").read_text().splitlines())


# --- fuzzing: nvme-cli's output is outside text --------------------------------------------------------

SEEDS = [
    ID_CTRL,
    sanitize_log(2, 100, 12),
    sanitize_log(1, cdw10=4, erased=1),
    json.dumps({"sprog": 1, "sstat": 9 | 1 << 8}),
]
TOKENS = [
    '"sanicap":',
    '"sprog":',
    '"sstat":',
    '"status":"(',
    '"global_erased":',
    "{",
    "}",
    "[",
    "]",
    ",",
    '"',
    "-1",
    "1e309",
    "4294967296",
    "\u00b2",
    "null",
    "true",
    "NaN",
    "\x00",
    "(2)",
]
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _parse_all(text: str) -> None:
    for parse in (nvme.parse_id_ctrl, nvme.parse_sanitize_log):
        with contextlib.suppress(nvme.NvmeOutputError):
            parse(text)


def _mutate(seed: str, cuts: list[tuple[int, int, str]]) -> str:
    for at, drop, token in cuts:
        at %= len(seed) + 1
        seed = seed[:at] + token + seed[at + drop :]
    return seed


@FUZZ
@given(
    st.sampled_from(range(len(SEEDS))),
    st.lists(st.tuples(st.integers(0, 10**5), st.integers(0, 40), st.sampled_from(TOKENS)), max_size=8),
)
def test_mutated_outputs_parse_or_are_refused(seed: int, cuts: list[tuple[int, int, str]]) -> None:
    _parse_all(_mutate(SEEDS[seed], cuts))


KEYS = [
    "sanicap",
    "oacs",
    "fna",
    "cmic",
    "sprog",
    "sstat",
    "status",
    "cdw10_info",
    "no_cmplted_passes",
    "global_erased",
    "nvme0",
    "x",
]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=6),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(JSON)
def test_any_json_document_parses_or_is_refused(doc: object) -> None:
    _parse_all(json.dumps(doc))


@FUZZ
@given(st.text(max_size=300))
def test_arbitrary_text_parses_or_is_refused(text: str) -> None:
    _parse_all(text)
