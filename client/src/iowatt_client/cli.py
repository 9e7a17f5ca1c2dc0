"""`iowatt`: the command for people and scripts (docs/scripting.md), on the client of this package.

    iowatt login URL --token T | --email E     runs list|show|cancel|delete     run WORKLOAD
    compare RUN...     import FILE...     export     views     agents     ci [WORKLOAD | --run RUN]

`--json` on every command prints the API's answer for scripts; shell completion with
`--install-completion` / `--show-completion`. Exit codes (EXIT_* below, documented and each
tested in tests/client): 0 ok; 1 a failed or cancelled run, a comparison or a `ci` verdict with a
regression, or an error of the server or the network; 2 usage (a bad option, an invalid request:
422); 3 auth (no login, a bad or expired token, not allowed: 401/403); 4 not found (404).

Start-up is kept cheap (the command is called many times by scripts and the test suite): httpx,
pydantic and rich are imported inside the commands, only typer at start."""

from __future__ import annotations

import functools
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from . import __version__

if TYPE_CHECKING:
    from .client import Client

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_AUTH, EXIT_NOT_FOUND = 0, 1, 2, 3, 4
FINAL = ("succeeded", "failed", "cancelled")
JOBFILE_SUFFIXES = (".fio", ".ini", ".job", ".jobfile")

app = typer.Typer(
    name="iowatt",
    help="iowatt from a terminal or a script: runs, comparisons, imports, exports. Exit codes: 0 ok, "
    "1 failed run / regression / server error, 2 usage, 3 auth, 4 not found.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)
runs_app = typer.Typer(help="List, show, cancel and delete runs.", no_args_is_help=True)
views_app = typer.Typer(help="The named views (CrystalDiskMark, AS SSD...) for some runs.")
app.add_typer(runs_app, name="runs")
app.add_typer(views_app, name="views")

JsonOpt = Annotated[bool, typer.Option("--json", help="Print the API's answer as JSON (for scripts)")]
F = TypeVar("F", bound=Callable[..., Any])


def _version(value: bool) -> None:
    if value:
        typer.echo(f"iowatt {__version__}")
        raise typer.Exit(0)


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version")
    ] = False,
) -> None:
    pass


# --- plumbing: the client, errors as exit codes, output --------------------------------------------


def _err(message: str) -> None:
    typer.echo(f"iowatt: {message}", err=True)


def handles_errors(fn: F) -> F:
    """Each command: the client's errors become one stderr line and the documented exit code."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        from .config import ConfigMissing
        from .errors import ApiError, AuthError, NotFoundError, TransportError, ValidationFailed

        try:
            return fn(*args, **kwargs)
        except ConfigMissing as e:
            _err(str(e))
            raise typer.Exit(EXIT_AUTH) from None
        except ApiError as e:
            line = f"{e.status} {e.code}: {e.message}"
            if e.request_id:
                line += f" (request {e.request_id})"
            _err(line)
            if isinstance(e.detail, list):
                for d in e.detail[:10]:
                    if isinstance(d, dict):
                        _err("  " + ", ".join(f"{k}={v}" for k, v in d.items() if v is not None))
            if isinstance(e, AuthError):
                raise typer.Exit(EXIT_AUTH) from None
            if isinstance(e, NotFoundError):
                raise typer.Exit(EXIT_NOT_FOUND) from None
            if isinstance(e, ValidationFailed):
                raise typer.Exit(EXIT_USAGE) from None
            raise typer.Exit(EXIT_FAILED) from None
        except TransportError as e:
            _err(str(e))
            raise typer.Exit(EXIT_FAILED) from None

    return wrapper  # type: ignore[return-value]


def _client() -> Client:
    from .client import Client
    from .config import load

    cfg = load()
    return Client(cfg.url, cfg.token)


def _print_json(data: Any) -> None:
    from pydantic import BaseModel

    def default(o: Any) -> Any:
        if isinstance(o, BaseModel):
            return o.model_dump(mode="json")
        return str(o)

    typer.echo(json.dumps(data, indent=2, default=default))


def _table(columns: list[str], rows: list[list[Any]], title: str | None = None) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=title)
    for c in columns:
        t.add_column(c)
    for r in rows:
        t.add_row(*("" if v is None else str(v) for v in r))
    Console().print(t)


def _team(client: Client, team: str | None) -> str:
    teams = client.me().teams
    if team:
        for t in teams:
            if team in (t.id, t.name):
                return t.id
        _err(f"no team {team!r} among yours: {', '.join(t.name for t in teams)}")
        raise typer.Exit(EXIT_NOT_FOUND)
    if len(teams) != 1:
        _err(f"you are in {len(teams)} teams: name one with --team ({', '.join(t.name for t in teams)})")
        raise typer.Exit(EXIT_USAGE)
    return teams[0].id


# --- login ----------------------------------------------------------------------------------------


@app.command()
@handles_errors
def login(
    url: Annotated[str | None, typer.Argument(help="The server, e.g. https://iowatt.example.com")] = None,
    token: Annotated[
        str | None, typer.Option(help="An API token (Settings > Tokens); else --email and a password")
    ] = None,
    email: Annotated[str | None, typer.Option(help="Sign in with e-mail and password (prompted)")] = None,
    password: Annotated[str | None, typer.Option(hidden=True, envvar="IOWATT_PASSWORD")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Store the server's URL and a token in a 0600 config file (IOWATT_URL/IOWATT_TOKEN win over it)."""
    import os

    from .client import Client
    from .config import URL_ENV, read_file, save

    url = url or os.environ.get(URL_ENV) or read_file().get("url")
    if not url:
        _err("name the server: iowatt login URL")
        raise typer.Exit(EXIT_USAGE)
    if token is None and email is None:
        _err("give --token TOKEN (an API token) or --email EMAIL")
        raise typer.Exit(EXIT_USAGE)
    if token is None:
        password = password or typer.prompt("Password", hide_input=True)
        with Client(url) as anon:
            token = anon.call("login", json={"email": email, "password": password})["access_token"]
    assert token is not None
    with Client(url, token) as c:
        me = c.me()
    path = save(url, token)
    if json_out:
        _print_json({"url": url.rstrip("/"), "email": me.email, "config": str(path)})
    else:
        typer.echo(f"signed in to {url} as {me.email}; stored in {path}")


# --- runs ------------------------------------------------------------------------------------------


def _run_rows(runs: list[Any]) -> list[list[Any]]:
    return [
        [
            r.id,
            r.name,
            r.status,
            r.preset or "",
            r.agent_name,
            r.device_name or "",
            r.created_at.strftime("%Y-%m-%d %H:%M"),
        ]
        for r in runs
    ]


RUN_COLUMNS = ["id", "name", "status", "preset", "agent", "device", "created (UTC)"]


@runs_app.command("list")
@handles_errors
def runs_list(
    status: Annotated[
        list[str] | None, typer.Option(help="queued, running, succeeded... (repeatable)")
    ] = None,
    q: Annotated[
        str | None, typer.Option(help="Words in the run's name, device, workload, agent or tags")
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="A tag the runs carry (repeatable)")] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many runs (newest first)")] = 50,
    all_runs: Annotated[bool, typer.Option("--all", help="Every run, page after page")] = False,
    json_out: JsonOpt = False,
) -> None:
    """The team's runs, newest first."""
    filters: dict[str, Any] = {"status": status or None, "q": q, "tag": tag or None}
    with _client() as c:
        if all_runs:
            runs = list(c.iter_runs(**filters))
            total, exact = len(runs), True
        else:
            page = c.list_runs(limit=min(limit, 500), **filters)
            runs, total, exact = list(page.items), page.total, page.total_exact
    if json_out:
        _print_json({"items": runs, "total": total, "total_exact": exact})
    else:  # the server counts up to 1,000 past the page: "1,000+" when more match
        _table(RUN_COLUMNS, _run_rows(runs), title=f"{len(runs)} of {total}{'' if exact else '+'} runs")


@runs_app.command("show")
@handles_errors
def runs_show(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="The run's id")],
    result: Annotated[bool, typer.Option("--result", help="With the engine's result document")] = False,
    json_out: JsonOpt = False,
) -> None:
    """One run: its state, workload, device and (with --result) the engine's result."""
    with _client() as c:
        run = c.get_run(run_id)
        doc = c.get_result(run_id) if result else None
    if json_out:
        _print_json({**run.model_dump(mode="json"), **({"result": doc} if result else {})})
        return
    _table(
        ["field", "value"],
        [
            [k, getattr(run, k)]
            for k in (
                "id",
                "name",
                "status",
                "preset",
                "agent_name",
                "target_path",
                "device_name",
                "source",
                "created_at",
                "started_at",
                "finished_at",
                "error",
            )
        ]
        + (
            [["origin", run.origin.label]]
            + [[f"imported file {f.file_name}", f.url] for f in run.origin.files]
            if run.origin is not None
            else []
        ),
    )
    if doc is not None:
        typer.echo(json.dumps(doc, indent=2))


@runs_app.command("cancel")
@handles_errors
def runs_cancel(run_id: Annotated[str, typer.Argument(metavar="RUN")], json_out: JsonOpt = False) -> None:
    """Cancel a queued or running run (a running one stops at the agent's next report)."""
    with _client() as c:
        run = c.cancel_run(run_id)
    if json_out:
        _print_json(run)
    else:
        typer.echo(f"{run.id}: {run.status}{' (cancel requested)' if run.status not in FINAL else ''}")


@runs_app.command("delete")
@handles_errors
def runs_delete(
    run_id: Annotated[str, typer.Argument(metavar="RUN")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask")] = False,
    json_out: JsonOpt = False,
) -> None:
    """Delete a finished run and its results."""
    if not yes and not json_out and sys.stdin.isatty() and not typer.confirm(f"delete run {run_id}?"):
        raise typer.Exit(EXIT_USAGE)
    with _client() as c:
        c.delete_run(run_id)
    if json_out:
        _print_json({"id": run_id, "deleted": True})
    else:
        typer.echo(f"{run_id}: deleted")


# --- run -------------------------------------------------------------------------------------------


def _workload(c: Client, what: str) -> dict[str, Any]:
    """A preset or saved workload by name or id, a JSON workload spec file, or a fio job file."""
    p = Path(what)
    if p.is_file():
        text = p.read_text()
        if p.suffix.lower() == ".json":
            try:
                spec = json.loads(text)
            except ValueError as e:
                _err(f"{p}: not JSON ({e})")
                raise typer.Exit(EXIT_USAGE) from None
            return {"workload": spec.get("workload", spec) if isinstance(spec, dict) else spec}
        if p.suffix.lower() in JOBFILE_SUFFIXES or text.lstrip().startswith(("[", ";", "#")):
            return {"workload": {"kind": "jobfile", "jobfile": {"text": text}}}
        _err(f"{p}: neither a .json workload spec nor a fio job file ({', '.join(JOBFILE_SUFFIXES)})")
        raise typer.Exit(EXIT_USAGE)
    for w in c.list_workloads():
        if what in (w.id, w.name):
            return {"workload_id": w.id}
    _err(f"no preset or workload {what!r} (nor a file of that name); `iowatt run --list` names them")
    raise typer.Exit(EXIT_NOT_FOUND)


def _agent(c: Client, name: str | None) -> str:
    agents = [a for a in c.list_agents() if a.state != "revoked"]
    if name:
        for a in agents:
            if name in (a.id, a.name, a.hostname):
                return a.id
        _err(f"no agent {name!r}: {', '.join(a.name for a in agents) or 'none enrolled'}")
        raise typer.Exit(EXIT_NOT_FOUND)
    if len(agents) != 1:
        _err(f"{len(agents)} agents: name one with --agent ({', '.join(a.name for a in agents)})")
        raise typer.Exit(EXIT_USAGE)
    return agents[0].id


def progress_of(c: Client, run_id: str, since_t_s: float | None) -> Any:
    """GET /runs/{id}/progress since the report last seen; from a server older than that route (405:
    the path answers only the agent's POST), the whole run, which has the same two fields."""
    from .errors import ApiError

    try:
        return c.call("get_progress", run_id=run_id, params={"since_t_s": since_t_s})
    except ApiError as e:
        if e.status != 405:
            raise
        return c.get_run(run_id).model_dump(mode="json")


def run_percent(status: str, progress: dict[str, Any]) -> float:
    """The bar's share: the whole run's (the server's `run_percent`: idle baselines, every job), not
    the engine's `percent` of the current job (a run in the 5th of its 80 jobs read 87 %); the job's
    own from a server older than the field."""
    if status in FINAL:
        return 100.0
    return float(progress.get("run_percent", progress.get("percent", 0.0)))


def follow(
    c: Client, run_id: str, *, show: bool, interval_s: float = 1.0, timeout_s: float | None = None
) -> Any:
    """Poll the run until it ends; a progress bar on stderr while it runs when `show`."""
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    bar = task = None
    if show:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>5.1f}%"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
            transient=False,
        )
        bar.start()
        task = bar.add_task("queued", total=100)
    since: float | None = None  # the t_s of the last engine report seen: none is asked twice
    try:
        while True:
            # the run's status and latest report (~0.5 KB), not the whole run (an 80-job run with its
            # reports: ~66 KB), each second; the whole run once it ended
            live = progress_of(c, run_id, since)
            status, p = live["status"], live.get("progress") or {}
            since = (p.get("samples") or [{"t_s": since}])[-1]["t_s"]
            if bar is not None and task is not None:
                desc = status if not p else f"{status}: {p.get('job_name', '')}"
                bar.update(task, description=desc[:60], completed=run_percent(status, p))
            if status in FINAL:
                return c.get_run(run_id)
            if deadline is not None and time.monotonic() > deadline:
                _err(f"run {run_id} is still {status} after {timeout_s:g} s (it goes on: iowatt runs show)")
                raise typer.Exit(EXIT_FAILED)
            time.sleep(interval_s)
    finally:
        if bar is not None:
            bar.stop()


@app.command("run")
@handles_errors
def run_cmd(
    workload: Annotated[
        str | None,
        typer.Argument(help="A preset or saved workload (name or id), a .json spec or a .fio job file"),
    ] = None,
    target: Annotated[
        list[str] | None,
        typer.Option(
            help="The target directory or device on the agent's host; give it again for a run on "
            "several targets of the agent at once (block workloads)"
        ),
    ] = None,
    agent: Annotated[
        str | None, typer.Option(help="The agent (name, hostname or id); default: the only one")
    ] = None,
    member: Annotated[
        list[str] | None,
        typer.Option(
            metavar="AGENT:PATH",
            help="A group run: this agent's target, started at one instant with the other members' "
            "(give it once per agent, at least twice; instead of --target)",
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="The run's name")] = None,
    shorten: Annotated[
        float | None, typer.Option(min=0.01, max=0.99, help="Block workloads: each runtime times this factor")
    ] = None,
    scale: Annotated[
        float | None, typer.Option(min=0.0001, help="File workloads: their size times this")
    ] = None,
    idle_s: Annotated[
        float | None, typer.Option(help="Idle baseline before and after, s (default: the host's)")
    ] = None,
    environment: Annotated[str | None, typer.Option(help="An environment's id")] = None,
    wait: Annotated[bool, typer.Option(help="Follow the run until it ends (exit 1 if it fails)")] = True,
    timeout: Annotated[
        float | None, typer.Option(help="Stop waiting after this many seconds (exit 1)")
    ] = None,
    list_presets: Annotated[
        bool, typer.Option("--list", help="List the presets and saved workloads")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Queue a run on an agent's target and follow it live; exit 1 when it fails or is cancelled."""
    with _client() as c:
        if list_presets:
            ws = c.list_workloads()
            if json_out:
                _print_json(ws)
            else:
                _table(
                    ["name", "builtin", "description"], [[w.name, w.builtin, w.description[:80]] for w in ws]
                )
            return
        if workload is not None and member and not target:
            opts = {"name": name, "shorten": shorten, "idle_s": idle_s, "environment_id": environment}
            _run_group(c, workload, member, opts, wait=wait, timeout_s=timeout, json_out=json_out)
            return
        if workload is None or not target:
            _err("give a WORKLOAD and --target PATH (iowatt run --list names the presets)")
            raise typer.Exit(EXIT_USAGE)
        body: dict[str, Any] = {"agent_id": _agent(c, agent), **_workload(c, workload)}
        if len(target) == 1:
            body["target_path"] = target[0]
        else:  # one run on every target at once, its result per target and combined
            body["targets"] = [{"target_path": t} for t in target]
        for k, v in (
            ("name", name),
            ("shorten", shorten),
            ("scale", scale),
            ("idle_s", idle_s),
            ("environment_id", environment),
        ):
            if v is not None:
                body[k] = v
        run = c.create_run(body)
        if not json_out:
            paths = ", ".join(t["target_path"] for t in run.targets) or run.target_path
            typer.echo(f"queued {run.id} ({run.name}) on {run.agent_name}:{paths}", err=True)
        if wait:
            run = follow(c, run.id, show=not json_out, timeout_s=timeout)
    if json_out:
        _print_json(run)
    else:
        typer.echo(f"{run.id}: {run.status}" + (f": {run.error}" if run.error else ""))
    if wait and run.status != "succeeded":
        raise typer.Exit(EXIT_FAILED)


def _run_group(
    c: Client,
    workload: str,
    members: list[str],
    opts: dict[str, Any],
    *,
    wait: bool,
    timeout_s: float | None,
    json_out: bool,
) -> None:
    """`iowatt run W --member A:PATH --member B:PATH`: queue a group run and, with --wait, poll it
    until every member has ended; exit 1 unless it succeeded."""
    if len(members) < 2 or any(":" not in m for m in members):
        _err("a group run needs --member AGENT:PATH at least twice (one per agent)")
        raise typer.Exit(EXIT_USAGE)
    pairs = [m.partition(":") for m in members]
    body: dict[str, Any] = {
        "members": [{"agent_id": _agent(c, a), "target_path": p} for a, _, p in pairs],
        **_workload(c, workload),
        **{k: v for k, v in opts.items() if v is not None},
    }
    group = c.call("create_group", json=body)
    if not json_out:
        typer.echo(f"queued group {group['id']} ({group['name']}) on {', '.join(members)}", err=True)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while wait and group["status"] not in ("succeeded", "failed", "cancelled"):
        if deadline is not None and time.monotonic() > deadline:
            _err(f"group {group['id']} is still {group['status']} after {timeout_s:g} s")
            raise typer.Exit(EXIT_FAILED)
        time.sleep(1.0)
        group = c.call("get_group", group_id=group["id"])
    if json_out:
        _print_json(group)
    else:
        for m in group["members"]:
            skew = m["start_skew_ns"]
            at = f", started {skew / 1e6:+.2f} ms from the instant" if skew is not None else ""
            typer.echo(f"  {m['agent_name']}:{m['target_path']} {m['status']}{at}", err=True)
        flag = " (unsynchronized)" if group["unsynchronized"] else ""
        reason = f": {group['stop_reason']}" if group["stop_reason"] else ""
        typer.echo(f"{group['id']}: {group['status']}{flag}{reason}")
    if wait and group["status"] != "succeeded":
        raise typer.Exit(EXIT_FAILED)


# --- compare ---------------------------------------------------------------------------------------


def regressions(comparison: dict[str, Any], threshold_pct: float) -> list[dict[str, Any]]:
    """Each metric of each job whose change against the baseline is `worse` by at least threshold_pct."""
    found = []
    runs = comparison.get("runs") or []
    for job in comparison.get("jobs") or []:
        for m in job.get("metrics") or []:
            for i, ch in enumerate(m.get("changes") or []):
                if ch and ch.get("verdict") == "worse" and abs(ch.get("pct_change", 0)) >= threshold_pct:
                    run = runs[i] if i < len(runs) and isinstance(runs[i], dict) else {}
                    found.append(
                        {
                            "job": job.get("name"),
                            "metric": m.get("key"),
                            "label": m.get("label"),
                            "run": run.get("id"),
                            "pct_change": ch.get("pct_change"),
                            "phrase": ch.get("phrase"),
                        }
                    )
    return found


@app.command()
@handles_errors
def compare(
    runs: Annotated[list[str], typer.Argument(metavar="RUN...", help="Run ids; the first is the baseline")],
    baseline: Annotated[str | None, typer.Option(help="The baseline run (default: the first)")] = None,
    csv: Annotated[bool, typer.Option("--csv", help="The comparison as CSV, one row per metric")] = False,
    threshold: Annotated[
        float, typer.Option(min=0, help="A change worse than the baseline by this many % is a regression")
    ] = 10.0,
    fail: Annotated[bool, typer.Option(help="Exit 1 when there is a regression")] = True,
    json_out: JsonOpt = False,
) -> None:
    """Compare runs against a baseline; exit 1 when a metric is worse by --threshold % or more."""
    with _client() as c:
        if csv and not json_out:
            typer.echo(c.compare_csv(runs, baseline=baseline), nl=False)
            found = regressions(c.compare(runs, baseline=baseline), threshold) if fail else []
        else:
            doc = c.compare(runs, baseline=baseline)
            found = regressions(doc, threshold)
            if json_out:
                _print_json({**doc, "regressions": found, "threshold_pct": threshold})
            else:
                rows = []
                for job in doc.get("jobs") or []:
                    for m in job.get("metrics") or []:
                        phrases = [ch.get("phrase") if ch else "baseline" for ch in m.get("changes") or []]
                        rows.append([job.get("name"), m.get("label"), " | ".join(p or "" for p in phrases)])
                _table(["job", "metric", "change per run"], rows)
    if found and not (json_out or csv):
        _err(
            f"{len(found)} regression(s) of {threshold:g} % or more, e.g. {found[0]['job']}: "
            f"{found[0]['label']} {found[0]['phrase']}"
        )
    if found and fail:
        raise typer.Exit(EXIT_FAILED)


# --- import ----------------------------------------------------------------------------------------


@app.command("import")
@handles_errors
def import_cmd(
    files: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="FILE|DIR...",
            exists=True,
            help="Files, or a vdbench output directory (its summary/totals/flatfile.html: one run)",
        ),
    ] = None,
    format: Annotated[
        str | None, typer.Option("--format", help="The format (skip detection): --list-formats")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what the files hold; store nothing")
    ] = False,
    host: Annotated[
        str | None, typer.Option(help="The machine that ran it (default: what the file names)")
    ] = None,
    device: Annotated[str | None, typer.Option(help="The device's model (default: the file's)")] = None,
    name: Annotated[str | None, typer.Option(help="The runs' name (default: the file's)")] = None,
    environment: Annotated[str | None, typer.Option(help="An environment's id")] = None,
    team: Annotated[str | None, typer.Option(help="The team (name or id; default: your only team)")] = None,
    list_formats: Annotated[
        bool, typer.Option("--list-formats", help="The formats the server reads")
    ] = False,
    json_out: JsonOpt = False,
) -> None:
    """Import other tools' results (fio, CrystalDiskMark, DiskSpd, vdbench, elbencho...) as runs."""
    with _client() as c:
        if list_formats:
            fmts = c.import_formats()
            if json_out:
                _print_json(fmts)
            else:
                _table(
                    ["format", "tool", "versions", "files"],
                    [[f.format, f.tool, ", ".join(f.versions), ", ".join(f.file_kinds)] for f in fmts],
                )
            return
        if not files:
            _err("name one or more FILEs (or --list-formats)")
            raise typer.Exit(EXIT_USAGE)
        sets = [_import_set(f) for f in files]
        team_id = _team(c, team)
        results = []
        for one in sets:  # one request each: a file (or directory) that fails does not undo the others
            results += c.import_files(
                one,
                team_id=team_id,
                dry_run=dry_run,
                format=format,
                host=host,
                device=device,
                name=name,
                environment_id=environment,
            )
    if json_out:
        _print_json(results)
        return
    rows = []
    for r in results:
        state = "dry run" if r.dry_run else "duplicate" if r.duplicate else "stored"
        for run in r.runs:
            rows.append(
                [
                    r.file_name,
                    f"{r.tool} {r.version or ''}".strip(),
                    state,
                    run.run_id or "",
                    run.name,
                    len(run.jobs),
                ]
            )
    _table(["file", "tool", "state", "run", "name", "jobs"], rows)


VDBENCH_FILES = ("summary.html", "totals.html", "flatfile.html")


def _import_set(path: Path) -> list[Path | tuple[str, bytes]]:
    """A file as itself; a directory as its vdbench output files (one request: the server makes
    one run of them), the other files in it ignored with a note; none is a usage error."""
    if not path.is_dir():
        return [path]
    found = [path / n for n in VDBENCH_FILES if (path / n).is_file()]
    if not found:
        _err(f"{path}: no vdbench output files in the directory (expected {', '.join(VDBENCH_FILES)})")
        raise typer.Exit(EXIT_USAGE)
    others = sorted(p.name for p in path.iterdir() if p.name not in VDBENCH_FILES)
    if others:  # a vdbench directory holds many (logfile.html, parmfile.html, one per SD...)
        more = f" and {len(others) - 8} more" if len(others) > 8 else ""
        _err(f"{path}: ignored (not a vdbench summary/totals/flatfile): {', '.join(others[:8])}{more}")
    return list(found)


# --- export, views, agents -------------------------------------------------------------------------


@app.command()
@handles_errors
def export(
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the zip")] = Path(
        "iowatt-team-export.zip"
    ),
    team: Annotated[str | None, typer.Option(help="The team (name or id; default: your only team)")] = None,
    json_out: JsonOpt = False,
) -> None:
    """Everything of a team as a zip (team admins): runs, results, devices, agents, audit."""
    with _client() as c:
        team_id = _team(c, team)
        r = c.export_team(team_id)
        output.write_bytes(r.content)
    if json_out:
        _print_json({"team_id": team_id, "path": str(output), "bytes": output.stat().st_size})
    else:
        typer.echo(f"wrote {output} ({output.stat().st_size} bytes)")


@views_app.callback(invoke_without_command=True)
@handles_errors
def views(
    ctx: typer.Context,
    runs: Annotated[list[str] | None, typer.Option("--run", help="Which views apply to these runs")] = None,
    json_out: JsonOpt = False,
) -> None:
    """The named views; with --run, which apply to those runs."""
    if ctx.invoked_subcommand is not None:
        return
    with _client() as c:
        doc = c.views(runs)
    if json_out:
        _print_json(doc)
        return
    applicable = set(doc.get("applicable") or [])
    _table(
        ["view", "title", "applies"],
        [
            [v["name"], v.get("title", ""), "yes" if v["name"] in applicable else ""]
            for v in doc.get("views") or []
        ],
    )


@views_app.command("table")
@handles_errors
def views_table(
    view: Annotated[str, typer.Argument(help="The view's key (iowatt views)")],
    runs: Annotated[list[str], typer.Argument(metavar="RUN...")],
    baseline: Annotated[str | None, typer.Option()] = None,
    csv: Annotated[bool, typer.Option("--csv")] = False,
    json_out: JsonOpt = False,
) -> None:
    """A named view's table for some runs (its own units and layout)."""
    with _client() as c:
        if csv and not json_out:
            typer.echo(c.view_table(view, runs, baseline=baseline, csv=True), nl=False)
            return
        doc = c.view_table(view, runs, baseline=baseline)
    _print_json(doc)


@app.command()
@handles_errors
def agents(json_out: JsonOpt = False) -> None:
    """The team's agents: online, state, current run."""
    with _client() as c:
        found = c.list_agents()
    if json_out:
        _print_json(found)
    else:
        _table(
            ["id", "name", "hostname", "online", "state", "current run"],
            [
                [a.id, a.name, a.hostname, "yes" if a.online else "no", a.state, a.current_run_id or ""]
                for a in found
            ],
        )


# --- ci --------------------------------------------------------------------------------------------

METRIC_LABELS = {
    "read_iops": "read IOPS",
    "write_iops": "write IOPS",
    "read_bw_bytes": "read B/s",
    "write_bw_bytes": "write B/s",
    "read_lat_mean_ns": "read mean latency, ns",
    "write_lat_mean_ns": "write mean latency, ns",
    "read_clat_p99_ns": "read p99 latency, ns",
    "write_clat_p99_ns": "write p99 latency, ns",
}
VERDICT_MARK = {
    "regression": "REGRESSION",
    "improvement": "improvement",
    "no_change": "no change",
    "insufficient_history": "too little history",
    "excluded": "left out",
}


def _num(v: Any, digits: int = 4) -> str:
    if v is None:
        return "–"
    return f"{v:.{digits}g}" if isinstance(v, float) else str(v)


def verdict_markdown(series: dict[str, Any], verdict: dict[str, Any], run: Any, url: str) -> str:
    """The verdict as Markdown (a pull request comment, a CI job summary)."""
    status = verdict["status"]
    head = {
        "regression": "a regression",
        "improvement": "an improvement",
        "no_change": "no change",
        "insufficient_history": "too little history to judge",
        "excluded": "not judged (left out by its validity flags)",
    }[status]
    lines = [
        f"## iowatt: {head}",
        "",
        f"Run [{run.name}]({url}/runs/{run.id}) in series [{series['name']}]({url}/series/{series['id']}) "
        f"({series['run_count']} runs).",
        "",
        "| job | metric | value | before (mean) | change | 95 % interval | p | verdict |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for m in verdict["metrics"]:
        change = f"{m['change_pct']:+.1f} %" if m["change_pct"] is not None else "–"
        interval = (
            f"{m['change_pct_low']:+.1f} … {m['change_pct_high']:+.1f} %"
            if m["change_pct_low"] is not None and m["change_pct_high"] is not None
            else "–"
        )
        lines.append(
            f"| {m['job_index']} | {METRIC_LABELS.get(m['metric'], m['metric'])} | {_num(m['value'])} | "
            f"{_num(m['mean_before'])} | {change} | {interval} | {_num(m['p_value'], 2)} | "
            f"{VERDICT_MARK[m['status']]} |"
        )
    reasons = sorted({r for m in verdict["metrics"] for r in m["reasons"]})
    if reasons:
        lines += ["", *[f"- {r}" for r in reasons]]
    th = verdict["thresholds"]
    lines += [
        "",
        f"Thresholds: {th['test']}, p < {th['alpha']:g}, |z| ≥ {th['z_min']:g}, change ≥ "
        f"{th['min_change_pct']:g} %, window {th['lookback']} runs (at least {th['min_window']}).",
    ]
    return "\n".join(lines) + "\n"


@app.command("ci")
@handles_errors
def ci_cmd(
    workload: Annotated[
        str | None,
        typer.Argument(help="A preset or saved workload (name or id), a .json spec or a .fio job file"),
    ] = None,
    target: Annotated[str | None, typer.Option(help="The target on the agent's host")] = None,
    agent: Annotated[
        str | None, typer.Option(help="The agent (name, hostname or id); default: the only one")
    ] = None,
    run_id: Annotated[
        str | None,
        typer.Option(
            "--run", help="Judge this run (queued earlier, or an uploaded result) instead of queueing one"
        ),
    ] = None,
    name: Annotated[str | None, typer.Option(help="The run's name")] = None,
    environment: Annotated[str | None, typer.Option(help="An environment's id")] = None,
    timeout: Annotated[float, typer.Option(help="Give up waiting after this many seconds (exit 1)")] = 3600.0,
    summary: Annotated[
        Path | None,
        typer.Option(help="Also append the Markdown summary to this file (e.g. $GITHUB_STEP_SUMMARY)"),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Queue a run (or take --run), wait for it, test it against its series' thresholds and print a
    Markdown summary; exit 1 on a regression or a run that did not succeed."""
    deadline = time.monotonic() + timeout
    with _client() as c:
        if run_id is None:
            if workload is None or not target:
                _err("give a WORKLOAD and --target PATH, or --run RUN")
                raise typer.Exit(EXIT_USAGE)
            body: dict[str, Any] = {
                "agent_id": _agent(c, agent),
                **_workload(c, workload),
                "target_path": target,
            }
            for k, v in (("name", name), ("environment_id", environment)):
                if v is not None:
                    body[k] = v
            run = c.create_run(body)
            run_id = run.id
            typer.echo(f"queued {run.id} ({run.name}) on {run.agent_name}:{run.target_path}", err=True)
        run = follow(c, run_id, show=False, timeout_s=max(1.0, deadline - time.monotonic()))
        if run.status != "succeeded":
            _err(f"run {run.id} {run.status}" + (f": {run.error}" if run.error else ""))
            raise typer.Exit(EXIT_FAILED)
        # the run joins its series just after its result is stored (a task): wait for it
        while True:
            found = c.call("list_series", params={"run_id": run.id, "archived": None})["items"]
            if found:
                break
            if time.monotonic() > deadline:
                _err(f"run {run.id} joined no series within the timeout")
                raise typer.Exit(EXIT_FAILED)
            time.sleep(1.0)
        series = found[0]
        verdict = c.call("get_series_verdict", series_id=series["id"], params={"run": run.id})
    if json_out:
        _print_json({"series": series, "run_id": run.id, "verdict": verdict})
    else:
        text = verdict_markdown(series, verdict, run, c.url.rstrip("/"))
        typer.echo(text)
        if summary is not None:
            with summary.open("a") as f:
                f.write(text)
    if verdict["status"] == "regression":
        raise typer.Exit(EXIT_FAILED)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
