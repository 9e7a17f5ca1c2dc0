"""`iowatt-engine --limits` (agent/engine/README.md § Limits): the engine states its limits, defaults
and choice lists, and the server states none of its own where the engine is the one that enforces
them. `server_view()` reads what the server's workload schemas accept (their JSON schema, their
defaults, their literal choices); `disagreements()` compares it with the engine's document. A 33-entry
bssplit (the server once said 64, the engine takes 32) is refused by both."""

from __future__ import annotations

import json
import subprocess
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from backend.workload import engine_limits
from backend.workload.kinds import base, block, heap_btree, postmark, vdbench

# rw values the engine takes that the server's block workloads do not offer (src/patterns.c: trims)
ENGINE_ONLY_RW_ORDER = ["trim", "randtrim", "trimwrite", "randtrimwrite"]
ENGINE_ONLY_RW = set(ENGINE_ONLY_RW_ORDER)


def _limits(engine: Path) -> dict[str, Any]:
    proc = subprocess.run([str(engine), "--limits"], capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0, proc.stderr
    doc: dict[str, Any] = json.loads(proc.stdout)
    return doc


def _props(model: type[Any]) -> dict[str, dict[str, Any]]:
    props: dict[str, dict[str, Any]] = model.model_json_schema()["properties"]
    for p in props.values():  # Optional fields: their bounds sit in the non-null branch
        for alt in p.get("anyOf", []):
            if alt.get("type") != "null":
                p.update({k: v for k, v in alt.items() if k in ("maximum", "minimum", "exclusiveMinimum")})
    return props


# JobSpec field -> the engine option it becomes (engine_options()), for bounds
_BLOCK_BOUNDS = {
    "rwmixread": "rwmixread",
    "numjobs": "numjobs",
    "iodepth": "iodepth",
    "loops": "loops",
    "bs_bytes": "bs",
    "size_bytes": "size",
    "io_size_bytes": "io_size",
}


def server_view() -> dict[str, Any]:
    """What the server accepts and assumes, read from its schemas (never from engine_limits)."""
    job = _props(block.JobSpec)
    pm = _props(postmark.PostmarkSpec)
    hb = _props(heap_btree.HeapBtreeSpec)
    vd = _props(vdbench.VdbenchSpec)
    minimal = block.JobSpec(name="j", rw="read", size_bytes=1 << 20, bs_bytes=4096)
    return {
        "max_bssplit": block.MAX_BSSPLIT,
        "block_bounds": {
            opt: (
                job[field].get("minimum", job[field].get("exclusiveMinimum", -1) + 1),
                job[field].get("maximum"),
            )
            for field, opt in _BLOCK_BOUNDS.items()
        },
        # the engine options a default job is given, or leaves to the engine's default
        "block_defaults": {
            "rwmixread": str(minimal.rwmixread),
            "numjobs": str(minimal.numjobs),
            "iodepth": str(minimal.iodepth),
            "ioengine": minimal.ioengine,
            "loops": str(minimal.loops),
            "random_distribution": minimal.random_distribution,
            "invalidate": "1" if minimal.invalidate else "0",
        },
        "rendered_options": set(minimal.engine_options())
        | set(
            block.JobSpec(
                name="j",
                rw="randrw",
                size_bytes=1 << 20,
                bs_bytes=4096,
                runtime_s=1,
                time_based=True,
                ramp_time_s=1,
                io_size_bytes=8192,
                end_fsync=True,
                bssplit="4k/100",
                rate_iops=10,
                random_distribution="zipf:1.2",
                fsync_every=2,
                sync=True,
                randseed=1,
                loops=2,
            ).engine_options()
        ),
        "rw": set(typing.get_args(block.Rw)),
        "ioengine": set(typing.get_args(block.IoEngine)),
        "fadvise_hint": set(block._FADVISE.values()),
        "postmark": {
            "number": (pm["number"]["default"], pm["number"]["maximum"]),
            "size_low": (pm["size_low_bytes"]["default"], pm["size_low_bytes"]["maximum"]),
            "size_high": (pm["size_high_bytes"]["default"], pm["size_high_bytes"]["maximum"]),
            "read": (pm["read_block_bytes"]["default"], pm["read_block_bytes"]["maximum"]),
            "write": (pm["write_block_bytes"]["default"], pm["write_block_bytes"]["maximum"]),
            "transactions": (pm["transactions"]["default"], pm["transactions"]["maximum"]),
            "seed": (pm["seed"]["default"], pm["seed"]["maximum"]),
            "bias_read": (pm["bias_read"]["default"], pm["bias_read"]["maximum"]),
            "bias_create": (pm["bias_create"]["default"], pm["bias_create"]["maximum"]),
            "subdirectories": (None, pm["subdirectories"]["maximum"]),
            "buffering": (pm["buffering"]["default"], None),
        },
        "heap_btree": {
            "records_max": hb["records"]["maximum"],
            "queries_max": hb["queries"]["maximum"],
            "fractions_max": hb["cache_fractions"]["maxItems"],
            "fractions_default": heap_btree.HeapBtreeSpec(records=1).cache_fractions,
            "randseed_default": hb["randseed"]["default"],
            "structure": set(typing.get_args(heap_btree.HeapBtreeSpec.model_fields["structure"].annotation)),
            "structure_default": hb["structure"]["default"],
        },
        "vdbench": {"elapsed_max": vd["elapsed_s"]["maximum"], "scale_max": vd["scale"]["maximum"]},
        "scale_max": base.SCALE_MAX,
    }


def disagreements(server: dict[str, Any], engine: dict[str, Any]) -> list[str]:
    """Every place the server accepts what the engine refuses, or assumes another default or
    choice; [] when they agree."""
    out: list[str] = []
    blk, opts = engine["block"], engine["block"]["options"]
    if server["max_bssplit"] != blk["max_bssplit"]:
        out.append(f"max_bssplit: server {server['max_bssplit']}, engine {blk['max_bssplit']}")
    for opt, (lo, hi) in server["block_bounds"].items():
        e = opts[opt]
        if lo < e["min"] or (e["max"] is not None and (hi is None or hi > e["max"])):
            out.append(f"{opt}: server [{lo}, {hi}], engine [{e['min']}, {e['max']}]")
    for opt, value in server["block_defaults"].items():
        if value != opts[opt]["default"]:
            out.append(f"{opt} default: server {value!r}, engine {opts[opt]['default']!r}")
    for opt in server["rendered_options"] - set(opts):
        out.append(f"{opt}: the server sends an option the engine does not have")
    # trims need a raw block device and destructive=1: the server's structured block workloads do
    # not offer them (a job file may use them; the host's policy counts them as writes)
    if server["rw"] != set(opts["rw"]["choices"]) - ENGINE_ONLY_RW:
        out.append(f"rw: server {sorted(server['rw'])}, engine {opts['rw']['choices']}")
    for key in ("ioengine", "fadvise_hint"):
        if not server[key] <= set(opts[key]["names"]):
            out.append(f"{key}: server {sorted(server[key])} not all in the engine's {opts[key]['names']}")
    for name, (default, hi) in server["postmark"].items():
        e = engine["postmark"][name]
        if isinstance(e, bool):
            if default != e:
                out.append(f"postmark {name} default: server {default}, engine {e}")
            continue
        if default is not None and default != e["default"]:
            out.append(f"postmark {name} default: server {default}, engine {e['default']}")
        if hi != e["max"]:
            out.append(f"postmark {name} max: server {hi}, engine {e['max']}")
    hb, ehb = server["heap_btree"], engine["heap_btree"]
    checks = [
        ("records max", hb["records_max"], ehb["records"]["max"], hb["records_max"] == ehb["records"]["max"]),
        ("queries max", hb["queries_max"], ehb["queries"]["max"], hb["queries_max"] <= ehb["queries"]["max"]),
        (
            "fractions",
            hb["fractions_max"],
            ehb["cache_fraction"]["max_count"],
            hb["fractions_max"] == ehb["cache_fraction"]["max_count"],
        ),
        (
            "fractions default",
            hb["fractions_default"],
            ehb["cache_fraction"]["default"],
            hb["fractions_default"] == ehb["cache_fraction"]["default"],
        ),
        (
            "randseed default",
            hb["randseed_default"],
            ehb["randseed"]["default"],
            hb["randseed_default"] == ehb["randseed"]["default"],
        ),
        (
            "structure",
            hb["structure"],
            ehb["structure"]["choices"],
            hb["structure"] == set(ehb["structure"]["choices"]),
        ),
        (
            "structure default",
            hb["structure_default"],
            ehb["structure"]["default"],
            hb["structure_default"] == ehb["structure"]["default"],
        ),
    ]
    out += [f"heap_btree {what}: server {s}, engine {e}" for what, s, e, ok in checks if not ok]
    vd, evd = server["vdbench"], engine["vdbench"]
    if vd["elapsed_max"] != evd["elapsed"]["max"]:
        out.append(f"vdbench elapsed max: server {vd['elapsed_max']}, engine {evd['elapsed']['max']}")
    for what in ("scale_max",):
        for s in (vd[what], server[what]):
            if s > evd["max_scale"]:
                out.append(f"vdbench scale max: server {s}, engine {evd['max_scale']}")
    return out


def test_limits_is_one_json_document_from_the_option_table(engine_bin: Path) -> None:
    doc = _limits(engine_bin)
    assert doc["schema"] == "iowatt-engine-limits/1"
    helped = subprocess.run([str(engine_bin), "--help"], capture_output=True, text=True, check=True).stdout
    named = {line.split("=")[0].strip()[2:] for line in helped.splitlines() if line.startswith("  --")}
    assert named == set(doc["block"]["options"])  # every row of the table, nothing else
    assert doc["block"]["max_bssplit"] == 32 and doc["block"]["max_jobs"] == 256
    rw = doc["block"]["options"]["rw"]
    assert rw["choices"] == ["read", "write", "randread", "randwrite", "rw", "randrw", *ENGINE_ONLY_RW_ORDER]
    assert "readwrite" in rw["names"] and rw["default"] == "read" and rw["alias"] == "readwrite"


@pytest.mark.parametrize("opt", ["rwmixread", "numjobs", "iodepth", "iodepth_batch_submit", "bs"])
def test_each_stated_maximum_is_where_the_engine_refuses(engine_bin: Path, tmp_path: Path, opt: str) -> None:
    """One past a stated max is exit 2 naming the option (the document is the parser's own)."""
    hi = _limits(engine_bin)["block"]["options"][opt]["max"]
    proc = subprocess.run(
        [str(engine_bin), f"--filename={tmp_path / 'f'}", "--size=1m", f"--{opt}={hi + 1}"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2 and opt in proc.stderr, proc.stderr


def test_postmark_and_heap_btree_limits_are_the_parsers(engine_bin: Path, tmp_path: Path) -> None:
    doc = _limits(engine_bin)
    cmds = tmp_path / "pm.txt"
    cmds.write_text(f"set number {doc['postmark']['number']['max'] + 1}\nrun\n")
    proc = subprocess.run(
        [str(engine_bin), f"--postmark={cmds}", f"--directory={tmp_path}", "--parse-only"],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 2 and "set number" in proc.stderr, proc.stderr
    q = doc["heap_btree"]["queries"]["max"]
    for queries, code in ((q, 0), (q + 1, 2)):
        proc = subprocess.run(
            [
                str(engine_bin),
                "--heap-btree",
                f"--directory={tmp_path}",
                "--records=10",
                f"--queries={queries}",
                "--parse-only",
            ],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
        assert proc.returncode == code, (queries, proc.stderr)


def test_the_server_and_the_engine_agree(engine_bin: Path) -> None:
    assert disagreements(server_view(), _limits(engine_bin)) == []
    # the server read the same engine this test asks
    assert engine_limits.limits() == _limits(engine_limits.engine_path())


def test_the_check_catches_the_old_bssplit_limit(engine_bin: Path) -> None:
    """The server's hand-written MAX_BSSPLIT = 64 against the engine's 32: reported."""
    view = {**server_view(), "max_bssplit": 64}
    assert disagreements(view, _limits(engine_bin)) == ["max_bssplit: server 64, engine 32"]
    view = {**server_view(), "heap_btree": {**server_view()["heap_btree"], "queries_max": 2_000_000_000}}
    assert disagreements(view, _limits(engine_bin)) == [
        "heap_btree queries max: server 2000000000, engine 1000000000"
    ]


def test_a_33_entry_bssplit_is_refused_by_the_server_and_the_engine(engine_bin: Path, tmp_path: Path) -> None:
    def split(n: int) -> str:
        return ":".join(["4k"] * n)

    block.JobSpec(name="j", rw="read", size_bytes=1 << 20, bs_bytes=4096, bssplit=split(32))
    with pytest.raises(ValidationError) as err:
        block.JobSpec(name="j", rw="read", size_bytes=1 << 20, bs_bytes=4096, bssplit=split(33))
    (e,) = err.value.errors()
    assert e["loc"] == ("bssplit",) and "at most 32 block sizes" in e["msg"]
    run = [str(engine_bin), f"--filename={tmp_path / 'f'}", "--size=1m", "--ioengine=null", "--rw=read"]
    ok = subprocess.run(
        [*run, f"--bssplit={split(32)}"], capture_output=True, text=True, timeout=60, check=False
    )
    assert ok.returncode == 0, ok.stderr
    refused = subprocess.run(
        [*run, f"--bssplit={split(33)}"], capture_output=True, text=True, timeout=60, check=False
    )
    assert refused.returncode == 2 and "more than 32 entries" in refused.stderr
