"""TPC-H QphH@Size per device and database size, grouped by environment, with power and energy."""

from collections.abc import Callable

from iowatt_workload import TPCH_LABEL

from backend.compare.stats import describe
from backend.views.builders.common import (
    View,
    _cell,
    _col,
    _ratio_any,
    _table,
)
from backend.views.builders.per_device import _device_columns, _device_key, _device_mean_cell, energy_ok
from backend.views.loading import MAX_RUNS, Loaded
from backend.views.schemas import (
    BaseUnit,
    ChartAxis,
    ChartPoint,
    ChartSeries,
    ViewChart,
    ViewInfo,
    ViewRow,
    ViewTable,
)

# --- 9. Song & Lee's Figures 8-11, Tables 6-7: TPC-H QphH@Size, power and energy per database size ---

TPCH_PRESETS = ["tpch-postgresql", "tpch-mariadb", "tpch-smoke"]
NO_ENVIRONMENT = "no environment"


def _sf_text(sf: float, database_bytes: int | None) -> str:
    # below 1 GB in MB (SF 0.01: "about 25.1 MB", not "0.0251 GB")
    size = (
        ""
        if not database_bytes
        else f" (about {database_bytes / 1e9:.3g} GB on disk)"
        if database_bytes >= 1e9
        else f" (about {database_bytes / 1e6:.3g} MB on disk)"
    )
    return f"SF {sf:g}{size}"


def _tpch_qphh(info: ViewInfo, runs: list[Loaded], baseline: Loaded | None) -> ViewTable:
    devices: dict[str, tuple[str, list[Loaded]]] = {}
    for r in runs:
        key, label = _device_key(r)
        devices.setdefault(key, (label, []))[1].append(r)
    keys = list(devices)
    base_key = _device_key(baseline)[0] if baseline is not None else keys[0]
    other_key = next((k for k in keys if k != base_key), None)
    envs = sorted({r.environment or NO_ENVIRONMENT for r in runs})
    # a row per DBMS and scale factor (the report ran MySQL only; two DBMSs never share a row)
    sfs = sorted({(r.tpch.dbms, r.tpch.scale_factor) for r in runs if r.tpch is not None})
    db_bytes = {r.tpch.scale_factor: r.tpch.database_bytes for r in runs if r.tpch is not None}

    cols = [
        _col("measure", "Measure", None, "what the row holds: QphH@Size, power or energy", "text"),
        _col(
            "environment",
            "Environment",
            None,
            "the runs' environment (the report's Local and SAN); runs without one together",
            "text",
        ),
        _col(
            "database",
            "Database capacity",
            None,
            "the scale factor (the report's 1, 5 and 10 GB are SF 1, 5 and 10) and the database's estimated "
            "size on disk (libs/workload's TPC-H bound)",
            "text",
        ),
    ]
    cols += _device_columns(devices, keys, base_key, other_key, "in the row's environment and scale factor")

    Figure = Callable[[Loaded], float | None]
    measures: list[tuple[str, str, BaseUnit, Figure, bool]] = [
        ("qphh", "QphH@Size", "QphH", lambda r: r.tpch.qphh_at_size if r.tpch else None, False),
    ]
    metered = any(energy_ok(r) for r in runs)
    if metered:
        measures += [
            (  # its rows: Non-load (the idle baseline), then under load per SF (Song & Lee's Table 6)
                "power",
                "Power (W)",
                "W",
                lambda r: e.load_w_mean if (e := energy_ok(r)) else None,
                True,
            ),
            (
                "energy",
                "Energy of the run (J)",
                "J",
                lambda r: e.total_j if (e := energy_ok(r)) else None,
                True,
            ),
        ]

    rows: list[ViewRow] = []
    withheld: list[str] = []
    for key, label, unit, figure, energy_row in measures:
        for env in envs:
            row_sfs: list[tuple[str, float] | None] = ([None] if key == "power" else []) + list(sfs)
            for at in row_sfs:
                means: dict[str, float | None] = {}
                estimated: list[str] = []
                database = "Non-load" if at is None else f"{_sf_text(at[1], db_bytes.get(at[1]))}, {at[0]}"
                cells = [_cell(label), _cell(env), _cell(database)]
                for k in keys:
                    rs = [
                        r
                        for r in devices[k][1]
                        if (r.environment or NO_ENVIRONMENT) == env
                        and (at is None or (r.tpch is not None and (r.tpch.dbms, r.tpch.scale_factor) == at))
                    ]
                    if at is None:
                        vals = [
                            e.idle_w for r in rs if (e := energy_ok(r)) is not None and e.idle_w is not None
                        ]
                    else:
                        vals = [v for r in rs if (v := figure(r)) is not None]
                    if key == "qphh":
                        withheld += [
                            r.info.label for r in rs if r.tpch is not None and r.tpch.qphh_at_size is None
                        ]
                    means[k], cell = _device_mean_cell(vals, rs, energy_row, unit, devices[k][0], estimated)
                    cells.append(cell)
                if other_key is not None:
                    cells.append(_cell(*_ratio_any(means[other_key], means[base_key])))
                if estimated:
                    cells[0] = _cell(f"{label}, estimated for {', '.join(estimated)}")
                if all(m is None for m in means.values()):
                    continue  # no run of this environment at this scale factor
                rows.append(ViewRow(group=f"{key}:{env}", cells=cells))

    charts = []
    # a line by database size needs two sizes: with one SF every point sat on the y axis of a 0-1
    # scale (seen in Z-tpch-qphh.png); the table's rows carry that case
    by_size = len({sf for _, sf in sfs}) > 1
    for env in envs if by_size else []:  # Figures 8 (Local) and 9 (SAN): QphH@Size by SF, a line per device
        charts.append(
            ViewChart(
                key=f"qphh-{env}",
                title=f"QphH@Size in {env} by database size (Song & Lee, Figures 8-9)",
                x=ChartAxis(label="Scale factor", unit="SF", log=False),
                y=ChartAxis(label="QphH@Size", unit="QphH", log=False),
                series=[
                    ChartSeries(
                        label=devices[k][0],
                        run_id=None,
                        dashed=False,
                        points=_qphh_points(devices[k][1], env),
                    )
                    for k in keys
                ],
            )
        )
    if by_size and len(envs) > 1:  # Figures 10-11: each device in every environment
        for k in keys:
            charts.append(
                ViewChart(
                    key=f"qphh-device-{keys.index(k)}",
                    title=f"QphH@Size of {devices[k][0]} in each environment (Song & Lee, Figures 10-11)",
                    x=ChartAxis(label="Scale factor", unit="SF", log=False),
                    y=ChartAxis(label="QphH@Size", unit="QphH", log=False),
                    series=[
                        ChartSeries(
                            label=env, run_id=None, dashed=i > 0, points=_qphh_points(devices[k][1], env)
                        )
                        for i, env in enumerate(envs)
                    ],
                )
            )
    notes = [
        f"{TPCH_LABEL}: the TPC-H power and throughput tests on a private DBMS, QphH@Size by the spec's "
        "formulas (docs/tpch.md); not a TPC-H result.",
        "Song & Lee's Figures 8-11: QphH@Size per device and database size, in the Local and the SAN "
        "environment (each run's environment); its Table 2's streams are the spec's minimum (2, 2, 3).",
        "Each cell is the mean over the runs of that device, environment and scale factor; the Rate column "
        "divides the other device's figure by the baseline's (pick it with baseline=).",
    ]
    if not by_size:
        notes.append(
            "The charts of QphH@Size by database size (Figures 8-11) need runs at two or more scale "
            "factors; these runs are all at one."
        )
    if metered:
        notes.append(
            "Tables 6-7: power is the wattmeter's mean over the run (Non-load: the idle baseline); energy is "
            "the run's measured energy (generation, load, power and throughput tests), in J (1 Wh = 3600 J; "
            "the report's Table 7 prints this energy under a power unit). Cells marked estimated come from "
            "datasheet watts, not a meter."
        )
    else:
        notes.append(
            "No run has meter data: the power and energy rows (Song & Lee's Tables 6-7) are left out."
        )
    if withheld:
        notes.append(
            "No QphH@Size for " + ", ".join(sorted(set(withheld))) + ": a query timed out or failed, so the "
            "spec's metrics are withheld (the run's page lists the queries)."
        )
    base_run = devices[base_key][1][0].run.id if other_key is not None else None
    return _table(info, runs, cols, rows, notes, baseline=base_run, charts=charts)


def _qphh_points(rs: list[Loaded], env: str) -> list[ChartPoint]:
    by_sf: dict[float, list[float]] = {}
    for r in rs:
        if (
            (r.environment or NO_ENVIRONMENT) == env
            and r.tpch is not None
            and r.tpch.qphh_at_size is not None
        ):
            by_sf.setdefault(r.tpch.scale_factor, []).append(r.tpch.qphh_at_size)
    return [
        ChartPoint(x=sf, y=s.mean, n=s.n, ci95_low=s.ci95_low, ci95_high=s.ci95_high)
        for sf, v in sorted(by_sf.items())
        if (s := describe(v)) is not None
    ]


VIEWS: list[View] = [
    (
        ViewInfo(
            name="tpch-qphh",
            title=f"TPC-H QphH@Size per device and database size ({TPCH_LABEL})",
            description="QphH@Size per device and scale factor, grouped by environment (local vs SAN), "
            "with the Rate column and charts; with meter data, power and energy per database size. "
            f"{TPCH_LABEL}.",
            seed="Song & Lee's HDD vs DRAM-SSD study, Figures 8-11 (QphH@Size, Local and SAN) and Tables 6-7 "
            "(power, energy)",
            presets=TPCH_PRESETS,
            min_runs=1,
            max_runs=MAX_RUNS,
        ),
        _tpch_qphh,
    ),
]
