"""The API's documentation pages, served whole by the server (no CDN: they work in an air-gapped
lab). /docs is Swagger UI and /redoc ReDoc, both on /openapi.json; their scripts, styles and
favicon come from the `fastapi-offline` package's copies (docs/adr/0045-offline-api-docs.md), under
/api-docs/. The pages hold no inline script: Swagger UI starts from /api-docs/swagger-init.js, ReDoc
from its <redoc> element, so their Content-Security-Policy allows scripts from the server only
(backend/kit/headers.py DOCS_CSP)."""

from pathlib import Path

import fastapi_offline
from fastapi import APIRouter, FastAPI
from fastapi.responses import HTMLResponse, Response
from fastapi.staticfiles import StaticFiles

from backend.kit.lanes import BULK

ASSETS = Path(fastapi_offline.__file__).parent / "static"
PREFIX = "/api-docs"

SWAGGER_INIT = """\
window.addEventListener("load", function () {
  window.ui = SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    showExtensions: true,
    presets: [SwaggerUIBundle.presets.apis, SwaggerUIBundle.SwaggerUIStandalonePreset],
    layout: "BaseLayout",
  });
});
"""

SWAGGER_PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>iowatt API - Swagger UI</title>
<link rel="icon" type="image/png" href="{PREFIX}/favicon.png">
<link rel="stylesheet" href="{PREFIX}/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="{PREFIX}/swagger-ui-bundle.js"></script>
<script src="{PREFIX}/swagger-init.js"></script>
</body>
</html>
"""

REDOC_PAGE = f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>iowatt API - ReDoc</title>
<link rel="icon" type="image/png" href="{PREFIX}/favicon.png">
</head>
<body>
<redoc spec-url="/openapi.json"></redoc>
<script src="{PREFIX}/redoc.standalone.js"></script>
</body>
</html>
"""

router = APIRouter(include_in_schema=False, dependencies=[BULK])


@router.get("/docs")
def swagger_ui() -> HTMLResponse:
    return HTMLResponse(SWAGGER_PAGE)


@router.get("/redoc")
def redoc() -> HTMLResponse:
    return HTMLResponse(REDOC_PAGE)


@router.get(f"{PREFIX}/swagger-init.js")
def swagger_init() -> Response:
    return Response(SWAGGER_INIT, media_type="text/javascript")


def mount(app: FastAPI) -> None:
    """The pages and their assets; call before the UI's catch-all route."""
    app.include_router(router)
    app.mount(PREFIX, StaticFiles(directory=ASSETS), name="api-docs")
