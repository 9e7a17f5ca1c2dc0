import uuid
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response, status
from fastapi.security import HTTPAuthorizationCredentials
from sqlalchemy.orm import Session, sessionmaker

from backend.auth import service as auth_service
from backend.auth.deps import SessionDep, UserDep, bearer, get_user
from backend.db import get_session_factory
from backend.errors import Unauthorized
from backend.kit import lanes
from backend.kit.disposition import attachment
from backend.kit.lanes import BULK
from backend.kit.schema import Page
from backend.pts import service as pts_service
from backend.review import pdf, pts_pages, report, service
from backend.review.schemas import (
    CandidateCreate,
    CandidateRead,
    CandidateUpdate,
    DecisionCreate,
    ReviewCommentCreate,
    ReviewCommentRead,
    ReviewCreate,
    ReviewPage,
    ReviewRead,
    ReviewUpdate,
)

router = APIRouter(prefix="/reviews", tags=["reviews"], dependencies=[BULK])

FROZEN: dict[int | str, dict[str, Any]] = {
    409: {"description": "review_decided: the review is decided and frozen; detail.new_version names "
          "the route that starts an editable copy"}
}  # fmt: skip


def _read(session: SessionDep, principal: UserDep, review_id: uuid.UUID) -> ReviewRead:
    return service.read(session, principal=principal, review_id=review_id)


@router.post("", response_model=ReviewRead, status_code=status.HTTP_201_CREATED)
def create_review(body: ReviewCreate, principal: UserDep, session: SessionDep) -> ReviewRead:
    """A new review (members and admins of the team). Tariff, grid intensity and PUE come from the
    environment when one is named and they are not given."""
    review = service.create(session, principal=principal, body=body)
    return _read(session, principal, review.id)


@router.get("", response_model=ReviewPage)
def list_reviews(
    principal: UserDep,
    session: SessionDep,
    team_id: uuid.UUID | None = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 100,
    offset: Annotated[int, Query(ge=0, le=1_000_000)] = 0,
) -> ReviewPage:
    """The caller's teams' reviews (or one team's), newest first: any role."""
    items, total = service.page(session, principal=principal, team_id=team_id, limit=limit, offset=offset)
    return ReviewPage(items=items, total=total)


@router.get(
    "/{review_id}",
    response_model=ReviewRead,
    responses={
        200: {
            "description": "The review with every computed figure; with format=csv one row per candidate",
            "content": {"text/csv": {"schema": {"type": "string"}}},
        }
    },
)
def get_review(
    review_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    format: Annotated[
        Literal["json", "csv"], Query(description="csv: one row per candidate (a download)")
    ] = "json",
) -> ReviewRead | Response:
    """A review, its candidates' figures, ranking, sensitivity and methodology: any role. A decided
    review answers the figures frozen at its decision."""
    r = _read(session, principal, review_id)
    if format == "csv":
        return Response(
            service.to_csv(r),
            media_type="text/csv",
            headers={"Content-Disposition": attachment(f"iowatt-review-{r.id}.csv", "iowatt-review.csv")},
        )
    return Response(r.model_dump_json(), media_type="application/json")


@router.patch("/{review_id}", response_model=ReviewRead, responses=FROZEN)
def update_review(
    review_id: uuid.UUID, body: ReviewUpdate, principal: UserDep, session: SessionDep
) -> ReviewRead:
    """Change the question or the context (members); 409 once decided."""
    service.update(session, principal=principal, review_id=review_id, body=body)
    return _read(session, principal, review_id)


@router.post("/{review_id}/candidates", response_model=CandidateRead, status_code=status.HTTP_201_CREATED)
def add_candidate(
    review_id: uuid.UUID, body: CandidateCreate, principal: UserDep, session: SessionDep
) -> CandidateRead:
    """Add a candidate (members); 409 once decided."""
    c = service.add_candidate(session, principal=principal, review_id=review_id, body=body)
    return service.candidate_read(session, principal=principal, review_id=review_id, candidate_id=c.id)


@router.patch("/{review_id}/candidates/{candidate_id}", response_model=CandidateRead, responses=FROZEN)
def update_candidate(
    review_id: uuid.UUID,
    candidate_id: uuid.UUID,
    body: CandidateUpdate,
    principal: UserDep,
    session: SessionDep,
) -> CandidateRead:
    """Change a candidate (members); 409 once decided."""
    service.update_candidate(
        session, principal=principal, review_id=review_id, candidate_id=candidate_id, body=body
    )
    return service.candidate_read(
        session, principal=principal, review_id=review_id, candidate_id=candidate_id
    )


@router.delete(
    "/{review_id}/candidates/{candidate_id}", status_code=status.HTTP_204_NO_CONTENT, responses=FROZEN
)
def delete_candidate(
    review_id: uuid.UUID, candidate_id: uuid.UUID, principal: UserDep, session: SessionDep
) -> None:
    """Remove a candidate (members); 409 once decided."""
    service.delete_candidate(session, principal=principal, review_id=review_id, candidate_id=candidate_id)


@router.post("/{review_id}/decision", response_model=ReviewRead, responses=FROZEN)
def decide(review_id: uuid.UUID, body: DecisionCreate, principal: UserDep, session: SessionDep) -> ReviewRead:
    """Decide (admins): the chosen candidate, who, when, why. Freezes the review."""
    return service.decide(session, principal=principal, review_id=review_id, body=body)


@router.post("/{review_id}/versions", response_model=ReviewRead, status_code=status.HTTP_201_CREATED)
def new_version(review_id: uuid.UUID, principal: UserDep, session: SessionDep) -> ReviewRead:
    """A new, undecided version with the same context and candidates (members)."""
    review = service.new_version(session, principal=principal, review_id=review_id)
    return _read(session, principal, review.id)


# A page of a review's discussion: the UI asks COMMENTS_PAGE and loads the next page on demand
COMMENTS_PAGE = 50
COMMENTS_PAGE_MAX = 200


@router.get("/{review_id}/comments", response_model=Page[ReviewCommentRead])
def list_comments(
    review_id: uuid.UUID,
    principal: UserDep,
    session: SessionDep,
    limit: Annotated[
        int, Query(ge=1, le=COMMENTS_PAGE_MAX, description="comments in this page")
    ] = COMMENTS_PAGE,
    offset: Annotated[int, Query(ge=0, le=1_000_000, description="comments skipped, oldest first")] = 0,
) -> Page[ReviewCommentRead]:
    """The review's discussion, oldest first, one page at a time (`total` counts every comment):
    any role."""
    items, total = service.comments(
        session, principal=principal, review_id=review_id, limit=limit, offset=offset
    )
    return Page[ReviewCommentRead](items=items, total=total)


@router.post("/{review_id}/comments", response_model=ReviewCommentRead, status_code=status.HTTP_201_CREATED)
def add_comment(
    review_id: uuid.UUID, body: ReviewCommentCreate, principal: UserDep, session: SessionDep
) -> ReviewCommentRead:
    """Comment (members), on a decided review too."""
    return service.add_comment(session, principal=principal, review_id=review_id, body=body)


@router.get(
    "/{review_id}/pdf",
    response_class=Response,
    responses={
        200: {"description": "The review as a PDF", "content": {"application/pdf": {}}},
        503: {
            "description": "`pdf_unavailable`: Chromium is not installed on the server; `pdf_busy`: "
            "every printer of this API process is printing (Retry-After says when to ask again)"
        },
    },
)
def review_pdf(
    review_id: uuid.UUID,
    request: Request,
    creds: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    factory: Annotated[sessionmaker[Session], Depends(get_session_factory)],
) -> Response:
    """The review as a PDF (charts, tables, methodology appendix), printed by headless Chromium:
    any role. Never waits for a printer (503 `pdf_busy` + Retry-After) and holds no database
    connection while Chromium prints (backend/review/pdf.py). At most report.MAX_CANDIDATES
    candidates and the newest report.MAX_COMMENTS comments; the PDF says what it left out."""
    if creds is None or creds.scheme.lower() != "bearer" or not creds.credentials:
        raise Unauthorized("missing bearer token", code="no_token")
    with factory() as session, session.begin():  # who asks and may they, in a transaction of its own
        principal = get_user(request, auth_service.authenticate(session, raw_token=creds.credentials))
        service.get(session, principal=principal, review_id=review_id)  # 404 before any printer
    with pdf.slot():
        with factory() as session, session.begin():  # what is printed: read, then closed
            r = service.read(session, principal=principal, review_id=review_id)
            notes, total = service.latest_comments(
                session, principal=principal, review_id=review_id, limit=report.MAX_COMMENTS
            )
            # the SNIA PTS pages of the candidates' runs (runs the review's team reads)
            shown, _ = report.bounded(r)
            reports = pts_service.reports_for(session, [c.run_id for c in shown.candidates if c.run_id])
        # Chromium prints in its own process for seconds: this process's bulk slot goes to the next
        # page read meanwhile (the printers have their own bound: pdf.SLOTS, never waited for)
        lanes.hand_back(request)
        body = pdf.render(r, notes, comments_total=total, pts=pts_pages.section(shown.candidates, reports))
    return Response(
        body,
        media_type="application/pdf",
        headers={"Content-Disposition": attachment(f"iowatt-review-{r.id}.pdf", "iowatt-review.pdf")},
    )
