"""The share preview draws any script a team writes (issue 22): Cyrillic from DejaVu Sans, Chinese
and Japanese from the CJK fallback (fonts-wqy-microhei). matplotlib warns "Glyph … missing from
font(s) …" for every character it draws as an empty box; a render of "Команда 東京" must give none."""

import io
import warnings

from fastapi.testclient import TestClient
from sqlalchemy.orm import Session

from backend.sharing import preview
from backend.sharing.schemas import SharedView
from tests.backend.test_share_links import _share, _team, _token

NAME = "Команда 東京"


def test_a_cjk_font_is_installed() -> None:
    from matplotlib import font_manager  # here, not at collection: every test process collects this module

    preview._use_fonts()
    known = {f.name for f in font_manager.fontManager.ttflist}
    assert known.intersection(preview.FONTS[1:]), (
        "no CJK font: install fonts-wqy-microhei (scripts/install-system-deps.sh)"
    )


def test_cyrillic_and_cjk_names_draw_without_missing_glyphs(client: TestClient, session: Session) -> None:
    admin, member, _, runs = _team(session)
    admin.team.name = NAME
    for i, run in enumerate(runs):
        run.name = f"{NAME} {i}"
    session.flush()
    token = _token(_share(client, member, runs, title=NAME))
    r = client.get(f"/api/v1/shared/{token}")
    assert r.status_code == 200, r.text
    view = SharedView.model_validate(r.json())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        png = preview.render_png(view)
    missing = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    assert missing == [], missing
    from PIL import Image

    assert Image.open(io.BytesIO(png)).size == (preview.WIDTH_PX, preview.HEIGHT_PX)


def test_the_check_would_catch_boxes() -> None:
    """Without the fallback the same text warns: the test above can fail."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(4, 1))
    FigureCanvasAgg(fig)
    fig.text(0.1, 0.5, NAME, family=["DejaVu Sans"], parse_math=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    assert any("missing from font" in str(w.message) for w in caught)
