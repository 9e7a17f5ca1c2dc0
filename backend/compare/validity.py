"""Reasons a number may not mean what it seems, shown next to it: the validity flags."""

from typing import Any

from iowatt_workload import MIN_RUNTIME_S, TIMER_SLACK_S

from backend.agent.schemas import Inventory
from backend.kit.messages import human_bytes
from backend.models import Agent, Device, Run
from backend.pts.service import validity_flags as pts_flags
from backend.result.schemas import FileWorkloadSummary
from backend.run.schemas import RunRead
from backend.workload.builtin import SHORT_BY_DESIGN
from backend.workload.kinds import KINDS

# MIN_RUNTIME_S and TIMER_SLACK_S: the short-run rule's one owner is libs/workload (defaults.py)
# usable payload bandwidth of host interfaces, bytes/s (SATA 6 Gb/s and SAS-3 12 Gb/s after 8b/10b coding)
LINE_RATE = {"sata": 600e6, "sas": 1200e6, "usb": 625e6}


def short_jobs(spec_jobs: list[dict[str, Any]], read: RunRead) -> list[str]:
    """Jobs that ran under MIN_RUNTIME_S, judged by the measured duration (a size-bound job is as
    long as it took); before a result exists, only time-based jobs asked to run shorter. An imported
    job's runtime of 0 is one its file did not state (Bonnie++, CrystalDiskMark): not judged."""
    if read.jobs:
        unstated = read.origin is not None
        return [
            j.name
            for j in read.jobs
            if j.runtime_ns < (MIN_RUNTIME_S - TIMER_SLACK_S) * 1e9 and not (unstated and j.runtime_ns == 0)
        ]
    return [
        str(j.get("name"))
        for j in spec_jobs
        if j.get("time_based") and (j.get("runtime_s") or 0) < MIN_RUNTIME_S - TIMER_SLACK_S
    ]


def short_message(short: list[str], total: int, run: Run, shortened: object) -> str:
    """The short-run flag's words: how many jobs (the first three named, never a list of 110), and
    for a preset short by design (CrystalDiskMark's own 5 s) that design, in those words."""
    names = ", ".join(short[:3]) + (f", +{len(short) - 3} more" if len(short) > 3 else "")
    count = f"{len(short)} of {total} jobs" if total > 1 else "the job"
    design = SHORT_BY_DESIGN.get(run.preset or "") if not shortened else None
    if design:
        return (
            f"short by design: {design} ({count} under {MIN_RUNTIME_S:.0f} s: {names}); "
            "comparable with runs of the same preset, caches and bursts weigh more than in "
            f"{MIN_RUNTIME_S:.0f} s jobs"
        )
    return f"under {MIN_RUNTIME_S:.0f} s: {count} ({names}); caches and bursts dominate short runs"


def cache_resident(run: Run, read: RunRead, mem: int | None) -> str | None:
    kind = KINDS.get(run.workload_spec.get("kind") or "block")
    if kind is not None and kind.family == "database":
        return db_cache_resident(run.workload_spec, read, mem)
    return cache_resident_of(run.workload_spec, read.file_workload, mem)


def db_cache_resident(spec: dict[str, Any], read: RunRead, mem: int | None) -> str | None:
    """A TPC-H database (libs/workload's bound for its SF, the facts stored with the run) that fits
    in the host's RAM on PostgreSQL, which reads through the page cache (MariaDB's InnoDB opens its
    files O_DIRECT); a heap/B-tree sweep whose files were not opened O_DIRECT (a file system
    without it: the result's heap_btree.direct) and fit in RAM."""
    facts = spec.get("facts") or {}
    dataset = facts.get("dataset_bytes")
    if (
        not isinstance(mem, int)
        or not isinstance(dataset, int)
        or isinstance(dataset, bool)
        or dataset >= mem
    ):
        return None
    if spec.get("kind") == "tpch":
        dbms = read.tpch.dbms if read.tpch is not None else (spec.get("tpch") or {}).get("dbms")
        if dbms != "postgresql":
            return None
        return (
            f"the database (about {human_bytes(dataset)}) fits in the page cache (host RAM "
            f"{human_bytes(mem)}) and PostgreSQL reads through it: the small buffer pool does not keep "
            "the queries on the device"
        )
    if read.heap_btree is None or read.heap_btree.direct is not False:
        return None  # the engine opens its files O_DIRECT where the file system can
    return (
        f"the sweep's files ({human_bytes(dataset)}) were not opened O_DIRECT and fit in the page cache "
        f"(host RAM {human_bytes(mem)}): a buffer pool miss may be a memory copy, not a device read"
    )


def cache_resident_of(spec: dict[str, Any], fw: FileWorkloadSummary | None, mem: int | None) -> str | None:
    """A file workload whose file set fits in the host's RAM and is not opened O_DIRECT: the page
    cache can hold all of it. The file set's bytes from the result (as laid out), else from the
    engine's facts the server stored with the run (before a result: `facts.dataset_bytes`). The
    host's RAM from the agent's inventory, else the engine's own reading (imported results)."""
    if fw is not None:
        dataset, o_direct = fw.dataset_bytes, fw.o_direct
    elif spec.get("kind", "block") != "block":
        facts = spec.get("facts") or {}
        dataset, o_direct = facts.get("dataset_bytes"), bool(facts.get("o_direct"))
    else:
        return None
    if not isinstance(mem, int):
        mem = fw.host_mem_bytes if fw is not None else None
    if not isinstance(dataset, int) or isinstance(dataset, bool) or not isinstance(mem, int) or o_direct:
        return None
    if dataset >= mem:
        return None
    return (
        f"the file set ({human_bytes(dataset)}) fits in the page cache (host RAM {human_bytes(mem)}) "
        "and is not opened O_DIRECT: it may measure memory, not the device"
    )


# the inventory's fields the flags read: the rest of a stored inventory (disks, topology, policy: most
# of its size) is not parsed; a comparison reads every agent's (docs/benchmarks.md § A million runs)
_FLAG_FIELDS = ("mem_bytes", "virtualization")


def inventory_of(agent: Agent | None) -> Inventory:
    """The agent's inventory as far as the validity flags read it (`_FLAG_FIELDS`)."""
    raw = agent.inventory if agent else None
    part = {k: raw[k] for k in _FLAG_FIELDS if k in raw} if isinstance(raw, dict) else None
    return (Inventory.read(part) if part is not None else None) or Inventory()


def flags_for(
    run: Run, read: RunRead, agent: Agent | None, device: Device | None, *, inventory: Inventory | None = None
) -> list[dict[str, str]]:
    """`inventory`: the agent's, already parsed (a comparison parses each agent's once)."""
    out: list[dict[str, str]] = []
    inv = inventory if inventory is not None else inventory_of(agent)
    mem = inv.mem_bytes
    jobs = run.workload_spec.get("jobs", [])
    if isinstance(mem, int) and any(not j.get("direct") and j.get("size_bytes", 0) < mem for j in jobs):
        out.append(
            {
                "flag": "working_set_below_ram",
                "message": "a buffered job's working set fits in the host's RAM: "
                "it may measure the page cache, not the device",
            }
        )
    cache = cache_resident(run, read, mem)
    if cache:
        out.append({"flag": "cache_resident", "message": cache})
    shortened = run.workload_spec.get("shortened_by")
    short = short_jobs(jobs, read)
    if short:
        out.append(
            {"flag": "short_run", "message": short_message(short, len(read.jobs or jobs), run, shortened)}
        )
    if shortened:
        out.append(
            {
                "flag": "shortened",
                "message": f"shortened ×{shortened:g}: every job cut to {shortened:g} of its length "
                "(a quick look): not the preset's full measurement",
            }
        )
    virt = inv.virtualization
    if virt not in (None, "none", ""):
        out.append(
            {
                "flag": "virtualized",
                "message": f"the host is virtualised ({virt}): the hypervisor's caches "
                "and neighbours shape the numbers",
            }
        )
    facts = (device.facts if device else None) or {}
    limit = LINE_RATE.get(str(facts.get("interface", "")).lower())
    if limit:
        for j in read.jobs:
            bw = (j.read.bw_bytes if j.read else 0) + (j.write.bw_bytes if j.write else 0)
            if bw > limit:
                out.append(
                    {
                        "flag": "above_line_rate",
                        "message": f"{j.name}: {bw / 1e6:.0f} MB/s is above the "
                        f"{facts.get('interface')} line rate ({limit / 1e6:.0f} MB/s): a cache answered",
                    }
                )
                break
    if read.pts is not None:  # a SNIA PTS run: its verdict beside every figure it gave
        out.extend(pts_flags(read.pts))
    if (
        device is not None
        and device.media == "ssd"
        and any(j.get("rw") in ("write", "randwrite", "rw", "randrw") for j in jobs)
    ):
        out.append(
            {
                "flag": "unconditioned_ssd",
                "message": "SSD writes without SNIA-style preconditioning show "
                "fresh-out-of-box speed, not steady state",
            }
        )
    return out
