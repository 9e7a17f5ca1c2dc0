"""Share links: created, listed and revoked by the team (/api/v1/share-links); opened by anyone
holding the token, without login (/api/v1/shared/{token}); previewed by chat apps (/s/{token},
outside the API: the SPA's page with OpenGraph tags, and its chart as a PNG)."""

import json
import uuid
from typing import Annotated

from fastapi import APIRouter, Depends, Path, Query, Response, status
from fastapi.responses import JSONResponse

from backend.auth.deps import SessionDep, UserDep
from backend.config import get_settings
from backend.errors import AppError
from backend.kit.disposition import attachment
from backend.kit.lanes import BULK
from backend.run.schemas import MAX_OFFSET
from backend.sharing import cache, preview, service, throttle
from backend.sharing.schemas import SharedView, ShareLinkCreate, ShareLinkCreated, ShareLinkPage

router = APIRouter(tags=["sharing"], dependencies=[BULK])
pages = APIRouter(include_in_schema=False, dependencies=[BULK])

# the anonymous routes: counted per client before anything else (no session is taken for a 429)
Throttled = Depends(throttle.check)
TokenParam = Annotated[str, Path(min_length=1, max_length=200, description="the link's token")]


def _page_url(token: str) -> str:
    """The link as people open it: on the server's public address (IOWATT_PUBLIC_URL)."""
    return f"{get_settings().public_url.rstrip('/')}/s/{token}"


@router.post("/share-links", response_model=ShareLinkCreated, status_code=status.HTTP_201_CREATED)
def create_share_link(body: ShareLinkCreate, principal: UserDep, session: SessionDep) -> ShareLinkCreated:
    """A read-only link to a run, a comparison (its runs, baseline, grouping and view options), a
    campaign or a procurement review; members of the target's team. The URL is shown once."""
    link, raw = service.create(session, principal=principal, body=body)
    return ShareLinkCreated(id=link.id, url=_page_url(raw), expires_at=link.expires_at)


@router.get("/share-links", response_model=ShareLinkPage)
def list_share_links(
    principal: UserDep,
    session: SessionDep,
    team_id: uuid.UUID,
    limit: Annotated[int, Query(ge=1, le=200)] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> ShareLinkPage:
    """The team's links, newest first, revoked and expired ones too (members)."""
    links, total = service.page(session, principal=principal, team_id=team_id, limit=limit, offset=offset)
    return ShareLinkPage(items=service.to_read(session, links), total=total)


@router.delete(
    "/share-links/{share_link_id}",
    status_code=status.HTTP_204_NO_CONTENT,
    responses={409: {"description": "`already_revoked`: the link was revoked before"}},
)
def revoke_share_link(share_link_id: uuid.UUID, principal: UserDep, session: SessionDep) -> Response:
    """Revoke (its creator or a team admin): the token answers 404 from now on."""
    service.revoke(session, principal=principal, link_id=share_link_id)
    return Response(status_code=status.HTTP_204_NO_CONTENT)


GONE = {
    404: {"description": "unknown or revoked link"},
    410: {"description": "the link expired"},
}


@router.get(
    "/shared/{token}",
    response_model=SharedView,
    responses=GONE,  # type: ignore[arg-type]
    dependencies=[Throttled],
)
def shared_view(token: TokenParam, session: SessionDep) -> Response:
    """The frozen view, no login: read for the frozen target (deleted runs are absent), computed
    once per content version (backend/sharing/cache.py). Counts a view. Throttled per client."""
    s = service.shared(session, link=service.open_link(session, token=token, count=True))
    return Response(json.dumps(s.view_json), media_type="application/json")


@router.get(
    "/shared/{token}/export.csv",
    responses={200: {"content": {"text/csv": {"schema": {"type": "string"}}}}, **GONE},  # type: ignore[dict-item]
    response_class=Response,
    dependencies=[Throttled],
)
def shared_csv(token: TokenParam, session: SessionDep) -> Response:
    """What the shared page shows as the compare page's CSV (a review: one row per candidate)."""
    s = service.shared(session, link=service.open_link(session, token=token))
    return Response(
        s.csv,
        media_type="text/csv",
        headers={"Content-Disposition": attachment("iowatt-shared.csv", "iowatt-shared.csv")},
    )


@router.get(
    "/shared/{token}/export.json",
    response_model=SharedView,
    responses=GONE,  # type: ignore[arg-type]
    dependencies=[Throttled],
)
def shared_json(token: TokenParam, session: SessionDep) -> Response:
    """What the shared page shows as JSON (the view itself), as a download."""
    s = service.shared(session, link=service.open_link(session, token=token))
    return Response(
        service.to_json(s.view_json),
        media_type="application/json",
        headers={"Content-Disposition": attachment("iowatt-shared.json", "iowatt-shared.json")},
    )


@pages.get("/s/{token}", dependencies=[Throttled])
def shared_page(token: str, session: SessionDep) -> Response:
    """The SPA's page for /s/{token} with OpenGraph tags of the link's view (a chat app's unfurler
    reads these; the browser then renders the page from /api/v1/shared/{token})."""
    index = get_settings().frontend_dist / "index.html"
    if not index.is_file():
        return JSONResponse(
            status_code=503,
            content={
                "error": "ui_not_built",
                "message": "the web UI is not built: run `make ui`",
                "detail": None,
            },
        )
    page_url = _page_url(token)
    try:
        v = (
            service.shared(session, link=service.open_link(session, token=token)).view
            if len(token) <= 200
            else None
        )
        code = 200 if v is not None else 404
    except AppError as exc:
        v, code = None, exc.status_code
    tags = preview.tags_for(v, page_url=page_url, image_url=f"{page_url}/preview.png" if v else None)
    body = preview.inject(index.read_text(encoding="utf-8"), tags)
    return Response(body, status_code=code, media_type="text/html", headers={"Cache-Control": "no-store"})


@pages.get("/s/{token}/preview.png", dependencies=[Throttled])
def shared_preview(token: TokenParam, session: SessionDep) -> Response:
    """The shared view's main chart, 1200×630 (the OpenGraph image size), drawn once per content
    version."""
    link = service.open_link(session, token=token)
    s = service.shared(session, link=link)
    png = cache.cached(link.id, "png", s.version, lambda: preview.render_png(s.view))
    return Response(png, media_type="image/png", headers={"Cache-Control": "private, max-age=60"})
