"""Screenshots: `"clip": [x, y, w, h]` keeps a rectangle, and a full-page picture is scrolled once first so lazy
images are in it unless `"settle": false` — real Chromium against pages this module serves."""

from __future__ import annotations

import base64
import struct

import pytest

from foldrun.web import WebToolError
from tests.conftest import wait_for
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


def _lazy(image: str) -> bytes:
    return page(
        "Lazy",
        f'<p>top</p><div style="height: 9000px"></div><img loading="lazy" src="/{image}.png" '
        f'width="40" height="40" alt="far down">',
    )


ROUTES = {
    "/lazy-kept": html(_lazy("kept")),
    "/lazy-skipped": html(_lazy("skipped")),
    "/kept.png": (200, {"content-type": "image/png"}, PIXEL),
    "/skipped.png": (200, {"content-type": "image/png"}, PIXEL),
    "/box": html(page("Box", '<div style="width: 300px; height: 300px; background: red">box</div>')),
}


def _png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_clip_keeps_only_the_rectangle_asked_for(browse, pages_site, tmp_path):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/box",
            "actions": [{"screenshot": "corner", "clip": [10, 20, 120, 80]}],
        }
    )
    assert out.startswith("screenshot: outputs/corner.png")
    assert _png_size((tmp_path / "outputs/corner.png").read_bytes()) == (120, 80)


def test_a_clip_that_is_not_a_rectangle_is_a_sentence(browse, pages_site):
    with pytest.raises(WebToolError) as caught:
        browse().call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/box",
                "actions": [{"screenshot": "corner", "clip": [0, 0, 0, 80]}],
            }
        )
    assert str(caught.value) == (
        'browse: screenshot "clip" is [x, y, width, height] in page pixels, width and '
        "height above 0, such as [0, 0, 800, 600]; [0, 0, 0, 80] is not"
    )


def test_a_full_page_screenshot_scrolls_once_first_so_a_lazy_image_loads(browse, pages_site):
    browse().call({"action": "browse", "url": f"{pages_site.url}/lazy-kept", "mode": "screenshot"})
    wait_for(lambda: "/kept.png" in pages_site.seen)


def test_settle_false_skips_the_scroll_and_the_lazy_image_is_never_fetched(browse, pages_site, tmp_path):
    browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/lazy-skipped",
            "actions": [{"screenshot": "quick", "settle": False}],
        }
    )
    assert (tmp_path / "outputs/quick.png").is_file()
    assert "/lazy-skipped" in pages_site.seen and "/skipped.png" not in pages_site.seen
