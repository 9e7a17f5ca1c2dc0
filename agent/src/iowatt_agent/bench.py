"""`iowatt-agent bench`: run the engine locally, no server. The target gets the same safe options
as a server's run (ADR 0009 §5); with a meter the run is measured like a lease (`measured`): idle
baseline, load, idle baseline, then energy and CO2 figures."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import uuid
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

from iowatt_policy import MAX_JOBFILE_CHARS
from iowatt_workload import WorkloadKind, kind_of_mode

from . import filework, presets
from . import policy as host_policy
from .args import check_meter_spec, fail
from .bench_args import BenchArgs
from .engine import EngineNotFound, locate_engine
from .kinds import runner_for_job
from .kinds.jobfile import JobfileRunner
from .measured import run_measured
from .pagecache import PageCacheProbe, is_buffered
from .power import DEFAULT_IDLE_S, Grid, PowerSession, energy_and_carbon
from .render import BenchProgress, err, print_result, render_energy, stdout_console
from .runner import EngineOutcome, EngineProcess
from .targets_cli import meter_for_bench, parse_engine_args

BENCH_DEFAULTS = {"rw": "randread", "bs": "4k", "size": "64m", "runtime": "5"}


def bench_job(base: dict[str, Any], extra: dict[str, str], target_options: dict[str, str]) -> dict[str, Any]:
    job = {k: v for k, v in base.items() if v is not None}
    job.update(extra)
    name = str(job.pop("name", "bench"))
    return {"global": dict(target_options), "jobs": [{"name": name, **job}]}


def bench_job_for(
    options: dict[str, str | None],
    extra: dict[str, str],
    preset: str | None,
    target_options: dict[str, str],
) -> dict[str, Any]:
    """bench's engine job: one job from the options (bench's defaults for those not given), or
    a preset's jobs, which the options given explicitly override. ValueError: a bad preset."""
    if preset is None:
        return bench_job(
            {**options, **{k: options[k] or v for k, v in BENCH_DEFAULTS.items()}}, extra, target_options
        )
    given = {k: str(v) for k, v in options.items() if v is not None and k != "name"}
    job = presets.job_file(preset, target_options["filename"], {**given, **extra})
    job["global"].pop("filename", None)
    return host_policy.with_agent_options(job, target_options)


def run_bench(a: BenchArgs) -> None:
    """Check everything first (exit 2), run the measured sequence (Ctrl-C: exit 130), print: the
    bench of the preset's kind (BENCH_RUNNERS)."""
    if a.jobfile is not None:
        run_jobfile_bench(a)
        return
    BENCH_RUNNERS[preset_kind(a.preset)](a)


def preset_kind(preset: str | None) -> WorkloadKind:
    """The workload kind `bench --preset NAME` runs: the flag-driven presets by name, a shipped
    preset by its job's mode (libs/workload's kind_of_mode), a block run without a preset. An
    unknown name is a block preset here: bench_job_for then names the presets that exist."""
    if preset is None:
        return "block"
    if preset in FLAG_PRESETS:
        return FLAG_PRESETS[preset]
    if not presets.is_file_preset(preset):
        return "block"
    kind = kind_of_mode(str(presets.get(preset)["engine_job"]["mode"]))
    if kind is None:  # pragma: no cover - presets.json is exported from the server's kinds
        raise fail(f"--preset {preset}: a workload mode this agent does not know", 2)
    return kind


def run_tpch(a: BenchArgs) -> None:
    """A DBMS workload, not an engine job: tpch/bench.py (imported only when asked for)."""
    from .tpch.bench import run_tpch_bench

    raise SystemExit(run_tpch_bench(a))


def run_heap_btree(a: BenchArgs) -> None:
    """The engine's --heap-btree mode, not a job file: heap_btree.py."""
    from .heap_btree import run_heap_btree_bench

    raise SystemExit(run_heap_btree_bench(a.extra, a.target, a.json_output, a.engine, a.meter))


def run_block_bench(a: BenchArgs) -> None:
    """An engine job file: bench's options (or a block preset's jobs) on the target."""
    if a.scale is not None:
        raise fail(
            "--scale applies to the file presets (postmark-*, vdbench-*); a block run takes --runtime", 2
        )
    try:
        extra = parse_engine_args(a.extra)
        consent = extra.pop("destructive", "0") not in ("0", "false", "no", "off")
        engine_path = locate_engine(a.engine)
        kind, real = host_policy.local_target(a.target)
        target_options, data_file = host_policy.engine_options(
            kind, real, f"bench-{uuid.uuid4().hex[:12]}", writable=True, destructive=consent
        )
    except (ValueError, EngineNotFound) as exc:
        raise fail(str(exc), 2) from None
    meter_name, meter, grid_choice = _meter_and_grid(a)
    try:
        job = bench_job_for(a.options, extra, a.preset, target_options)
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    job_dir = Path(os.environ.get("TMPDIR", "/tmp"))
    proc = EngineProcess(
        engine_path,
        job,
        job_file=job_dir / f"iowatt-bench-job-{os.getpid()}.json",
        progress_interval_s=0.25,
        output_format=a.output_format,
    )
    _run_and_print(a, proc, meter_name, meter, grid_choice, data_file=data_file)


def split_jobfile(args: list[str]) -> tuple[Path | None, list[str]]:
    """`bench FILE.fio ...`: the job file among bench's extra arguments (the first that is not an
    option nor the value of a bare `--name` before it) and the other arguments."""
    for i, arg in enumerate(args):
        if arg.startswith("-"):
            continue
        before = args[i - 1] if i else ""
        if before.startswith("--") and "=" not in before:
            continue  # `--name value`: the option's value
        return Path(arg), args[:i] + args[i + 1 :]
    return None, args


def run_jobfile_preset_bench(a: BenchArgs) -> None:
    """A shipped preset that is a fio job file (`writeback`, `qos-*`): its text run as `bench
    FILE.fio` runs a file (the job file's own options only: --scale and engine options refused)."""
    assert a.preset is not None
    text = str(presets.get(a.preset)["engine_job"]["text"])
    scratch = Path(tempfile.mkdtemp(prefix="iowatt-bench-"))  # 0700, ours alone
    try:
        path = scratch / f"{a.preset}.fio"
        path.write_text(text)
        run_jobfile_bench(dataclasses.replace(a, jobfile=path, preset=None))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def run_jobfile_bench(a: BenchArgs) -> None:
    """`bench FILE.fio` (ADR 0029): the job file read by the engine as fio reads it (the local
    user's own file: include and ${VAR} work), its jobs run as a server's job file runs, the
    file's filename and directory replaced by --target, which gets a block run's safe options."""
    assert a.jobfile is not None
    given = sorted(k for k, v in a.options.items() if v is not None and k != "name")
    if given or a.extra or a.preset is not None or a.scale is not None:
        shown = ", ".join([*(f"--{k}" for k in given), *a.extra, *(["--preset"] if a.preset else [])])
        raise fail(f"{shown or '--scale'}: a job file runs as written (edit the file instead)", 2)
    try:
        text = a.jobfile.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise fail(f"{a.jobfile}: {getattr(exc, 'strerror', None) or exc}", 2) from None
    if len(text.encode()) > MAX_JOBFILE_CHARS:
        raise fail(f"{a.jobfile}: larger than {MAX_JOBFILE_CHARS // 1024} KiB", 2)
    try:
        engine_path = locate_engine(a.engine)
        kind, real = host_policy.local_target(a.target)
        target_options, data_file = host_policy.engine_options(
            kind, real, f"bench-{uuid.uuid4().hex[:12]}", writable=True, destructive=False
        )
    except (ValueError, EngineNotFound) as exc:
        raise fail(str(exc), 2) from None
    meter_name, meter, grid_choice = _meter_and_grid(a)
    runner = JobfileRunner()
    scratch = Path(tempfile.mkdtemp(prefix="iowatt-bench-"))  # 0700, ours alone
    try:
        scratch_file = scratch / "job.fio"
        try:
            # the user's own file is read where it is (include finds its neighbours)
            parse = filework.parse_only(engine_path, [], file=a.jobfile.resolve())
            job = runner.checked_job(engine_path, parse, text_file=scratch_file, untrusted=False)
            job = host_policy.with_agent_options(job, target_options)
        except filework.FileJobRefused as exc:
            raise fail(f"{a.jobfile}: {exc.message}", 2) from None
        except ValueError as exc:
            raise fail(f"{a.jobfile}: {exc}", 2) from None
        proc = EngineProcess(
            engine_path,
            job,
            job_file=scratch / "job.json",
            progress_interval_s=0.25,
            output_format=a.output_format,
        )
        _run_and_print(a, proc, meter_name, meter, grid_choice, data_file=data_file)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _meter_and_grid(a: BenchArgs) -> tuple[str | None, str | None, Grid | None]:
    """bench's meter (by name from the host's meters, or a spec) and grid; exit 2 when wrong."""
    if a.output_format not in ("json", "json+"):
        raise fail(f"--output-format must be json or json+, got {a.output_format!r}", 2)
    energy_options = a.idle is not None or a.grid is not None or a.grid_g_per_kwh is not None
    if a.meter is None and (energy_options or a.pue != 1.0):
        raise fail("--idle, --grid, --grid-g-per-kwh and --pue need --meter SPEC", 2)
    grid_choice = None
    meter_name, meter = None, a.meter
    if meter is not None:
        meter_name, meter = meter_for_bench(meter)
        check_meter_spec(meter)
        try:
            grid_choice = Grid.choose(a.grid, a.grid_g_per_kwh)
        except ValueError as exc:
            raise fail(str(exc), 2) from None
    return meter_name, meter, grid_choice


def run_file_bench(a: BenchArgs) -> None:
    """A file preset (PostMark, vdbench file set) in a directory: its text in a private temp
    directory, the engine's --parse-only first (exit 2 with its message), then the run in
    `<DIR>/iowatt-bench-<id>`, removed afterwards with everything in it."""
    assert a.preset is not None
    given = sorted(k for k, v in a.options.items() if v is not None and k != "name")
    if given or a.extra:
        shown = ", ".join([*(f"--{k}" for k in given), *a.extra])
        raise fail(f"{shown}: engine options apply to block workloads; a file preset takes --scale", 2)
    if a.scale is not None and not (0 < a.scale <= 1000):
        raise fail(f"--scale must be above 0 and at most 1000, got {a.scale:g}", 2)
    try:
        engine_path = locate_engine(a.engine)
        kind, real = host_policy.local_target(a.target)
    except (ValueError, EngineNotFound) as exc:
        raise fail(str(exc), 2) from None
    if kind != "directory":
        raise fail(
            f"--target {a.target}: a file workload runs in a directory (it makes its file set there)", 2
        )
    meter_name, meter, grid_choice = _meter_and_grid(a)
    scratch = Path(tempfile.mkdtemp(prefix="iowatt-bench-"))  # 0700, ours alone
    try:
        job = dict(presets.get(a.preset)["engine_job"])
        mode = str(job["mode"])
        key = f"bench-{uuid.uuid4().hex[:12]}"
        runner = runner_for_job(job)
        try:
            if a.scale is not None:
                job = runner.scaled_job(engine_path, job, a.scale, scratch=scratch)
            run = runner.prepare(
                engine_path,
                job,
                text_file=scratch / filework.text_file_name(key, mode),
                target=real,
                run_key=key,
            )
        except filework.FileJobRefused as exc:
            raise fail(exc.message, 2) from None
        proc = EngineProcess(
            runner.program(run, engine_path),  # the engine, or the kind's own child (innodb_flush)
            job,
            job_file=run.text_file,
            progress_interval_s=0.25,
            output_format=a.output_format,
            mode_argv=runner.arguments(run),
            phases=runner.phases(run),
            phase_of=runner.progress_phase,
        )
        _run_and_print(a, proc, meter_name, meter, grid_choice, data_file=None, file_run=run)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _run_and_print(
    a: BenchArgs,
    proc: EngineProcess,
    meter_name: str | None,
    meter: str | None,
    grid_choice: Grid | None,
    *,
    data_file: Path | None,
    file_run: filework.FileRun | None = None,
) -> None:
    shown = BenchProgress()
    proc.on_progress = shown.on_progress
    proc.on_message = shown.on_message
    idle_s = DEFAULT_IDLE_S if a.idle is None else a.idle
    session = PowerSession(meter, idle_s=idle_s, target=a.target, name=meter_name) if meter else None
    interrupted = threading.Event()

    def on_sigint(_signum: int, _frame: FrameType | None) -> None:
        interrupted.set()
        proc.stop("interrupted")

    old = signal.signal(signal.SIGINT, on_sigint)
    try:
        with shown.shown():
            measured = run_measured(
                proc,
                session,
                stop=interrupted,
                data_file=data_file,
                on_idle=shown.on_idle,
                tick_s=0.25,
                on_meter_started=warn_no_meter_data,
                file_run=file_run,
                page_cache=PageCacheProbe(a.target, buffered=is_buffered(proc.job)),
            )
    finally:
        signal.signal(signal.SIGINT, old)
    if interrupted.is_set() or measured.outcome is None:
        raise fail("interrupted: engine stopped", 130)
    finish_bench(measured.outcome, a.json_output, a.preset, measured.power, grid_choice, a.pue)


def warn_no_meter_data(session: PowerSession) -> None:
    if not session.measuring:
        err.print(f"[yellow]meter:[/] no meter data: {session.reason}", highlight=False)


def finish_bench(
    outcome: EngineOutcome,
    json_output: bool,
    preset: str | None,
    power: dict[str, Any] | None,
    grid: Grid | None,
    pue: float,
) -> None:
    """Exit with the engine's failure, or print the result (JSON or tables), with energy and
    CO2 figures when a meter measured the run."""
    if not outcome.ok:
        code = outcome.exit_code if outcome.exit_code in (1, 2, 77) else 1
        message = outcome.error or "engine failed"
        if outcome.messages and message.endswith(outcome.messages[-1]):
            message = message[: -len(outcome.messages[-1])].rstrip(": ") + " (engine message above)"
        raise fail(message, code)
    assert outcome.result is not None
    if power is None or grid is None:
        if json_output:  # the engine's document, with the agent's page cache record (pagecache.py)
            text = json.dumps(outcome.result) if "page_cache" in outcome.result else outcome.stdout.strip()
            sys.stdout.write(text + "\n")
        else:
            print_any_result(outcome.result, preset)
        return
    try:
        energy, carbon = energy_and_carbon(power, outcome.result, grid=grid, pue=pue)
    except ValueError as exc:  # samples that cannot be integrated: say so, keep the result
        energy, carbon = {"status": "error", "reason": str(exc), "source": power["meter"]["spec"]}, None
    if json_output:
        doc = {**outcome.result, "power": power, "energy": energy, "carbon": carbon}
        sys.stdout.write(json.dumps(doc) + "\n")
    else:
        print_any_result(outcome.result, preset, energy, carbon)


def print_any_result(
    result: dict[str, Any],
    preset: str | None,
    energy: dict[str, Any] | None = None,
    carbon: dict[str, Any] | None = None,
) -> None:
    """bench's human output: a block result's tables, or a file workload's summary lines."""
    if "postmark" not in result and "fileset" not in result and "innodb_flush" not in result:
        print_result(result, preset, energy, carbon)
        return
    console = stdout_console()
    for line in file_summary(result):
        console.print(line, highlight=False)
    if energy is not None:
        render_energy(console, energy, carbon)


def file_summary(result: dict[str, Any]) -> list[str]:
    """A few lines of a PostMark, file-set or InnoDB flushing result, with units."""
    if isinstance(result.get("innodb_flush"), dict):
        from .innodb.sysbench import summary_lines

        return summary_lines(result["innodb_flush"])
    pm = result.get("postmark")
    if isinstance(pm, dict):
        rates = pm.get("rates") or {}
        return [
            f"PostMark: {float(pm.get('elapsed_ns') or 0) / 1e9:.3f} s, "
            f"{pm.get('transactions')} transactions ({float(rates.get('transactions_per_s') or 0):,.0f}/s)",
            f"files: {pm.get('files_created')} created, {pm.get('files_read')} read, "
            f"{pm.get('files_appended')} appended, {pm.get('files_deleted')} deleted",
            f"data: {int(pm.get('bytes_read') or 0) / 1e6:,.1f} MB read, "
            f"{int(pm.get('bytes_written') or 0) / 1e6:,.1f} MB written",
        ]
    fs = result.get("fileset") or {}
    total = fs.get("total") or {}
    lines = [
        f"file set: scale {fs.get('scale')}, {float(total.get('duration_ns') or 0) / 1e9:.1f} s measured"
    ]
    for name, op in sorted((total.get("ops") or {}).items()):
        resp = (op.get("resp_ns") or {}).get("mean") or 0
        lines.append(
            f"  {name}: {float(op.get('rate') or 0):,.1f} ops/s, {float(resp) / 1e6:.3f} ms mean response"
        )
    lines.append(
        f"read {float(total.get('read_bw_bytes') or 0) / 1e6:,.1f} MB/s, "
        f"write {float(total.get('write_bw_bytes') or 0) / 1e6:,.1f} MB/s"
    )
    return lines


# presets whose options are bench's own flags (--dbms, --scale-factor, --records ...), not a job
# in presets.json
FLAG_PRESETS: dict[str, WorkloadKind] = {"tpch": "tpch", "heap-btree": "heap_btree"}
# how bench runs each kind (a kind without an entry has no offline bench)
BENCH_RUNNERS: dict[WorkloadKind, Callable[[BenchArgs], None]] = {
    "block": run_block_bench,
    "postmark": run_file_bench,
    "vdbench": run_file_bench,
    "tpch": run_tpch,
    "heap_btree": run_heap_btree,
    "jobfile": run_jobfile_preset_bench,
    "innodb_flush": run_file_bench,  # its runner's child, not the engine (kinds/innodb_flush.py)
}
