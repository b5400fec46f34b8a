"""Selectors: CSS, text=, label= … and the numbers a `mode=aria` read gave (`@e4`)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import WebToolError

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page

INTERACTIVE_ROLES = frozenset(
    {
        "button",
        "link",
        "textbox",
        "searchbox",
        "checkbox",
        "radio",
        "combobox",
        "listbox",
        "option",
        "slider",
        "spinbutton",
        "switch",
        "tab",
        "menuitem",
        "menuitemcheckbox",
        "menuitemradio",
        "treeitem",
    }
)


_SNAPSHOT_LINE = re.compile(
    r'^(\s*)- (?P<role>[a-zA-Z]+)(?: (?P<name>"(?:[^"\\]|\\.)*"))?(?P<rest>.*?)\[ref=(?P<ref>[a-z0-9]+)\]'
)


class RefsMixin:
    """Finding the element a step names."""

    # -- selectors -----------------------------------------------------------------
    def locate(self, page: "Page", selector: Any) -> "Locator":
        """A Playwright locator for a step's selector, in the frame a `frame` step chose, else the page —
        and when the page has no match, in every frame (a form inside an iframe is found without a `frame`)."""
        if not isinstance(selector, str) or not selector.strip():
            raise WebToolError("browse: a step needs a selector (CSS, text=…, role=…, or a number such as @e4)")
        selector = selector.strip()
        if re.fullmatch(r"@[ef]\d+(?:e\d+)?", selector):
            return self.by_ref(page, selector[1:])

        def build(root):  # noqa: ANN001, ANN202 - a Page or a Frame
            if selector.startswith("aria-ref="):
                return root.locator(selector)
            for prefix, method in (
                ("label=", root.get_by_label),
                ("placeholder=", root.get_by_placeholder),
                ("alt=", root.get_by_alt_text),
                ("title=", root.get_by_title),
                ("testid=", root.get_by_test_id),
            ):
                if selector.startswith(prefix):
                    return method(selector[len(prefix) :])
            return root.locator(selector)

        if self.scope is not None:
            return build(self.scope)
        found = build(page)
        if len(page.frames) > 1 and found.count() == 0:
            for frame in page.frames[1:]:
                inside = build(frame)
                if inside.count():
                    return inside
        return found

    def by_ref(self, page: "Page", ref: str) -> "Locator":
        saved = load_refs(self.tool.sandbox).get(self.session_key) or {}
        entry = (saved.get("refs") or {}).get(ref)
        if entry is None:
            raise WebToolError(
                f"@{ref} is not a number from the last mode=aria read of this session — read the page "
                f"with mode=aria first and use its numbers"
            )
        here = page_key(page.url)
        if saved.get("page") != here:
            raise WebToolError(
                f"@{ref} was read on {saved.get('page')}, not on this page ({here}) — read this page with "
                f"mode=aria first and use its numbers"
            )
        role, name, nth, of = entry["role"], entry.get("name"), int(entry["nth"]), int(entry["of"])
        root: Any = page
        within = entry.get("within")
        if within:  # a number made inside `within=` is found inside that part again, counted there
            part = self.locate(page, within)
            if part.count() == 0:
                raise WebToolError(
                    f"@{ref} was numbered within {within}, and the page has no {within} now — read "
                    f"the page with mode=aria again and use the new numbers"
                )
            root = part.first
        # a number without a name is counted among the nameless of its role, so it is looked for among them
        locator = root.get_by_role(role, name=name or "", exact=True)
        what = (
            f'{role} "{name}"' + (f" within {within}" if within else "")
            if name
            else role + (f" within {within}" if within else "")
        )
        count = locator.count()
        if count == 0:
            raise WebToolError(
                f"@{ref} ({what}) is gone from the page — read the page with mode=aria again and use the new numbers"
            )
        if count != of:
            raise WebToolError(
                f"@{ref} was {what} ({nth + 1} of {of}), and the page now has {count} of them — read "
                f"the page with mode=aria again and use the new numbers"
            )
        self.notes.append(f"@{ref} = {what} ({nth + 1} of {of})")
        return locator.nth(nth)


def page_key(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}{parts.path or '/'}"


def refs_file(sandbox: Path) -> Path:
    return sandbox / "outputs" / ".browser" / "refs.json"


def load_refs(sandbox: Path) -> dict:
    try:
        return json.loads(refs_file(sandbox).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def parse_snapshot(snapshot: str) -> dict[str, dict]:
    """`- button "Delete" [ref=e5]` → {e5: {role, name, nth, of}}, nth counting the same role and name."""
    entries: list[tuple[str, str, str | None]] = []
    for line in snapshot.splitlines():
        match = _SNAPSHOT_LINE.match(line)
        if not match:
            continue
        name = json.loads(match.group("name")) if match.group("name") else None
        entries.append((match.group("ref"), match.group("role"), name))
    totals: dict[tuple[str, str | None], int] = {}
    for _ref, role, name in entries:
        totals[(role, name)] = totals.get((role, name), 0) + 1
    seen: dict[tuple[str, str | None], int] = {}
    refs: dict[str, dict] = {}
    for ref, role, name in entries:
        nth = seen.get((role, name), 0)
        seen[(role, name)] = nth + 1
        refs[ref] = {"role": role, "name": name, "nth": nth, "of": totals[(role, name)]}
    return refs


def interactive_lines(snapshot: str) -> str:
    """`interactive=true`: only the numbered things one can act on, one per line, with a link's target."""
    lines = snapshot.splitlines()
    out: list[str] = []
    for index, line in enumerate(lines):
        match = _SNAPSHOT_LINE.match(line)
        if not match or match.group("role") not in INTERACTIVE_ROLES:
            continue
        text = line.strip().removeprefix("- ").rstrip(":")
        text = re.sub(r"\s*\[cursor=pointer\]", "", text)
        if match.group("role") == "link" and index + 1 < len(lines) and lines[index + 1].strip().startswith("- /url:"):
            text += " -> " + lines[index + 1].strip().removeprefix("- /url:").strip()
        out.append(text)
    return "\n".join(out) or "nothing on the page can be acted on"
