"""SNIA PTS reports from stored results (docs/pts.md): pure functions of the document's `pts`
section (`report`, `verdict`, `to_csv`), and the reads that feed them."""

from __future__ import annotations

import csv
import io
import uuid
from collections.abc import Sequence
from typing import Any

from pydantic import ValidationError
from sqlalchemy.orm import Session

from backend.errors import NotFound
from backend.models import Run
from backend.pts import repository
from backend.pts.schemas import (
    PtsCellDoc,
    PtsDoc,
    PtsElement,
    PtsFitPoint,
    PtsHir,
    PtsHirPoint,
    PtsHirSegment,
    PtsPurge,
    PtsReport,
    PtsRound,
    PtsStop,
    PtsVerdict,
    PtsWindow,
)

PERCENTILES_IN_CSV = ("99", "99.9", "99.99", "99.999")


def read_doc(value: object) -> PtsDoc | None:
    """The stored `pts` section, or None when there is none or it does not read (never a 500)."""
    if not isinstance(value, dict):
        return None
    try:
        return PtsDoc.model_validate(value)
    except ValidationError:
        return None


def verdict(doc: PtsDoc) -> PtsVerdict:
    ss = doc.steady_state
    w = ss.window if ss.applies else None  # Write Saturation: no measurement window
    return PtsVerdict(
        test=doc.test,
        profile=doc.profile,
        compliant=doc.compliant,
        deviations=list(doc.deviations),
        steady_state_applies=ss.applies,
        steady_state_reached=ss.applies and ss.reached,
        steady_state_round=ss.round if ss.applies else None,
        rounds=len(doc.rounds),
        window_first_round=w.first_round if w else None,
        window_last_round=w.last_round if w else None,
    )


def compliance_name(v: PtsVerdict) -> str:
    """What a run of `v`'s profile is judged against: "PTS-compliant" (Enterprise, as before
    profiles) or "PTS Client-compliant"."""
    return "PTS Client-compliant" if v.profile == "client" else "PTS-compliant"


def validity_flags(v: PtsVerdict) -> list[dict[str, str]]:
    """The verdict as validity flags (compare/validity.py flags_for): not steady, not compliant."""
    out = []
    if v.steady_state_applies and not v.steady_state_reached:
        out.append(
            {
                "flag": "not_steady_state",
                "message": f"SNIA PTS: steady state not reached in {v.rounds} rounds: the figures are the "
                "last rounds', not steady-state figures",
            }
        )
    if not v.compliant:
        shown = "; ".join(v.deviations[:4]) + (
            f"; +{len(v.deviations) - 4} more" if len(v.deviations) > 4 else ""
        )
        out.append(
            {"flag": "not_pts_compliant", "message": f"not {compliance_name(v)}: {shown or 'a short trial'}"}
        )
    return out


def _metric(cell: Any, metric: str) -> float | None:
    if metric == "iops":
        return float(cell.read_iops + cell.write_iops)
    if metric == "bw_bytes":
        return float(cell.read_bw_bytes + cell.write_bw_bytes)
    return float(cell.lat_mean_ns) if cell.lat_mean_ns is not None else None


def report(run_id: uuid.UUID, doc: PtsDoc) -> PtsReport:
    metric = doc.tracking.metric
    names = [c.name for c in (doc.window_averages or (doc.rounds[-1].cells if doc.rounds else []))]
    by_round = {r.round: {c.name: c for c in r.cells} for r in doc.rounds}
    averages = {c.name: c for c in doc.window_averages}
    elements = []
    for name in names:
        avg = averages.get(name)
        last = next(
            (by_round[r.round][name] for r in reversed(doc.rounds) if name in by_round[r.round]), None
        )
        base = avg or last
        if base is None:
            continue
        elements.append(
            PtsElement(
                name=name,
                bs_bytes=base.bs,
                read_pct=base.read_pct,
                per_round=[
                    _metric(by_round[r.round][name], metric) if name in by_round[r.round] else None
                    for r in doc.rounds
                ],
                iops=float(base.read_iops + base.write_iops),
                read_iops=float(base.read_iops),
                write_iops=float(base.write_iops),
                bw_bytes=float(base.read_bw_bytes + base.write_bw_bytes),
                lat_mean_ns=base.lat_mean_ns,
                lat_max_ns=base.lat_max_ns,
                read_percentiles_ns=dict(base.read_clat_percentiles_ns),
                write_percentiles_ns=dict(base.write_clat_percentiles_ns),
            )
        )
    w = doc.steady_state.window
    window = None
    if w is not None and doc.steady_state.applies:  # Write Saturation's last rounds are no window
        window = PtsWindow(
            first_round=w.first_round,
            last_round=w.last_round,
            average=w.average,
            data_excursion=w.data_excursion,
            data_excursion_limit=w.data_excursion_limit,
            slope=w.slope,
            intercept=w.intercept,
            slope_excursion=w.slope_excursion,
            slope_excursion_limit=w.slope_excursion_limit,
            data_ok=w.data_ok,
            slope_ok=w.slope_ok,
            points=[
                PtsFitPoint(
                    round=w.first_round + i, value=v, fitted=w.intercept + w.slope * (w.first_round + i)
                )
                for i, v in enumerate(w.values)
            ],
        )
    averaged = None  # the rounds window_averages averages (the agent's window_averages)
    if w is not None:
        averaged = (w.first_round, w.last_round)
    elif doc.window_averages and doc.rounds:  # Write Saturation after one round
        averaged = (doc.rounds[0].round, doc.rounds[-1].round)
    hir = None
    if doc.hir is not None:
        hir = PtsHir(
            burst_s=doc.hir.burst_s,
            bursts=doc.hir.bursts,
            preconditioned_iops=w.average if w is not None else None,
            segments=[
                PtsHirSegment(
                    kind=seg.kind,
                    wait_state=seg.wait_state,
                    idle_s=seg.idle_s,
                    average_iops=seg.average_iops,
                    points=[PtsHirPoint(t_s=pt.t_s, iops=pt.iops, idle_s=pt.idle_s) for pt in seg.points],
                )
                for seg in doc.hir.segments
            ],
        )
    return PtsReport(
        run_id=run_id,
        spec=doc.spec,
        verdict=verdict(doc),
        metric=metric,
        tracking_element=doc.tracking.element,
        capacity_bytes=doc.capacity_bytes,
        region_bytes=doc.region_bytes,
        threads=doc.threads,
        iodepth=doc.iodepth,
        round_s=doc.round_s,
        purge=PtsPurge(
            method=doc.purge.method,
            commands=list(doc.purge.commands),
            seconds=doc.purge.seconds,
            note=doc.purge.note,
        ),
        preconditioning_bytes=doc.preconditioning.bytes_written,
        preconditioning_bw_bytes=float(doc.preconditioning.write_bw_bytes),
        rounds=[
            PtsRound(round=r.round, tracking=r.tracking, bytes_written=r.bytes_written) for r in doc.rounds
        ],
        window=window,
        averaged_first_round=averaged[0] if averaged else None,
        averaged_last_round=averaged[1] if averaged else None,
        stop=PtsStop(**doc.stop.model_dump(include=set(PtsStop.model_fields))) if doc.stop else None,
        elements=elements,
        bytes_written=doc.bytes_written,
        preconditioning_applies=doc.preconditioning.applies,
        hir=hir,
    )


def verdicts(
    session: Session, runs: Sequence[Run], parts: dict[uuid.UUID, dict[str, Any]] | None = None
) -> dict[uuid.UUID, PtsVerdict | None]:
    """Each run's PTS verdict (None for other runs and before a result): one query, none when
    `parts` (result.repository.document_parts') are given."""
    if parts is None:
        parts = repository.verdict_parts(session, [r.id for r in runs])
    out: dict[uuid.UUID, PtsVerdict | None] = {}
    for r in runs:
        part = parts.get(r.id)
        out[r.id] = _verdict_of(part) if part is not None else None
    return out


def _verdict_of(part: dict[str, Any]) -> PtsVerdict | None:
    ss = part.get("steady_state")
    if not isinstance(ss, dict) or part.get("test") not in ("iops", "throughput", "latency", "wsat", "hir"):
        return None
    applies = ss.get("applies", True) is not False
    found = ss.get("window")
    window: dict[str, Any] = found if isinstance(found, dict) and applies else {}
    try:
        return PtsVerdict(
            test=part["test"],
            profile="client" if part.get("profile") == "client" else "enterprise",
            compliant=part.get("compliant") is True,
            deviations=[str(d)[:2000] for d in part.get("deviations") or []][:20],
            steady_state_applies=applies,
            steady_state_reached=applies and ss.get("reached") is True,
            steady_state_round=_int_or_none(ss.get("round")) if applies else None,
            rounds=int(ss.get("rounds") or 0),
            window_first_round=_int_or_none(window.get("first_round")),
            window_last_round=_int_or_none(window.get("last_round")),
        )
    except (ValidationError, TypeError, ValueError):
        return None


def _int_or_none(v: object) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


def steady_element(session: Session, v: PtsVerdict | None, run_id: uuid.UUID, name: str) -> PtsCellDoc | None:
    """The measurement window's averages of the element `name` of a run that reached steady state
    (None otherwise): the figure a procurement review prefers."""
    if v is None or not v.steady_state_reached:
        return None
    doc = read_doc(repository.pts_section(session, run_id))
    if doc is None:
        return None
    return next((c for c in doc.window_averages if c.name == name), None)


def get_report(session: Session, *, run: Run) -> PtsReport:
    doc = read_doc(repository.pts_section(session, run.id))
    if doc is None:
        raise NotFound(
            "the run has no SNIA PTS result (not a pts run, or no result yet)", code="no_pts_result"
        )
    return report(run.id, doc)


def reports_for(session: Session, run_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, PtsReport]:
    """The PTS reports of those of the runs that have a readable `pts` section (a review's PDF
    prints their pages; the caller has checked it may read the runs): one query."""
    out = {}
    for rid, section in repository.pts_sections(session, list(dict.fromkeys(run_ids))).items():
        doc = read_doc(section)
        if doc is not None:
            out[rid] = report(rid, doc)
    return out


def _num(v: float | None, digits: int = 6) -> str:
    return "" if v is None else f"{v:.{digits}g}"


def to_csv(r: PtsReport) -> str:
    """The report's tables as CSV sections: the verdict, the rounds (the tracking variable and
    every element's figure per round), the window, and the elements' window averages."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    v = r.verdict
    w.writerow(["section", "verdict"])
    w.writerow(["spec", r.spec])
    w.writerow(["profile", v.profile])
    w.writerow(["test", v.test])
    w.writerow(["pts_compliant", "yes" if v.compliant else "no", compliance_name(v)])
    w.writerow(["deviations", "; ".join(v.deviations)])
    w.writerow(
        [
            "steady_state",
            "not applicable"
            if not v.steady_state_applies
            else ("reached" if v.steady_state_reached else "not reached"),
        ]
    )
    w.writerow(["steady_state_round", v.steady_state_round or ""])
    if r.stop is not None:  # why the rounds stopped (libs/workload stop_rule)
        w.writerow(["stopped_by", r.stop.rule, "round", r.stop.round, "round_limit", r.stop.round_limit])
        if r.stop.bytes_limit is not None:
            w.writerow(["bytes_written_by_rounds", r.stop.bytes_written, "bytes_limit", r.stop.bytes_limit])
    w.writerow(["purge", r.purge.method, r.purge.note])
    w.writerow(
        [
            "preconditioning",
            "SEQ 128 KiB, 2 x the region" if r.preconditioning_applies else "none (from the purged state)",
        ]
    )
    w.writerow(["preconditioning_bytes", r.preconditioning_bytes])
    w.writerow(["region_bytes", r.region_bytes])
    w.writerow(["threads", r.threads])
    w.writerow(["iodepth", r.iodepth])
    w.writerow(["round_s", r.round_s])
    w.writerow([])
    w.writerow(["section", "rounds", f"metric={r.metric}"])
    w.writerow(["round", f"tracking ({r.tracking_element})", "bytes_written", *[e.name for e in r.elements]])
    for i, rd in enumerate(r.rounds):
        w.writerow(
            [
                rd.round,
                _num(rd.tracking),
                rd.bytes_written,
                *[_num(e.per_round[i]) if i < len(e.per_round) else "" for e in r.elements],
            ]
        )
    w.writerow([])
    if r.window is not None:
        win = r.window
        w.writerow(["section", "measurement window"])
        w.writerow(["rounds", f"{win.first_round}-{win.last_round}"])
        w.writerow(["average", _num(win.average)])
        w.writerow(
            [
                "data_excursion",
                _num(win.data_excursion),
                "limit",
                _num(win.data_excursion_limit),
                "ok" if win.data_ok else "exceeded",
            ]
        )
        w.writerow(
            [
                "slope_excursion",
                _num(win.slope_excursion),
                "limit",
                _num(win.slope_excursion_limit),
                "ok" if win.slope_ok else "exceeded",
            ]
        )
        w.writerow(["slope_per_round", _num(win.slope), "intercept", _num(win.intercept)])
        w.writerow([])
    if v.steady_state_applies:
        w.writerow(["section", "window averages"])
    else:  # Write Saturation: no steady-state window applies; its figures are its last rounds'
        span = f"{r.averaged_first_round}-{r.averaged_last_round}" if r.averaged_first_round else ""
        w.writerow(["section", "last rounds averages", f"rounds={span}"])
    w.writerow(
        [
            "element",
            "bs_bytes",
            "read_pct",
            "iops",
            "read_iops",
            "write_iops",
            "bw_bytes",
            "lat_mean_ns",
            "lat_max_ns",
        ]
        + [f"read_p{p}_ns" for p in PERCENTILES_IN_CSV]
        + [f"write_p{p}_ns" for p in PERCENTILES_IN_CSV]
    )
    for e in r.elements:
        w.writerow(
            [
                e.name,
                e.bs_bytes,
                e.read_pct,
                _num(e.iops),
                _num(e.read_iops),
                _num(e.write_iops),
                _num(e.bw_bytes),
                _num(e.lat_mean_ns),
                _num(e.lat_max_ns),
            ]
            + [_num(e.read_percentiles_ns.get(p)) for p in PERCENTILES_IN_CSV]
            + [_num(e.write_percentiles_ns.get(p)) for p in PERCENTILES_IN_CSV]
        )
    if r.hir is not None:
        h = r.hir
        w.writerow([])
        w.writerow(["section", "host idle recovery", f"burst_s={h.burst_s}", f"bursts={h.bursts}"])
        w.writerow(["preconditioned_iops", _num(h.preconditioned_iops)])
        w.writerow(["segment", "wait_state", "idle_s", "average_iops"])
        for seg in h.segments:
            w.writerow([seg.kind, seg.wait_state, _num(seg.idle_s), _num(seg.average_iops)])
        w.writerow([])
        w.writerow(["segment", "wait_state", "burst", "t_s", "iops", "idle_before_s"])
        for seg in h.segments:
            for i, pt in enumerate(seg.points, start=1):
                w.writerow([seg.kind, seg.wait_state, i, _num(pt.t_s, 9), _num(pt.iops), _num(pt.idle_s)])
    return out.getvalue()
