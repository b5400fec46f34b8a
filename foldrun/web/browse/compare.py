"""`mode=diff`: the page against the last diff read of the same URL, or `against=` another page now — as
markdown (a line diff with context) or, with `visual=true`, as pixels: the share that changed, the rectangle
they fall in, and `outputs/diff.png` with the changes in red on a faded copy of the page as it is now.

The pixels are compared in a blank tab of the same browser (a canvas), so no imaging library is needed and
the page's own CSP has no say.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from .. import pages
from ..errors import WebToolError
from ..net import scrub_url
from .aria import flag
from .refs import page_key
from .registry import mode

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call

# A pixel counts as changed when its red, green and blue move by more than this between them (anti-aliasing
# of the same text drawn twice moves none: the same build draws the same page the same way).
CHANNEL_THRESHOLD = 24

_PIXELS_JS = """async ({before, now, threshold}) => {
  const load = src => new Promise((ok, no) => { const i = new Image(); i.onload = () => ok(i);
    i.onerror = () => no(new Error('a picture did not decode')); i.src = 'data:image/png;base64,' + src; });
  const [a, b] = await Promise.all([load(before), load(now)]);
  const w = Math.max(a.width, b.width), h = Math.max(a.height, b.height);
  const pixels = img => { const c = new OffscreenCanvas(w, h); const x = c.getContext('2d');
    x.drawImage(img, 0, 0); return x.getImageData(0, 0, w, h).data; };
  const A = pixels(a), B = pixels(b);
  const out = new OffscreenCanvas(w, h), ctx = out.getContext('2d'), picture = ctx.createImageData(w, h), o = picture.data;
  let changed = 0, x0 = w, y0 = h, x1 = -1, y1 = -1;
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) {
    const i = (y * w + x) * 4;
    const outside = x >= a.width || y >= a.height || x >= b.width || y >= b.height;
    const moved = outside || Math.abs(A[i] - B[i]) > threshold || Math.abs(A[i + 1] - B[i + 1]) > threshold
      || Math.abs(A[i + 2] - B[i + 2]) > threshold;
    if (moved) {
      changed++; if (x < x0) x0 = x; if (y < y0) y0 = y; if (x > x1) x1 = x; if (y > y1) y1 = y;
      o[i] = 255; o[i + 1] = 0; o[i + 2] = 0;
    } else {  // the page as it is now, faded three quarters towards white
      o[i] = 255 - (255 - B[i]) / 4; o[i + 1] = 255 - (255 - B[i + 1]) / 4; o[i + 2] = 255 - (255 - B[i + 2]) / 4;
    }
    o[i + 3] = 255;
  }
  ctx.putImageData(picture, 0, 0);
  const blob = await out.convertToBlob({type: 'image/png'});
  const bytes = new Uint8Array(await blob.arrayBuffer());
  let text = ''; for (let i = 0; i < bytes.length; i += 32768) text += String.fromCharCode(...bytes.subarray(i, i + 32768));
  return {width: w, height: h, changed, total: w * h, box: changed ? [x0, y0, x1 - x0 + 1, y1 - y0 + 1] : null,
          png: btoa(text)};
}"""


def check_diff_options(args: dict, mode_name: str) -> None:
    """Before a browser opens: visual and against go with mode=diff, against is an http(s) URL."""
    for key in ("visual", "against"):
        if args.get(key) not in (None, "", False, "false") and mode_name != "diff":
            raise WebToolError(f"browse: {key}= goes with mode=diff; this call reads mode={mode_name}")
    flag(args, "visual")
    against = args.get("against")
    if against not in (None, ""):
        parts = urlsplit(against) if isinstance(against, str) else None
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise WebToolError(
                "browse: against= is the URL of another page to compare this one with, such as "
                "https://staging.example.com/pricing"
            )


def refuse_against(call: "Call", args: dict) -> None:
    """against= names a host the call's guards refuse (allowed_domains, a private address): said before a
    browser opens, as for url=."""
    against = args.get("against")
    reason = call.host_refusal(str(against).strip()) if against not in (None, "") else None
    if reason:
        raise WebToolError(f"browse: against={scrub_url(str(against).strip())} was not opened — {reason}")


def _baseline(call: "Call", page: "Page", suffix: str):  # noqa: ANN202 - a Path
    key = hashlib.sha256(page_key(page.url).encode() + b"?" + urlsplit(page.url).query.encode()).hexdigest()[:20]
    return call.tool.sandbox / "state" / "browser" / "diff" / f"{key}{suffix}"


def _picture(page: "Page") -> bytes:
    return page.screenshot(full_page=True, animations="disabled", caret="hide")


def _open_against(call: "Call", page: "Page", url: str) -> "Page":
    """The other page, in a tab of its own in the same context (the call's guards hold for it too)."""
    reason = call.host_refusal(url)
    if reason:
        raise WebToolError(f"browse: against={scrub_url(url)} was not opened — {reason}")
    other = page.context.new_page()
    other.set_viewport_size(page.viewport_size or {"width": 1280, "height": 720})
    try:
        response = other.goto(url, wait_until="load", timeout=call.deadline.clip(call.tool.browse_timeout * 1000))
    except Exception as exc:  # noqa: BLE001 - Playwright's reason, first line
        other.close()
        refused = call.proxy_refusal(url)
        raise WebToolError(
            f"browse: against={scrub_url(url)} did not open: {refused or str(exc).splitlines()[0]}"
        ) from None
    if response is not None and response.status >= 400:
        call.notes.append(f"against={scrub_url(url)} answered HTTP {response.status}")
    return other


def _compare_pixels(call: "Call", page: "Page", before: bytes, now: bytes) -> dict:
    blank = page.context.new_page()
    try:
        return blank.evaluate(
            _PIXELS_JS,
            {
                "before": base64.b64encode(before).decode(),
                "now": base64.b64encode(now).decode(),
                "threshold": CHANNEL_THRESHOLD,
            },
        )
    finally:
        blank.close()


def _pixels_said(call: "Call", found: dict, than: str) -> str:
    tool = call.tool
    where = tool.write_file(tool.sandbox / "outputs" / "diff.png", base64.b64decode(found["png"]))
    if not found["changed"]:
        return f"no pixel changed {than} ({found['width']}×{found['height']}); {where} is the page, faded"
    share = 100 * found["changed"] / found["total"]
    x, y, w, h = found["box"]
    return (
        f"{share:.2f}% of the pixels changed {than} ({found['changed']:,} of {found['total']:,}), within the "
        f"rectangle x={x} y={y} w={w} h={h}; {where} shows the changes in red on a faded copy of the page as it "
        f"is now. Read {where} to see it."
    )


@mode("diff", acts=False)
def read_diff(call: "Call", page: "Page", args: dict) -> str:
    visual = flag(args, "visual")
    against = str(args["against"]).strip() if args.get("against") not in (None, "") else None
    if against is not None:
        other = _open_against(call, page, against)
        try:
            if visual:
                found = _compare_pixels(call, page, _picture(other), _picture(page))
                return _pixels_said(call, found, f"from {scrub_url(against)} to {scrub_url(page.url)}")
            theirs = pages.to_markdown(other.content(), other.url)
        finally:
            if not other.is_closed():
                other.close()
        ours = pages.to_markdown(page.content(), page.url)
        lines = list(
            difflib.unified_diff(
                theirs.splitlines(), ours.splitlines(), scrub_url(against), scrub_url(page.url), n=2, lineterm=""
            )
        )
        return "\n".join(lines) if lines else f"{scrub_url(page.url)} reads the same as {scrub_url(against)}"
    return _against_baseline(call, page, visual)


def _against_baseline(call: "Call", page: "Page", visual: bool) -> str:
    """The last diff read of the same URL (its markdown, or its picture with visual=true); the first saves it."""
    tool = call.tool
    shown = scrub_url(page.url)
    kind = "visual diff" if visual else "diff"
    baseline = _baseline(call, page, ".png" if visual else ".md")
    before = baseline.read_bytes() if baseline.is_file() else None
    now = _picture(page) if visual else pages.to_markdown(page.content(), page.url).encode()
    tool.write_file(baseline, now)
    where = tool.relative(baseline)
    if before is None:
        size = f"{page.viewport_size['width']}px wide" if visual else f"{len(now.decode().splitlines())} lines"
        return (
            f"first {kind} read of {shown}: saved as the baseline ({size}, {where}); the next {kind} read "
            f"compares with it"
        )
    if visual:
        return _pixels_said(
            call, _compare_pixels(call, page, before, now), f"since the last visual diff read of {shown}"
        )
    lines = list(
        difflib.unified_diff(before.decode().splitlines(), now.decode().splitlines(), "before", "now", n=2, lineterm="")
    )
    return "\n".join(lines) if lines else f"no change since the last diff read of {shown}"
