"""The review's PDF: its HTML page (backend/review/report.py) printed by headless Chromium, the
Debian `chromium` the project already installs for its browser tests (scripts/install-system-deps.sh).
One Chromium process per PDF, at most two at a time; no network (the page is a local file with
everything inline). Without Chromium the route answers 503 saying so."""

import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

from backend.errors import AppError
from backend.review import report
from backend.review.schemas import ReviewCommentRead, ReviewRead

TIMEOUT_S = 120
_slots = threading.BoundedSemaphore(2)


class PdfUnavailable(AppError):
    status_code = 503
    code = "pdf_unavailable"


def chromium() -> str | None:
    """IOWATT_CHROMIUM, else `chromium` (or `chromium-browser`) on PATH."""
    return os.environ.get("IOWATT_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


def render(r: ReviewRead, comments: list[ReviewCommentRead]) -> bytes:
    exe = chromium()
    if exe is None or not os.access(exe, os.X_OK):
        raise PdfUnavailable(
            "PDF export needs Chromium on the server (apt-get install chromium, or set IOWATT_CHROMIUM); "
            "the CSV export (?format=csv) works without it"
        )
    if not _slots.acquire(timeout=TIMEOUT_S):
        raise PdfUnavailable(
            "the server is busy printing other PDFs: try again", headers={"Retry-After": "10"}
        )
    try:
        with tempfile.TemporaryDirectory(prefix="iowatt-review-") as tmp:
            page = Path(tmp) / "review.html"
            out = Path(tmp) / "review.pdf"
            page.write_text(report.html(r, comments), encoding="utf-8")
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
            try:
                done = subprocess.run(cmd, capture_output=True, timeout=TIMEOUT_S, check=False)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise PdfUnavailable(f"Chromium could not print the review: {e}") from None
            if not out.exists() or out.stat().st_size == 0:
                tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or [""]
                raise PdfUnavailable(f"Chromium printed no PDF (exit {done.returncode}): {tail[0][:300]}")
            return out.read_bytes()
    finally:
        _slots.release()
