"""Named views: a set of runs of one preset laid out as its published report shows it (docs/views.md).

Each view is a table whose columns say what they hold (unit, statistic, pass rule) and, where the
report draws a figure, its charts. The figures come from what the other domains own: a run's jobs
(result rows), its passes (run/service.py pass_summaries: libs/workload's best-of rule), its spec
(the block size, threads, cache mode of each job), the mean of repeated runs (compare/stats.py).
Nothing here ranks passes or computes a statistic of its own; a view only picks figures (in base
units on the wire: B/s, ns, B, IO/s) and divides for a Ratio column; the page and the CSV print
them in the report's units (display.py).

The package: loading.py reads the runs, builders/ holds one module per family of views (the
catalogue in builders/__init__.py), display.py prints figures in the report's units (the CSV). This
module is the service the router calls.
"""

import uuid
from dataclasses import replace

from sqlalchemy.orm import Session

from backend.auth.principal import UserPrincipal
from backend.environment import topology as env_topology
from backend.errors import Invalid
from backend.models import RunStatus
from backend.views.builders import VIEWS
from backend.views.builders.common import _with_units
from backend.views.display import to_csv
from backend.views.loading import _load, _preset_of
from backend.views.schemas import ViewCatalog, ViewName, ViewTable

__all__ = ["VIEWS", "catalog", "show", "to_csv", "_preset_of"]


def catalog(session: Session, *, principal: UserPrincipal, run_ids: list[uuid.UUID]) -> ViewCatalog:
    runs = _load(session, principal, run_ids) if run_ids else []
    presets = {r.info.preset for r in runs}
    applicable = [
        info.name
        for info, _ in VIEWS.values()
        if runs and presets <= set(info.presets) and info.min_runs <= len(runs) <= info.max_runs
    ]
    return ViewCatalog(
        views=[info for info, _ in VIEWS.values()], runs=[r.info for r in runs], applicable=applicable
    )


def show(
    session: Session,
    *,
    principal: UserPrincipal,
    view: ViewName,
    run_ids: list[uuid.UUID],
    baseline: uuid.UUID | None,
    env_group: str | None = None,
    env_filters: list[tuple[str, str]] | None = None,
) -> ViewTable:
    """`env_filters` keeps the runs whose recorded environment matches; `env_group` names the
    views' environment groups (TPC-H's Local and SAN rows) by that field instead of the name."""
    info, build = VIEWS[view]
    runs = _load(session, principal, run_ids)
    if env_filters:
        runs = [r for r in runs if env_topology.matches(r.run.environment_snapshot, env_filters)]
        if not runs:
            raise Invalid("env", "no run has an environment that matches the filter")
    if env_group is not None:
        runs = [
            replace(
                r,
                environment=env_topology.facet_label(
                    env_group, env_topology.facet_value(r.run.environment_snapshot, env_group)
                ),
            )
            for r in runs
        ]
    if not info.min_runs <= len(runs) <= info.max_runs:
        raise Invalid("runs", f"the {view} view shows {info.min_runs} to {info.max_runs} runs")
    for r in runs:
        if r.info.preset not in info.presets:
            ran = f"ran preset {r.info.preset}" if r.info.preset else "ran no built-in preset"
            raise Invalid(
                "runs", f"run {r.run.id} {ran}; the {view} view shows runs of {', '.join(info.presets)}"
            )
        if r.run.status != RunStatus.succeeded or not r.jobs:
            raise Invalid("runs", f"run {r.run.id} is {r.run.status.value}: it has no result to show")
    table_notes = (
        [
            "Shortened runs (marked 'shortened ×F') ran each job for F of the preset's time or I/O: a quick "
            "look, not the preset's figures."
        ]
        if any(r.info.shortened_by for r in runs)
        else []
    )
    base = None
    if baseline is not None:
        base = next((r for r in runs if r.run.id == baseline), None)
        if base is None:
            raise Invalid("baseline", "must be one of the runs")
    t = _with_units(build(info, runs, base))
    return t.model_copy(update={"notes": [*t.notes, *table_notes]})
