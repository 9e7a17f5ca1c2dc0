"""The review's PDF (issue 16): printed by the real headless Chromium, its text read back with pypdf
(ADR 0024) — the ranking, the decision, the formulas of the methodology appendix and GB = 10^9 B;
a server without Chromium answers 503 saying so."""

import concurrent.futures
import contextlib
import io
import os
import re
import subprocess
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy import create_engine, text
from sqlalchemy.orm import Session

from backend.models.review import ReviewComment
from backend.review import formulas, pdf, report
from backend.review.service import MAX_CANDIDATES
from tests.backend.test_reviews import candidate_body, make_review, seed001_review
from tests.conftest import REPO
from tests.factories import create_user
from tests.services import Postgres, free_port
from tests.stack import TLS, http
from tests.waiting import wait_until


def _text(pdf: bytes) -> str:
    reader = PdfReader(io.BytesIO(pdf))
    return " ".join(" ".join((page.extract_text() or "").split()) for page in reader.pages)


def test_the_pdf_holds_the_ranking_decision_and_formulas(client: TestClient, session: Session) -> None:
    u = create_user(session)
    rv = seed001_review(client, u)
    cid = rv["candidates"][0]["id"]
    r = client.post(
        f"/api/v1/reviews/{rv['id']}/decision",
        json={"candidate_id": cid, "reason": "cheapest per read"},
        headers=u.headers,
    )
    assert r.status_code == 200, r.text
    r = client.get(f"/api/v1/reviews/{rv['id']}/pdf", headers=u.headers)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/pdf" and r.content.startswith(b"%PDF-")
    text = _text(r.content)
    assert "Seed 001 big files" in text
    # the ranking, in order, as its table prints it
    ranked = [x["name"] for x in rv["ranking"]]
    at = [text.index(f"{n + 1} {name}") for n, name in enumerate(ranked)]
    assert at == sorted(at), text[:2000]
    assert "Decision: ENT 15K R1" in text and "cheapest per read" in text
    # every formula of the methodology appendix, as the code's table states it
    squeeze = re.sub(r"\s+", "", text)
    for m in formulas.METHODOLOGY:
        assert re.sub(r"\s+", "", m.formula) in squeeze, m.name
    assert "GB = 10^9 bytes" in text and "8,766" in text
    # the RAID 1 rows' published cost per usable GB is flagged in the report too
    assert "ignores the protection" in text
    # no heading or table header is left alone at a page's foot (issue 25): a page's last line is
    # never a section title, the figures' note or a header row
    heads = ("Context", "Ranking", "Candidates", "Figures", "Sensitivity", "Energy per job", "Methodology")
    header_rows = (
        "Figure ", "Candidate Device", "rank candidate score", "Change Range scanned", "figure formula",
    )  # fmt: skip
    for i, page in enumerate(PdfReader(io.BytesIO(r.content)).pages):
        lines = [x.strip() for x in (page.extract_text() or "").splitlines() if x.strip()]
        last = lines[-1] if lines else ""
        assert last not in heads and not last.startswith(header_rows), (i, lines[-3:])
        assert not last.startswith("Money in "), (i, lines[-3:])


def test_without_chromium_the_pdf_is_a_503_saying_so(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOWATT_CHROMIUM", "/nonexistent/chromium")
    u = create_user(session)
    rv = seed001_review(client, u)
    r = client.get(f"/api/v1/reviews/{rv['id']}/pdf", headers=u.headers)
    assert r.status_code == 503 and r.json()["error"] == "pdf_unavailable"
    assert "Chromium" in r.json()["message"] and "format=csv" in r.json()["message"]


HUNG = """#!/bin/sh
# as Debian's chromium-headless-shell: the browser runs as the script's child (no exec); this one
# never finishes
sleep 300 &
echo $! > "{pid}"
wait
"""


def test_a_printer_that_hangs_is_a_503_and_leaves_no_process_behind(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Past its time Chromium is killed with everything it started: the wrapper's child too (killing
    the wrapper alone left the browser running), and the printer is free again."""
    pid_file, wrapper = tmp_path / "child.pid", tmp_path / "chromium"
    wrapper.write_text(HUNG.format(pid=pid_file))
    wrapper.chmod(0o755)
    monkeypatch.setenv("IOWATT_CHROMIUM", str(wrapper))
    monkeypatch.setattr(pdf, "TIMEOUT_S", 1)
    u = create_user(session)
    rv = seed001_review(client, u)
    r = client.get(f"/api/v1/reviews/{rv['id']}/pdf", headers=u.headers)
    assert r.status_code == 503 and r.json()["error"] == "pdf_unavailable", r.text
    assert "could not print" in r.json()["message"]
    child = int(pid_file.read_text())
    # killed and reaped by init once its parent is gone: no /proc entry, or a zombie on its way out
    wait_until(
        lambda: not Path(f"/proc/{child}").exists()
        or Path(f"/proc/{child}/stat").read_text().rsplit(")", 1)[1].split()[0] in ("Z", "X"),
        timeout=10,
        ignore=(OSError,),
        message=f"the hung printer's child {child} is still running",
    )
    assert pdf._slots.acquire(blocking=False)  # the printer was given back
    pdf._slots.release()


def test_a_busy_printer_is_a_503_with_retry_after_at_once(client: TestClient, session: Session) -> None:
    """Both printers taken: the request neither waits nor reads the review (issue 22: a PDF request
    used to hold a request session while it waited up to 120 s for a printer)."""
    u = create_user(session)
    rv = seed001_review(client, u)
    with contextlib.ExitStack() as held:
        for _ in range(pdf.SLOTS):
            held.enter_context(pdf.slot())
        r = client.get(f"/api/v1/reviews/{rv['id']}/pdf", headers=u.headers)
    assert r.status_code == 503, r.text
    assert r.json()["error"] == "pdf_busy" and int(r.headers["Retry-After"]) > 0
    # the printers are free again: the same request prints
    r = client.get(f"/api/v1/reviews/{rv['id']}/pdf", headers=u.headers)
    assert r.status_code == 200 and r.content.startswith(b"%PDF-")
    # no token: a 401, never a printer taken
    assert client.get(f"/api/v1/reviews/{rv['id']}/pdf").status_code == 401


def test_the_largest_review_prints_within_the_cap_and_says_what_it_left_out(
    client: TestClient, session: Session
) -> None:
    """Every text at its longest, MAX_CANDIDATES candidates, more comments than a PDF holds: the
    PDF has at most report.MAX_PAGES pages and says which comments and characters it left out."""
    u = create_user(session)
    rv = make_review(client, u, name="Largest", question="Q" * 20_000)
    for n in range(MAX_CANDIDATES):
        body = candidate_body(f"{n:02d} " + "n" * 190, "100", 1000, 4, "raid10", str(100 + n))
        body["device"]["model"] = "m" * 300
        body["performance"]["reference"] = "r" * 500
        r = client.post(f"/api/v1/reviews/{rv['id']}/candidates", json=body, headers=u.headers)
        assert r.status_code == 201, r.text
    top = client.get(f"/api/v1/reviews/{rv['id']}", headers=u.headers).json()["candidates"][0]["id"]
    r = client.post(
        f"/api/v1/reviews/{rv['id']}/decision",
        json={"candidate_id": top, "reason": "R" * 20_000},
        headers=u.headers,
    )
    assert r.status_code == 200, r.text
    extra = 7
    for n in range(report.MAX_COMMENTS + extra):
        said = f"c{n:03d} " + "w " * 9_990
        at = datetime(2026, 12, 1, tzinfo=UTC) + timedelta(minutes=n)  # one transaction: one now()
        session.add(
            ReviewComment(review_id=uuid.UUID(rv["id"]), author_id=u.user.id, body=said, created_at=at)
        )
    session.flush()
    r = client.get(f"/api/v1/reviews/{rv['id']}/pdf", headers=u.headers)
    assert r.status_code == 200, r.text
    pages = len(PdfReader(io.BytesIO(r.content)).pages)
    assert pages <= report.MAX_PAGES, pages
    text = _text(r.content)
    assert f"{extra} earlier comments are not in this PDF" in text
    assert "c006" not in text and "c007" in text and f"c{report.MAX_COMMENTS + extra - 1:03d}" in text
    assert "more characters are not in this PDF" in text
    print(f"largest review: {pages} pages, {len(r.content):,} bytes")


WRAPPER = """#!/bin/sh
# the real Chromium, started only once the test opens the gate (so the test sees two printers busy)
echo started >> "{mark}"
while [ ! -e "{gate}" ]; do sleep 0.05; done
exec "{chromium}" "$@"
"""


def test_printing_holds_no_database_connection_and_a_third_pdf_is_turned_away(
    pg: Postgres, redis_url: str, db_url: str, tmp_path: Path
) -> None:
    """A real uvicorn process whose two printers are busy (Chromium held at a gate): the busy PDFs
    hold no database connection (no backend of the API is active or idle in a transaction), a third
    PDF answers 503 + Retry-After at once, and other requests still answer."""
    real = pdf.chromium()
    assert real, "the test needs Chromium"
    mark, gate = tmp_path / "started", tmp_path / "gate"
    wrapper = tmp_path / "chromium"
    wrapper.write_text(WRAPPER.format(mark=mark, gate=gate, chromium=real))
    wrapper.chmod(0o755)
    url = pg.migrated_database("iowatt_pdf_slots")  # the migrated template, copied
    eng = create_engine(url)
    with Session(eng, expire_on_commit=False) as s:
        u = create_user(s)
        s.commit()
    port = free_port()
    env = {**os.environ, "IOWATT_DATABASE_URL": url, "IOWATT_REDIS_URL": redis_url, "IOWATT_ENV": "test"}
    env["IOWATT_CHROMIUM"] = str(wrapper)
    log = tmp_path / "api.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "uvicorn", "backend.main:create_app", "--factory", "--port", str(port)],
            cwd=REPO,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}/api/v1"
    try:
        wait_until(
            lambda: httpx.get(f"{base}/health", timeout=2, verify=TLS).status_code == 200,
            timeout=60,
            interval=0.2,
            ignore=(httpx.HTTPError,),
            message=lambda: log.read_text()[-2000:],
        )
        with http(base_url=base, headers=u.headers, timeout=120) as c:
            body = {"team_id": str(u.team.id), "name": "Busy", "currency": "EUR", "horizon_years": "5",
                    "duty_cycle": "0.5", "tariff_per_kwh": "0.12", "grid_g_per_kwh": "400"}  # fmt: skip
            rv = c.post("/reviews", json=body)
            assert rv.status_code == 201, rv.text
            path = f"/reviews/{rv.json()['id']}/pdf"
            with concurrent.futures.ThreadPoolExecutor(2) as threads:
                printing = [threads.submit(c.get, path) for _ in range(pdf.SLOTS)]
                wait_until(
                    lambda: mark.exists() and len(mark.read_text().split()) == pdf.SLOTS,
                    timeout=60,
                    message="both printers started",
                )
                third = c.get(path)
                assert third.status_code == 503, third.text
                assert third.json()["error"] == "pdf_busy" and int(third.headers["Retry-After"]) > 0
                with eng.connect() as conn:
                    busy: int = conn.execute(
                        text(
                            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                            "AND pid <> pg_backend_pid() AND state IN "
                            "('active', 'idle in transaction', 'idle in transaction (aborted)')"
                        )
                    ).scalar_one()
                assert busy == 0, "a printing PDF holds a database connection"
                assert c.get(f"/reviews/{rv.json()['id']}").status_code == 200  # the API still answers
                gate.touch()
                for f in printing:
                    r = f.result()
                    assert r.status_code == 200 and r.content.startswith(b"%PDF-"), r.text[:300]
    finally:
        gate.touch()
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        eng.dispose()
