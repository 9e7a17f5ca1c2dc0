"""The steps of a TPC-H run, in the worker (the TPC-H user, in the run directory: worker.py):
generate the data, start the private DBMS, load, the power test, the throughput test, and the
`tpch` document with the spec's metrics (spec.py) and the label every output carries."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from iowatt_workload import TPCH_DEFAULT_BUFFER_POOL_BYTES, TPCH_LABEL, tpch_min_streams

from .data import ANSWER_SCALE_FACTORS, EXTENSION_COPY, copy_extension, generate, remove_files
from .dbms import DbmsError, Instance
from .isolation import HERE
from .options import TpchOptions
from .spec import power_at_size, qphh_at_size, throughput_at_size
from .workload import Workload


def run_in(
    opts: TpchOptions,
    run_dir: Path,
    instance: Instance,
    progress: Any,
    stop: threading.Event,
    extension_fd: int,
) -> dict[str, Any]:
    """The run itself, in the worker: its working directory is `run_dir` (all paths relative).
    `extension_fd` is DuckDB's tpch extension, read-only: copied here for the generator (the
    worker may not reach the agent's installation) and removed once the data is made."""
    sf, streams = opts.scale_factor, opts.streams
    progress(f"generating data at SF {sf:g} with DuckDB's dbgen")
    copy = HERE / EXTENSION_COPY
    try:
        copy_extension(extension_fd, copy)
        gen = generate(HERE / "gen", sf, refresh_sets=streams + 1, extension=copy)
    finally:
        copy.unlink(missing_ok=True)
    progress(f"starting a private {opts.dbms} in {instance.directory}")
    try:
        instance.start()
    except DbmsError as exc:
        raise DbmsError(f"{exc} {instance.log_tail()}".strip()) from None
    work = Workload(instance, gen, opts.query_timeout_s)
    load_s = work.load(progress)
    remove_files(gen)
    settings = instance.settings()
    power_q, power_rf = work.power_test(progress)
    if stop.is_set():
        raise KeyboardInterrupt
    tp_q, tp_rf, throughput_s = work.throughput_test(streams, stop, progress)
    if stop.is_set():
        raise KeyboardInterrupt
    timings = [*power_q, *tp_q]
    incomplete = [t for t in timings if t.timed_out or t.error]
    metrics: dict[str, float | None] = {
        "power_at_size": None,
        "throughput_at_size": None,
        "qphh_at_size": None,
    }
    if not incomplete:
        by_query = {t.query: t.seconds for t in power_q}
        power = power_at_size(sf, [by_query[q] for q in range(1, 23)], [r.seconds for r in power_rf])
        throughput = throughput_at_size(sf, streams, throughput_s)
        metrics = {
            "power_at_size": power,
            "throughput_at_size": throughput,
            "qphh_at_size": qphh_at_size(power, throughput),
        }
    checked = [t for t in timings if t.answer_ok is not None]
    return {
        "label": TPCH_LABEL,
        "dbms": opts.dbms,
        "dbms_version": instance.version,
        "scale_factor": sf,
        "streams": streams,
        "streams_minimum": tpch_min_streams(sf),
        "generate_s": round(gen.generate_s, 6),
        "load_s": round(load_s, 6),
        **{k: (None if v is None else round(v, 6)) for k, v in metrics.items()},
        "metrics_note": (
            None
            if not incomplete
            else f"not computed: {len(incomplete)} queries timed out or failed (marked in queries)"
        ),
        "throughput_s": round(throughput_s, 6),
        "refresh": {
            "present": True,
            "functions": "RF1 inserts SF x 1500 new orders with their lineitems; RF2 deletes them",
            "orders_per_function": gen.refresh_orders,
            "data": "the generator's orders and lineitems re-keyed into the order keys dbgen leaves "
            "unused (DuckDB's dbgen writes no update sets)",
            "timings": [r.as_dict() for r in (*power_rf, *tp_rf)],
        },
        "queries": [t.as_dict() for t in timings],
        "answers": {
            "checked": len(checked),
            "ok": sum(1 for t in checked if t.answer_ok),
            "reference": gen.reference_source,
            "reference_matches_tpch_answers": gen.reference_checked,
            "tpch_answers_scale_factors": list(ANSWER_SCALE_FACTORS),
        },
        "query_timeout_s": opts.query_timeout_s,
        "timeouts": sum(1 for t in timings if t.timed_out),
        "substitution_parameters": "the spec's validation values (qgen -d), the same in every stream",
        "query_order": "power test Q1..Q22; throughput stream s: a permutation seeded by s",
        "schema": "the spec's tables and types, primary keys, indexes on the foreign-key columns",
        "buffer_pool": {
            "bytes": settings.get("buffer_pool_bytes"),
            "note": "small on purpose, so the device under test serves most reads"
            + (
                " (the default)"
                if opts.buffer_pool_bytes == TPCH_DEFAULT_BUFFER_POOL_BYTES
                else " (--buffer-pool)"
            ),
        },
        "settings": settings,
        "generator": gen.generator,
        "target": str(opts.target),
        "instance_directory": str(instance.directory),
    }
