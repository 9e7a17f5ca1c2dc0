"""The review's PDF: its HTML page (backend/review/report.py) printed by headless Chromium, Debian's
`chromium-headless-shell` the project installs (scripts/install-system-deps.sh), else `chromium`.
One Chromium process per PDF, at most `SLOTS` at a time per API process; no network (the page is a
local file with everything inline). Without Chromium the route answers 503 saying so.

A PDF never waits for a slot: when both are printing, the request answers 503 with Retry-After at
once (a waiting request used to hold one of the process's request sessions, docs/adr/0016, for up to
two minutes). The route reads what it prints in a short transaction of its own and closes it
before Chromium starts, so printing holds no database connection (backend/review/router.py)."""

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from backend.errors import AppError
from backend.review import report
from backend.review.schemas import ReviewCommentRead, ReviewRead

TIMEOUT_S = 120
SLOTS = 2
# what a client should wait before asking again: a typical review prints in 1-3 s
RETRY_AFTER_S = 5
_slots = threading.BoundedSemaphore(SLOTS)


class PdfUnavailable(AppError):
    status_code = 503
    code = "pdf_unavailable"


class PdfBusy(PdfUnavailable):
    code = "pdf_busy"


# Debian's Chromium headless shell (package chromium-headless-shell, built from the same Chromium
# source): the same Blink layout and PDF printing without the full browser's windowing, about a
# third of the CPU per review printed (0.40-0.44 against 1.30-1.45 CPU-s for a 300-row page, three
# alternating pairs, 2026-12-07). The full browser when it is the one installed.
EXECUTABLES = ("chromium-headless-shell", "chromium", "chromium-browser")


def chromium() -> str | None:
    """IOWATT_CHROMIUM, else the first of EXECUTABLES on PATH."""
    return os.environ.get("IOWATT_CHROMIUM") or next(filter(None, map(shutil.which, EXECUTABLES)), None)


def _executable() -> str:
    exe = chromium()
    if exe is None or not os.access(exe, os.X_OK):
        raise PdfUnavailable(
            "PDF export needs Chromium on the server (apt-get install chromium-headless-shell or "
            "chromium, or set IOWATT_CHROMIUM); "
            "the CSV export (?format=csv) works without it"
        )
    return exe


@contextmanager
def slot() -> Iterator[None]:
    """One of the process's SLOTS printers, taken without waiting: 503 `pdf_busy` with Retry-After
    when all are printing (and 503 `pdf_unavailable` when there is no Chromium to print with)."""
    _executable()
    if not _slots.acquire(blocking=False):
        raise PdfBusy(
            f"the server is printing {SLOTS} other PDFs: try again in a few seconds",
            headers={"Retry-After": str(RETRY_AFTER_S)},
        )
    try:
        yield
    finally:
        _slots.release()


def render(r: ReviewRead, comments: list[ReviewCommentRead], *, comments_total: int, pts: str = "") -> bytes:
    """Print the review (inside `slot()`; holding no database session); `pts`: the SNIA PTS
    report pages of its candidates' runs (backend/review/pts_pages.py)."""
    exe = _executable()
    with tempfile.TemporaryDirectory(prefix="iowatt-review-") as tmp:
        page = Path(tmp) / "review.html"
        out = Path(tmp) / "review.pdf"
        page.write_text(report.html(r, comments, comments_total=comments_total, pts=pts), encoding="utf-8")
        cmd = [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--no-first-run",
            "--no-pdf-header-footer",
            f"--user-data-dir={tmp}/profile",
            f"--print-to-pdf={out}",
            page.as_uri(),
        ]
        returncode, stderr = _print(cmd)
        if not out.exists() or out.stat().st_size == 0:
            tail = stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
            raise PdfUnavailable(f"Chromium printed no PDF (exit {returncode}): {tail[0][:300]}")
        return out.read_bytes()


def _print(cmd: list[str]) -> tuple[int, bytes]:
    """Chromium in a process group of its own, the whole group killed when it is not done within
    TIMEOUT_S: Debian's `chromium-headless-shell` is a shell script that starts the browser as its
    child (no exec), so killing the script alone left the browser and its renderers running and
    writing into a directory already removed. (The group is killed before its leader is reaped, so
    its id cannot have been given to another group.)"""
    try:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            start_new_session=True,
        )  # fmt: skip
    except OSError as e:
        raise PdfUnavailable(f"Chromium could not print the review: {e}") from None
    try:
        _, stderr = proc.communicate(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired as e:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise PdfUnavailable(f"Chromium could not print the review: {e}") from None
    return proc.returncode, stderr
