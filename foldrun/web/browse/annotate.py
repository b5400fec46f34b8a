"""`mode=screenshot annotate=true`: a box and its number over every element that can be acted on, the list
under the picture, and the numbers kept as `mode=aria` keeps them, so `"@e4"` works in the next call — for an
icon button with no name, a canvas, or a layout the tree cannot describe (spec "Numbered elements").

The numbers are the accessibility snapshot's own (`within=` numbers one part of the page, found there again);
the boxes are drawn into the page for the picture only and taken out straight after it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable

from ..errors import WebToolError
from ..net import scrub_url
from .aria import flag
from .refs import INTERACTIVE_ROLES, load_refs, page_key, parse_snapshot, refs_file

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call

_OVERLAY_ID = "__foldrun_annotations"

_BOX_JS = """e => { const r = e.getBoundingClientRect();
  const s = getComputedStyle(e);
  if (!r.width || !r.height || s.visibility === 'hidden' || s.display === 'none') return null;
  return [r.left + scrollX, r.top + scrollY, r.width, r.height]; }"""

_DRAW_JS = """([id, boxes]) => {
  const layer = document.createElement('div');
  layer.id = id;
  layer.style.cssText = 'position:absolute;left:0;top:0;width:0;height:0;z-index:2147483647;pointer-events:none';
  for (const [ref, x, y, w, h] of boxes) {
    const box = document.createElement('div');
    box.style.cssText = `position:absolute;left:${x}px;top:${y}px;width:${w}px;height:${h}px;` +
      'box-sizing:border-box;border:2px solid #e0218a;pointer-events:none';
    const tag = document.createElement('span');
    tag.textContent = ref;
    tag.style.cssText = `position:absolute;left:${x}px;top:${Math.max(0, y - 14)}px;background:#e0218a;color:#fff;` +
      'font:bold 11px/14px monospace;padding:0 3px;border-radius:2px;pointer-events:none';
    layer.append(box, tag);
  }
  document.documentElement.appendChild(layer);
}"""


def check_annotate_options(args: dict, mode_name: str) -> None:
    """Before a browser opens: annotate goes with mode=screenshot, and a screenshot numbers a part of the page
    (within=) only when it is annotated."""
    annotate = flag(args, "annotate")
    if annotate and mode_name != "screenshot":
        raise WebToolError(f"browse: annotate= goes with mode=screenshot; this call reads mode={mode_name}")
    if mode_name == "screenshot" and not annotate and args.get("within") not in (None, "", False):
        raise WebToolError(
            "browse: within= goes with mode=aria or an annotated screenshot (mode=screenshot "
            "annotate=true); this screenshot is not annotated"
        )


def _line(entry: dict, ref: str, target: str | None) -> str:
    what = f"{entry['role']} {json.dumps(entry['name'], ensure_ascii=False)}" if entry.get("name") else entry["role"]
    return f"@{ref} {what}" + (f" -> {target}" if target else "")


def _link_targets(snapshot: str) -> dict[str, str]:
    """A link's `/url:` line, kept under its number."""
    targets: dict[str, str] = {}
    lines = snapshot.splitlines()
    for index, line in enumerate(lines[:-1]):
        if "[ref=" in line and line.lstrip().startswith("- link") and lines[index + 1].strip().startswith("- /url:"):
            ref = line.split("[ref=", 1)[1].split("]", 1)[0]
            targets[ref] = lines[index + 1].strip().removeprefix("- /url:").strip()
    return targets


def annotated(call: "Call", page: "Page", within_raw: Any, take: Callable[[], str], whole: bool = True) -> str:
    """Number, box and picture the page (`take` keeps the picture and names its file; the caller has settled
    the page first, so nothing moves once measured)."""
    tool = call.tool
    within = str(within_raw).strip() if within_raw not in (None, "") else None
    if within is not None:
        part = call.locate(page, within)
        if part.count() == 0:
            raise WebToolError(
                f"browse: within={within} matches nothing on {scrub_url(page.url)} — name a part of "
                f"the page that is there (read it with mode=aria to see its parts)"
            )
        snapshot = part.first.aria_snapshot(mode="ai")
    else:
        snapshot = page.aria_snapshot(mode="ai")
    numbered = parse_snapshot(snapshot)
    if within is not None:
        for entry in numbered.values():  # found again inside the same part, counted there
            entry["within"] = within
    targets = _link_targets(snapshot)
    boxes: list[list] = []
    lines: list[str] = []
    unseen = 0
    for ref, entry in numbered.items():
        if entry["role"] not in INTERACTIVE_ROLES:
            continue
        try:
            box = page.locator(f"aria-ref={ref}").evaluate(_BOX_JS, timeout=2000)
        except Exception:  # noqa: BLE001 - gone since the snapshot: not drawn
            box = None
        if box is None:
            unseen += 1
            continue
        boxes.append([ref, *box])
        lines.append(_line(entry, ref, targets.get(ref)))
    refs = load_refs(tool.sandbox)
    session = refs.get(call.session_key) or {}
    refs[call.session_key] = {"page": page_key(page.url), "refs": numbered, "trees": session.get("trees") or {}}
    tool.write_file(refs_file(tool.sandbox), json.dumps(refs, indent=1, ensure_ascii=False).encode())
    page.evaluate(_DRAW_JS, [_OVERLAY_ID, boxes])
    try:
        where = take()
    finally:
        page.evaluate("id => document.getElementById(id)?.remove()", _OVERLAY_ID)
    head = (
        f"{where} — "
        + (f"the full page at {page.viewport_size['width']}px wide, " if whole else "")
        + f"{len(boxes)} element"
        f"{'s' if len(boxes) != 1 else ''} that can be acted on boxed and numbered"
        + (f" within {within}" if within else "")
        + f". Read {where} to see it."
    )
    if not boxes:
        return head + "\n\nnothing on the page can be acted on"
    tail = [f"({unseen} more numbered but not on screen: hidden or of no size)"] if unseen else []
    return head + '\n\nThe numbers, for a step such as {"click": "@e4"}:\n' + "\n".join(lines + tail)
