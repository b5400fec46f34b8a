"""Reading steps: get, eval, expect, if, screenshot, pdf and extract."""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from ...errors import WebToolError
from ..annotate import annotated
from ..aria import flag
from ..registry import run_steps, step
from ..util import steps_of

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from ..call import Call


@step("get", acts=False)
def get_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    plain = value in ("url", "title", "localstorage", "sessionstorage")
    call.results.append(
        {"get": value if plain else f"{item.get('what', 'text')} of {value}", "value": get(call, page, value, item)}
    )


@step("eval", acts=True)
def eval_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.no_script("eval")
    call.results.append({"eval": str(value), "value": page.evaluate(str(value))})


@step("expect", acts=False)
def expect(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    failure = call.claim(page, item, "expect")
    if failure:
        raise WebToolError(f"browse: expect failed at step {index}: {failure}; the steps after it did not run")
    call.notes.append(f"expect ✓ {json.dumps(item)[:120]}")


@step("if", acts=False)
def if_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    holds = call.claim(page, {**item, "expect": value}, "expect") is None
    run_steps(call, page, steps_of(item.get("then" if holds else "else") or []))


@step("screenshot", acts=False, capability="screenshot")
def screenshot(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if flag(item, "annotate"):  # every actionable element numbered on the picture (browse/annotate.py)
        if item.get("settle", True) not in (False, "false") and not item.get("selector") and not item.get("clip"):
            settle(call, page)
        call.notes.append(
            "screenshot: "
            + annotated(
                call,
                page,
                item.get("within"),
                lambda: keep_file(call, page, "screenshot", {**item, "settle": False}),
                whole=False,
            )
        )
        return
    call.notes.append(f"screenshot: {keep_file(call, page, 'screenshot', item)}")


@step("pdf", acts=False, capability="pdf")
def pdf(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.notes.append(f"pdf: {keep_file(call, page, 'pdf', item)}")


@step("extract", acts=False)
def extract_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    rows = extract(call, page, value, item)
    call.results.append({"extract": value, "rows": rows})
    call.tool.write_file(
        call.tool.sandbox / "outputs" / "extracted.json", json.dumps(rows, indent=1, ensure_ascii=False).encode()
    )


def get(call: "Call", page: "Page", value: Any, step: dict) -> Any:
    if value == "url":
        return page.url
    if value == "title":
        return page.title()
    if value in ("localstorage", "sessionstorage"):
        if call.seeded:
            raise WebToolError(f"browse: a get of {value} is refused where a secret seeded the session")
        store = "localStorage" if value == "localstorage" else "sessionStorage"
        return page.evaluate(f"k => window.{store}.getItem(k)", str(step.get("key") or ""))
    what = step.get("what") or "text"
    if what in ("value", "html") and call.secrets:
        raise WebToolError(
            "browse: a call that fills a secret reads no field back (get of a value) — read the "
            "page in the next call of the same session"
        )
    locator = call.locate(page, value)
    if what == "count":
        return locator.count()
    first = locator.first
    if what == "text":
        return first.inner_text()
    if what == "html":
        return first.inner_html()
    if what == "value":
        return first.input_value()
    if what == "visible":
        return first.is_visible()
    if what == "checked":
        return first.is_checked()
    if what == "enabled":
        return first.is_enabled()
    if what == "attr":
        return first.get_attribute(str(step.get("attr")))
    if what == "box":
        return first.bounding_box()
    if what == "styles":
        return styles(first, step.get("props"))
    raise WebToolError(
        f"browse: get what={what} is not one of text, html, value, count, box, visible, checked, enabled, styles, attr"
    )


# What `get what=styles` answers without `props`: what decides how an element looks and whether it shows.
STYLE_PROPS = (
    "display",
    "visibility",
    "opacity",
    "position",
    "z-index",
    "width",
    "height",
    "color",
    "background-color",
    "font-family",
    "font-size",
    "font-weight",
    "line-height",
    "text-align",
    "margin",
    "padding",
    "border",
    "overflow",
    "cursor",
    "pointer-events",
)


def styles(element: Any, props: Any) -> dict[str, str]:
    """The element's computed styles: the `props` asked for (a list or "a,b"), else STYLE_PROPS."""
    if props in (None, "", []):
        names = list(STYLE_PROPS)
    elif isinstance(props, str):
        names = [p.strip() for p in props.split(",") if p.strip()]
    elif isinstance(props, list) and all(isinstance(p, str) for p in props):
        names = [p.strip() for p in props]
    else:
        raise WebToolError(
            'browse: get what=styles: "props" is a list of CSS property names, such as ["color", "font-size"]'
        )
    return element.evaluate(
        "(e, names) => { const s = getComputedStyle(e); "
        "return Object.fromEntries(names.map(n => [n, s.getPropertyValue(n)])); }",
        names,
    )


def keep_file(call: "Call", page: "Page", kind: str, step: dict) -> str:
    name = step.get(kind) if isinstance(step.get(kind), str) and step.get(kind) else "page"
    suffix = ".pdf" if kind == "pdf" else (".jpg" if str(name).lower().endswith((".jpg", ".jpeg")) else ".png")
    stem = re.sub(r"[^A-Za-z0-9_.-]", "-", str(name)).removesuffix(suffix).removesuffix(".jpeg") or "page"
    target = call.tool.save_target(f"outputs/{stem}{suffix}")
    if kind == "pdf":
        data = page.pdf()
    elif step.get("selector"):
        data = call.locate(page, step["selector"]).screenshot()
    else:
        clip = clip_of(step.get("clip"))
        options: dict[str, Any] = {"full_page": clip is None and step.get("full", True) is not False}
        if clip is not None:
            options["clip"] = clip
        if suffix == ".jpg":
            options.update(type="jpeg", quality=int(step.get("quality") or 60))
        if options["full_page"] and step.get("settle", True) not in (False, "false"):
            settle(call, page)
        data = page.screenshot(**options)
    return call.tool.write_file(target, data)


def clip_of(value: Any) -> dict | None:
    """`"clip": [x, y, w, h]` in page pixels, or None."""
    if value in (None, "", []):
        return None
    if not (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in value)
        and value[0] >= 0
        and value[1] >= 0
        and value[2] > 0
        and value[3] > 0
    ):
        raise WebToolError(
            f'browse: screenshot "clip" is [x, y, width, height] in page pixels, width and height '
            f"above 0, such as [0, 0, 800, 600]; {json.dumps(value)} is not"
        )
    x, y, width, height = (float(n) for n in value)
    return {"x": x, "y": y, "width": width, "height": height}


# The settle scroll: down the page a screen at a time, so lazy images and what loads on view start, then back.
_SETTLE_JS = """async () => {
  const step = Math.max(200, window.innerHeight);
  const pause = () => new Promise(r => setTimeout(r, 50));
  for (let y = 0; y < document.documentElement.scrollHeight && y < 50000; y += step) { window.scrollTo(0, y); await pause(); }
  window.scrollTo(0, document.documentElement.scrollHeight);
  await pause();
  window.scrollTo(0, 0);
}"""


def settle(call: "Call", page: "Page") -> None:
    """Scroll once through the page before a full-page picture, then let what that started load (briefly:
    a page that never idles is taken as it stands)."""
    page.evaluate(_SETTLE_JS)
    try:
        page.wait_for_load_state("networkidle", timeout=call.deadline.clip(3000))
    except Exception:  # noqa: BLE001 - still loading: the picture as it stands
        pass


def extract(call: "Call", page: "Page", selector: Any, step: dict) -> list[dict]:
    fields = step.get("fields") or {}
    if not isinstance(fields, dict) or not fields:
        raise WebToolError('browse: extract needs "fields", such as {"name": "h3", "url": "a@href"}')
    limit = int(step.get("limit") or 1000)
    return page.evaluate(_EXTRACT_JS, {"selector": str(selector), "fields": fields, "limit": limit})


_EXTRACT_JS = """({selector, fields, limit}) => {
  const rows = [];
  for (const el of Array.from(document.querySelectorAll(selector)).slice(0, limit)) {
    const row = {};
    for (const [key, spec] of Object.entries(fields)) {
      const at = spec.lastIndexOf('@');
      const sel = at > 0 ? spec.slice(0, at) : (at === 0 ? '' : spec);
      const attr = at >= 0 ? spec.slice(at + 1) : null;
      const found = sel ? el.querySelector(sel) : el;
      row[key] = !found ? null : attr ? (attr === 'href' || attr === 'src' ? found[attr] || found.getAttribute(attr) : found.getAttribute(attr)) : found.innerText.trim();
    }
    rows.push(row);
  }
  return rows;
}"""
