"""IOPS at a latency target (QoS, issue 29): the figure enterprise buyers ask for, the highest IOPS at
which the 99th (or 99.9th) percentile latency stays under a target, from the `qos-*` presets' runs.

A `qos-*` preset is a fio job file (docs/qos.md): a closed-loop queue-depth sweep (QD 1 ... 256,
each point IOPS against its p99 and p99.9 completion latency: the curve) and a last job with fio's
`latency_target` / `latency_window` / `latency_percentile`, in which the engine itself searches the
highest depth whose percentile stays at or below the target and reports a window at that depth: the
single figure. The view shows both, the sweep's best point under the target beside the search as a
cross-check, and the power while the search's last window ran (the load's final seconds: the
search is the last job) with IOPS per watt.

Pure functions over `QosPoint`s (tested against hand-made sweeps and a throttled device's real
ones); the view builder at the end reads them from the runs' jobs and their job file's parse."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from iowatt_policy import parse_time_ns

from backend.views.builders.common import View, _cell, _col, _num, _table
from backend.views.loading import Loaded
from backend.views.schemas import ChartAxis, ChartPoint, ChartSeries, ViewChart, ViewInfo, ViewRow, ViewTable

QOS_PRESETS = ["qos-randread-4k", "qos-randrw-70-30"]
ESTIMATED = "estimated (datasheet watts, no meter)"


@dataclass(frozen=True)
class QosTarget:
    latency_ns: int
    percentile: float  # fio's latency_percentile: 99, 99.9, 100 (= every I/O)

    def label(self) -> str:
        p = f"p{self.percentile:g}" if self.percentile < 100 else "every I/O"
        return f"{p} ≤ {_human_ns(self.latency_ns)}"


@dataclass(frozen=True)
class QosPoint:
    name: str
    depth: int | None  # the job's iodepth (the search's: the depth it settled on, when known)
    iops: float  # reads and writes together
    p99_ns: float | None  # the slower direction's (a mixed job's worst)
    p999_ns: float | None
    search: bool = False  # the latency_target job


def _human_ns(ns: float) -> str:
    for unit, per in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if ns >= per:
            return f"{ns / per:g} {unit}"
    return f"{ns:g} ns"


def latency_target_ns(text: str) -> int:
    """fio's latency_target: a plain number is microseconds (unlike runtime's seconds)."""
    text = text.strip()
    if text.replace(".", "", 1).isdigit():
        return int(float(text) * 1000 + 0.5)
    return parse_time_ns(text)


def target_of(options: Mapping[str, str]) -> QosTarget | None:
    """The target a job's options set (None: not a latency_target job)."""
    text = options.get("latency_target")
    if not text:
        return None
    try:
        ns = latency_target_ns(text)
        pct = float(options.get("latency_percentile", "100"))
    except ValueError:
        return None
    if ns <= 0 or not 0 < pct <= 100:
        return None
    return QosTarget(ns, pct)


def latency_at(p: QosPoint, t: QosTarget) -> float | None:
    """The point's latency at the target's percentile: p99 for 99 and below, p99.9 up to 99.9;
    none above (every I/O: the sweep keeps no maximum per point)."""
    if t.percentile <= 99:
        return p.p99_ns
    if t.percentile <= 99.9:
        return p.p999_ns
    return None


def meets(p: QosPoint, t: QosTarget) -> bool | None:
    lat = latency_at(p, t)
    return None if lat is None else lat <= t.latency_ns


def best_under(points: Iterable[QosPoint], t: QosTarget) -> QosPoint | None:
    """The sweep's point with the most IOPS whose latency at the percentile meets the target."""
    ok = [p for p in points if not p.search and meets(p, t)]
    return max(ok, key=lambda p: p.iops) if ok else None


def figure(points: list[QosPoint], t: QosTarget) -> QosPoint | None:
    """The single figure: the engine's search when it ran and met the target, else the sweep's
    best point under it."""
    search = next((p for p in points if p.search), None)
    if search is not None and meets(search, t) is not False and search.iops > 0:
        return search
    return best_under(points, t)


def points_from_document(doc: Mapping[str, Any]) -> tuple[list[QosPoint], QosTarget | None]:
    """A QoS run's points from the engine's document (`bench`, tests): each job's IOPS and
    completion-latency percentiles, the search job by its `iowatt.options.latency_target_ns`."""
    points: list[QosPoint] = []
    target: QosTarget | None = None
    for job in doc.get("jobs") or []:
        opts = (job.get("iowatt") or {}).get("options") or {}
        lt = int(opts.get("latency_target_ns") or 0)
        search = lt > 0
        if search:
            target = QosTarget(lt, float(opts.get("latency_percentile") or 100))
        sides = [job.get(d) or {} for d in ("read", "write")]
        sides = [s for s in sides if int(s.get("total_ios") or 0) > 0]

        def pct(key: str, sides: list[dict[str, Any]] = sides) -> float | None:
            found = [((s.get("clat_ns") or {}).get("percentile") or {}).get(key) for s in sides]
            vals = [float(v) for v in found if v is not None]
            return max(vals) if vals else None

        depth = job.get("latency_depth") if search else opts.get("iodepth")
        points.append(
            QosPoint(
                name=str(job.get("jobname", "")),
                depth=int(depth) if isinstance(depth, int | float) and not isinstance(depth, bool) else None,
                iops=sum(float(s.get("iops") or 0) for s in sides),
                p99_ns=pct("99.000000"),
                p999_ns=pct("99.900000"),
                search=search,
            )
        )
    return points, target


# --- the view -------------------------------------------------------------------------------------


def _parsed_options(r: Loaded) -> dict[str, dict[str, str]]:
    """Each job's options as the engine read the run's job file ([global]'s, then its own)."""
    parsed = ((r.run.workload_spec.get("jobfile") or {}).get("parsed")) or {}
    glob = parsed.get("global_options") or {}
    return {
        str(j.get("name")): {**glob, **(j.get("options") or {})}
        for j in parsed.get("jobs") or []
        if isinstance(j, dict)
    }


def points_of(r: Loaded) -> tuple[list[QosPoint], QosTarget | None]:
    options = _parsed_options(r)
    depths = r.latency_depths or {}
    points, target = [], None
    for name, job in r.jobs.items():
        opts = options.get(name, {})
        t = target_of(opts)
        if t is not None:
            target = t
        sides = [d for d in ("read", "write") if (getattr(job, f"{d}_total_ios") or 0) > 0]

        def worst(field: str, sides: list[str] = sides, job: Any = job) -> float | None:
            vals = [getattr(job, f"{d}_{field}") for d in sides if getattr(job, f"{d}_{field}") is not None]
            return float(max(vals)) if vals else None

        depth_text = opts.get("iodepth", "1")
        depth = depths.get(name) if t is not None else (int(depth_text) if depth_text.isdigit() else None)
        points.append(
            QosPoint(
                name=name,
                depth=depth,
                iops=sum(float(getattr(job, f"{d}_iops") or 0) for d in sides),
                p99_ns=worst("clat_p99_ns"),
                p999_ns=worst("clat_p999_ns"),
                search=t is not None,
            )
        )
    return points, target


def _row(
    label: str,
    point: str,
    p: QosPoint | None,
    target: QosTarget | None,
    watts: float | None = None,
    per_w: float | None = None,
    estimated: bool = False,
) -> ViewRow:
    """One row of a run's group: a point with its depth, IOPS, latencies, verdict and power
    (`estimated`: datasheet watts, labelled beside both figures and in the row's text)."""
    met = meets(p, target) if p is not None and target is not None else None
    note = ESTIMATED if estimated and watts is not None else None
    if note:
        point = f"{point}, estimated power"
    return ViewRow(
        group=label,
        cells=[
            _cell(label),
            _cell(point),
            _cell(f"QD {p.depth}" if p is not None and p.depth is not None else None),
            _cell(_num(p.iops) if p is not None else None),
            _cell(p.p99_ns if p is not None else None),
            _cell(p.p999_ns if p is not None else None),
            _cell(None if met is None else ("yes" if met else "no")),
            _cell(watts, note=note),
            _cell(per_w, note=note if per_w is not None else None),
        ],
    )


def _qos(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    cols = [
        _col("run", "Run", None, "the run: its device (or target) on its agent", "text"),
        _col(
            "point",
            "Point",
            None,
            "the latency-target search, the sweep's best point under the target, "
            "or a point of the queue-depth sweep",
            "text",
        ),
        _col("qd", "Queue depth", None, "I/Os in flight (the search: the depth it settled on)", "text"),
        _col("iops", "IOPS", "IO/s", "reads and writes per second together"),
        _col(
            "p99",
            "p99 latency (µs)",
            "ns",
            "99th percentile completion latency (a mixed job: the slower direction's)",
        ),
        _col("p999", "p99.9 latency (µs)", "ns", "99.9th percentile completion latency"),
        _col(
            "meets",
            "Meets the target",
            None,
            "the latency at the target's percentile is at or below it",
            "text",
        ),
        _col(
            "power",
            "Power (W)",
            "W",
            "mean power while the search's final window ran (the load's last "
            "seconds), from the run's meter (an estimate meter's datasheet watts marked "
            "estimated); empty without one",
        ),
        _col("iops_per_w", "IOPS per watt", "IO/s/W", "IOPS at the target divided by that power"),
    ]
    rows: list[ViewRow] = []
    chart_series: list[ChartSeries] = []
    targets: list[QosTarget] = []
    for r in runs:
        points, target = points_of(r)
        label = r.info.label
        if target is not None:
            targets.append(target)
        fig = figure(points, target) if target is not None else None
        best = best_under(points, target) if target is not None else None
        watts = r.tail_w
        per_w = fig.iops / watts if fig is not None and watts else None

        head = (
            f"At the target ({target.label()})" if target is not None else "No latency target in the job file"
        )
        estimated = r.energy is not None and r.energy.estimated
        rows.append(_row(label, head, fig, target, watts, per_w, estimated))
        if best is not None and best is not fig:
            rows.append(_row(label, "Best sweep point under the target", best, target))
        search = next((p for p in points if p.search), None)
        if search is not None and fig is not search:  # the figure is the sweep's: say why
            rows.append(_row(label, "Search (missed the target)", search, target))
        sweep = sorted((p for p in points if not p.search), key=lambda p: (p.depth or 0, p.name))
        rows += [_row(label, f"Sweep {p.name}", p, target) for p in sweep]
        for key, dashed, name in (("p99_ns", False, "p99"), ("p999_ns", True, "p99.9")):
            pts = [
                ChartPoint(x=p.iops, y=float(getattr(p, key)))
                for p in sweep
                if getattr(p, key) is not None and p.iops > 0
            ]
            chart_series.append(
                ChartSeries(label=f"{label} {name}", run_id=r.run.id, dashed=dashed, points=pts)
            )
    xs = [pt.x for s in chart_series for pt in s.points]
    for t in {(t.latency_ns, t.percentile): t for t in targets}.values():
        if xs:
            chart_series.append(
                ChartSeries(
                    label=f"target {t.label()}",
                    run_id=None,
                    dashed=True,
                    points=[ChartPoint(x=min(xs), y=t.latency_ns), ChartPoint(x=max(xs), y=t.latency_ns)],
                )
            )
    chart = ViewChart(
        key="qos-curve",
        title="Latency against IOPS: the queue-depth sweep (p99 solid, p99.9 dashed) and the target",
        x=ChartAxis(label="IOPS", unit="IO/s", log=False),
        y=ChartAxis(label="Completion latency", unit="ns", log=True),
        series=chart_series,
    )
    notes = [
        "The figure is fio's latency_target search (the job file's last job): from QD 1 the depth doubles "
        "while the percentile stays at or below the target and is bisected after a miss; the engine then "
        "measures one more window at the depth found and reports it. The sweep's best point under the "
        "target is its cross-check.",
        "Latencies are completion latencies (clat) from the engine's histograms; the search judges total "
        "latency (submission included), a few µs more with io_uring.",
        "Power: the mean of the meter's samples over the load's final seconds, as long as the search's "
        "reported window (aligned to the load's end: the search is the last job); IOPS per watt is the "
        "figure's IOPS over it. A procurement review takes the figure with performance metric "
        "'iops_at_target'.",
    ]
    return _table(info, runs, cols, rows, notes, charts=[chart])


VIEWS: list[View] = [
    (
        ViewInfo(
            name="qos",
            title="IOPS at a latency target (QoS)",
            description="The highest IOPS at which the 99th (or 99.9th) percentile latency stays under a "
            "target: fio's latency_target search, the queue-depth sweep as a curve, power and IOPS per watt.",
            seed="issue 29: the figure enterprise buyers ask for (SNIA PTS's latency test reports "
            "percentiles; no seed prints it)",
            presets=QOS_PRESETS,
            min_runs=1,
            max_runs=8,
        ),
        _qos,
    )
]
