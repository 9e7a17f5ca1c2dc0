"""What `iowatt-agent` prints: result, passes and energy tables, the inventory, presets and
meter schemes, and bench's progress bars. Commands (cli.py) decide what to show; this module
decides how it looks. Figures come formatted from `units`; nothing here changes a value."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from iowatt_workload import format_size, parse_size
from rich import box
from rich.console import Console
from rich.table import Table

from . import presets
from .meters import DRIVERS
from .units import fmt_bytes_rate, fmt_count, fmt_g, fmt_j, fmt_ns, fmt_num, fmt_pct, fmt_w

if TYPE_CHECKING:  # every command imports this module; these only bench and inventory need
    from .runner import EngineProgress
    from .schemas import Inventory

out = Console()
err = Console(stderr=True)


def stdout_console() -> Console:
    """Pipes and files get whole tables; a terminal gets rich's fitting to its width."""
    return out if out.is_terminal else Console(width=170)


# --- an engine result ----------------------------------------------------------------------------


def result_rows(result: dict[str, Any]) -> list[list[str]]:
    rows = []
    for job in result.get("jobs") or []:
        options = {**(job.get("job options") or {}), **((job.get("iowatt") or {}).get("options") or {})}
        rw = str(options.get("rw", "?"))
        bs = _size_text(options.get("bs", options.get("bs_bytes", "?")), options.get("kb_base"))
        cpu = f"{fmt_pct(job.get('usr_cpu'))}/{fmt_pct(job.get('sys_cpu'))}"
        # io_uring's kernel worker threads (io-wq): not in usr/sys (as in fio), shown beside them
        kworker = ((job.get("iowatt") or {}).get("io_uring") or {}).get("kernel_worker_cpu")
        if kworker is not None:
            cpu += f" +{fmt_pct(kworker)} io-wq"
        active = [
            d
            for d in ("read", "write")
            if (job.get(d) or {}).get("total_ios") or (job.get(d) or {}).get("io_bytes")
        ]
        for direction in active:
            d = job[direction]
            clat = d.get("clat_ns") or {}
            lat = d.get("lat_ns") or clat
            pct = clat.get("percentile") or {}
            bw = float(d.get("bw_bytes") or 0)
            rows.append(
                [
                    str(job.get("jobname", "")),
                    f"{rw} {direction[0].upper()}" if len(active) > 1 else rw,
                    str(bs),
                    fmt_count(float(d.get("iops") or 0)),
                    f"{bw / 1e6:,.1f}",
                    f"{bw / 2**20:,.1f}",
                    fmt_ns(lat.get("mean")),
                    fmt_ns(pct.get("50.000000")),
                    fmt_ns(pct.get("99.000000")),
                    cpu,
                ]
            )
    return rows


def _size_text(value: object, kb_base: object = None) -> str:
    """A size as the engine echoed it, in fio's short spelling ("4096" -> "4k"; `bs` as R,W per
    side); what is not a plain size is shown as it came."""
    try:
        base = int(str(kb_base)) if kb_base is not None else 1024
        return ",".join(format_size(parse_size(p, base)) for p in str(value).split(","))
    except ValueError:
        return str(value)


RESULT_LEGEND = (
    "lat avg: mean total latency · p50/p99: completion latency · CPU %: usr/sys "
    "(+ io_uring kernel workers, io-wq) · R/W: read/write"
)
RESULT_COLUMNS = [
    ("job", "left"),
    ("rw", "left"),
    ("bs", "right"),
    ("IOPS", "right"),
    ("MB/s", "right"),
    ("MiB/s", "right"),
    ("lat avg", "right"),
    ("p50", "right"),
    ("p99", "right"),
    ("CPU %", "right"),
]


def render_result_table(result: dict[str, Any]) -> Table:
    # Compact enough for an 80-column terminal; numbers never wrap or get cut.
    table = Table(
        title="iowatt-engine result",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        padding=(0, 0),  # the box's blank column separator is the only gap
    )
    for header, justify in RESULT_COLUMNS:
        table.add_column(header, justify=justify, no_wrap=True)  # type: ignore[arg-type]
    for row in result_rows(result):
        table.add_row(*row)
    return table


def render_passes(console: Console, preset: str | None, result: dict[str, Any]) -> None:
    """CrystalDiskMark-style best-of-passes table for presets that run passes."""
    rows = presets.pass_rows(preset, result) if preset else []
    if not rows:
        return
    table = Table(
        title=f"{preset}: best of passes (as CrystalDiskMark reports)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
    )
    for header in ("test", "passes", "best MB/s", "best IOPS", "median MB/s", "spread"):
        table.add_column(header, justify="left" if header == "test" else "right", no_wrap=True)
    for r in rows:
        table.add_row(
            r["test"],
            str(r["passes"]),
            f"{r['best_bw_bytes'] / 1e6:,.1f}",
            fmt_count(r["best_iops"]),
            f"{r['median_bw_bytes'] / 1e6:,.1f}",
            f"{r['spread_pct']:.1f} %",
        )
    console.print(table)


def render_energy(console: Console, energy: dict[str, Any], carbon: dict[str, Any] | None) -> None:
    if energy.get("status") != "ok":
        console.print(
            f"[bold yellow]energy: no meter data[/] ({energy.get('source')}): {energy.get('reason')}",
            highlight=False,
        )
        return
    estimated = bool(energy.get("estimated"))
    label = str(energy.get("tier_label") or energy.get("tier"))
    title = f"energy · {label}" + (" · ESTIMATE from datasheet watts, not a measurement" if estimated else "")
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, padding=(0, 0))
    for header in (
        "idle W",
        "load W",
        "runtime",
        "energy",
        "± (k=2)",
        "above idle",
        "J/GB",
        "IOPS/W",
        "MB/s/W",
    ):
        table.add_column(header, justify="right", no_wrap=True)
    mark = "~" if estimated else ""
    table.add_row(
        fmt_w(energy.get("idle_w"), mark),
        fmt_w(energy.get("load_w_mean"), mark),
        f"{float(energy.get('runtime_s') or 0):.1f} s",
        fmt_j(energy.get("total_j"), mark),
        fmt_j(energy.get("uncertainty_j")),
        fmt_j(energy.get("dynamic_j"), mark),
        fmt_num(energy.get("j_per_gb"), mark),
        fmt_num(energy.get("iops_per_w"), mark),
        fmt_num(energy.get("mb_s_per_w"), mark),
    )
    console.print(table)
    details = [
        f"source {energy.get('source')}",
        f"{energy.get('samples')} samples at {float(energy.get('achieved_rate_hz') or 0):.1f} Hz",
        f"accuracy {'declared' if energy.get('accuracy_declared') else 'assumed'} "
        f"±{energy.get('accuracy_pct')} %",
    ]
    flags = [f for f in energy.get("flags") or [] if f != "accuracy_assumed"]
    if flags:
        details.append("flags: " + ", ".join(flags))
    console.print(" · ".join(details), style="dim", highlight=False)
    if carbon is not None:
        region = f"{carbon['grid_region']} " if carbon.get("grid_region") else ""
        source = str(carbon["grid_source"])
        if carbon.get("grid_year") and str(carbon["grid_year"]) not in source:
            source += f", {carbon['grid_year']}"
        console.print(
            f"CO2e {mark}{fmt_g(carbon['operational_gco2e'])} (grid {region}{carbon['grid_gco2e_per_kwh']:g} "
            f"gCO2e/kWh, PUE {carbon['pue']:g}; {source})",
            highlight=False,
        )


def print_result(
    result: dict[str, Any],
    preset: str | None,
    energy: dict[str, Any] | None = None,
    carbon: dict[str, Any] | None = None,
) -> None:
    """bench's human output: the result table, its legend, best-of-passes, then energy."""
    console = stdout_console()
    console.print(render_result_table(result))
    console.print(RESULT_LEGEND, style="dim", highlight=False)
    render_passes(console, preset, result)
    if energy is not None:
        render_energy(console, energy, carbon)


class BenchProgress:
    """bench's progress bars on stderr (a terminal only): one per engine job and idle phase."""

    def __init__(self) -> None:
        from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn, TimeElapsedColumn

        self.progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TaskProgressColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
            disable=not err.is_terminal,
        )
        self._jobs: dict[int, Any] = {}
        self._idle: dict[str, Any] = {}

    @contextmanager
    def shown(self) -> Iterator[None]:
        with self.progress:
            yield

    def on_progress(self, p: EngineProgress) -> None:
        if p.job_index not in self._jobs:
            self._jobs[p.job_index] = self.progress.add_task(p.job_name or f"job {p.job_index}", total=100)
        iops = fmt_count(p.read_iops + p.write_iops)
        rate = f"{iops} IOPS {fmt_bytes_rate(p.read_bw_bytes + p.write_bw_bytes)}"
        self.progress.update(self._jobs[p.job_index], completed=p.percent, description=f"{p.job_name} {rate}")

    def on_message(self, line: str) -> None:
        err.print(line, style="dim", highlight=False, markup=False)

    def on_idle(self, phase: str, elapsed_s: float, planned_s: float) -> None:
        if phase not in self._idle:
            self._idle[phase] = self.progress.add_task(phase, total=100)
        self.progress.update(
            self._idle[phase], completed=100 * elapsed_s / planned_s, description=f"{phase} (idle)"
        )


# --- the host --------------------------------------------------------------------------------------


def render_inventory(inv: Inventory) -> None:
    console = stdout_console()
    console.print(
        f"[bold]{inv.hostname}[/]  {inv.os.distro or '?'}  kernel {inv.os.kernel}  "
        f"{inv.cpu.model or '?'} ({inv.cpu.cores} cores)  {inv.mem_bytes / 2**30:.1f} GiB RAM  "
        f"virtualization: {inv.virtualization or 'unknown'}",
        highlight=False,
    )
    devices = Table(title="block devices", title_justify="left")
    for col in (
        "name",
        "interface",
        "model",
        "firmware",
        "size",
        "rotational",
        "scheduler",
        "log/phys block",
    ):
        devices.add_column(col)
    for d in inv.block_devices:
        devices.add_row(
            d.name,
            d.interface,
            d.model or "",
            d.firmware or "",
            f"{d.size_bytes / 1e9:,.1f} GB",
            {True: "yes", False: "no", None: "?"}[d.rotational],
            d.scheduler or "",
            f"{d.logical_block_bytes or '?'} / {d.physical_block_bytes or '?'} B",
        )
    console.print(devices)
    mounts = Table(title="mounts", title_justify="left")
    for col in ("mountpoint", "source", "fstype", "options"):
        mounts.add_column(col)
    for m in inv.mounts:
        mounts.add_row(m.mountpoint, m.source, m.fstype, m.options)
    console.print(mounts)


def print_presets() -> None:
    table = Table(box=box.SIMPLE_HEAD)
    for col in ("preset", "jobs", "passes", "what"):
        table.add_column(col, overflow="fold")
    for name, p in sorted(presets.load().items()):
        passes = (
            f"{p['passes']} (+{p['discard_passes']} discarded)" if p["discard_passes"] else str(p["passes"])
        )
        jobs = p["engine_job"].get("jobs")  # a file preset has a mode (postmark, vdbench), not jobs
        count = str(len(jobs)) if jobs is not None else p["engine_job"]["mode"]
        table.add_row(name, count, passes, p["description"])
    out.print(table)


def print_meter_schemes() -> None:
    table = Table(title="meter schemes", title_justify="left", box=box.SIMPLE_HEAD, show_edge=False)
    for header in ("scheme", "tier", "rate", "what", "needs", "example"):
        table.add_column(header, overflow="fold")
    for d in DRIVERS:
        rate = f"{1 / d.native_interval_s:g} Hz"
        table.add_row(d.scheme, d.tier, rate, d.summary, d.needs, d.example)
    console = stdout_console()
    console.print(table)
    console.print(
        "tiers: lab (analyzer) > bmc / pdu > plug (informative) > inband; component = CPU/DRAM only, "
        "never wall power; estimate = datasheet model, labelled an estimate everywhere",
        style="dim",
        highlight=False,
    )
