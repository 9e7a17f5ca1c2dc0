"""The review's PDF (issue 16): printed by the real headless Chromium, its text read back with pypdf
(ADR 0024) — the ranking, the decision, the formulas of the methodology appendix and GB = 10^9 B;
a server without Chromium answers 503 saying so."""

import io
import re

import pytest
from fastapi.testclient import TestClient
from pypdf import PdfReader
from sqlalchemy.orm import Session

from backend.review import formulas
from tests.backend.test_reviews import seed001_review
from tests.factories import create_user


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


def test_without_chromium_the_pdf_is_a_503_saying_so(
    client: TestClient, session: Session, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("IOWATT_CHROMIUM", "/nonexistent/chromium")
    u = create_user(session)
    rv = seed001_review(client, u)
    r = client.get(f"/api/v1/reviews/{rv['id']}/pdf", headers=u.headers)
    assert r.status_code == 503 and r.json()["error"] == "pdf_unavailable"
    assert "Chromium" in r.json()["message"] and "format=csv" in r.json()["message"]
