"""`mode=aria`: the accessibility tree, every element numbered for `"@e4"`, and the four options that cut it
down — `within` (one part of the page), `depth` (levels), `compact` (no empty containers), `delta` (only what
changed since the last read of the same page in the session). spec/tools.md, "Numbered elements".
"""

from __future__ import annotations

import difflib
import json
import re
from typing import TYPE_CHECKING, Any

from ..errors import WebToolError
from ..net import scrub_url
from .refs import interactive_lines, load_refs, page_key, parse_snapshot, refs_file
from .registry import mode
from .timing import mark

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call

ARIA_OPTIONS = ("interactive", "within", "depth", "compact", "delta")
DEPTH_RANGE = (1, 50)
KEPT_TREES = 20  # the last snapshots kept per session for `delta`: one per page (and options) read
_REF = re.compile(r" ?\[ref=[a-z0-9]+\]")
# A container with nothing of its own: `- generic [ref=e3]:` or `- group:` — no name, no text after the colon.
_EMPTY_CONTAINER = re.compile(r"^(\s*)- (?:generic|group)(?: \[ref=[a-z0-9]+\])?:?\s*$")


def flag(args: dict, key: str) -> bool:
    """A boolean option as a call writes it: true/false, or the words."""
    value = args.get(key)
    if value in (None, "", False, "false", "False", 0):
        return False
    if value in (True, "true", "True", 1):
        return True
    raise WebToolError(f"browse: {key}= is true or false, not {json.dumps(value)}")


def check_options(args: dict, mode_name: str) -> None:
    """Before a browser opens: the aria options go with mode=aria (within also with an annotated screenshot),
    and depth is a whole number of levels."""
    for key in ARIA_OPTIONS:
        if args.get(key) in (None, "", False, "false"):
            continue
        if mode_name == "aria" or (key == "within" and mode_name == "screenshot"):
            continue
        where = (
            "mode=aria or an annotated screenshot (mode=screenshot annotate=true)" if key == "within" else "mode=aria"
        )
        raise WebToolError(f"browse: {key}= goes with {where}; this call reads mode={mode_name}")
    for key in ("interactive", "compact", "delta"):
        flag(args, key)
    if args.get("within") not in (None, "") and (not isinstance(args["within"], str) or not args["within"].strip()):
        raise WebToolError("browse: within= is a selector for the part of the page to number, such as form#checkout")
    depth = args.get("depth")
    if depth not in (None, ""):
        low, high = DEPTH_RANGE
        try:
            levels = int(depth)
        except (TypeError, ValueError):
            levels = None
        if isinstance(depth, bool) or levels is None or str(levels) != str(depth).strip() or not low <= levels <= high:
            raise WebToolError(
                f"browse: depth= is how many levels of the tree, a whole number from {low} to {high}; "
                f"{json.dumps(depth)} is not"
            )


def compact_lines(snapshot: str) -> str:
    """Drop the empty containers and lift what they held by one level, so the tree still nests."""
    out: list[str] = []
    dropped: list[int] = []  # the indents of the containers dropped above the current line
    for line in snapshot.splitlines():
        indent = len(line) - len(line.lstrip(" "))
        while dropped and indent <= dropped[-1]:
            dropped.pop()
        if _EMPTY_CONTAINER.match(line):
            dropped.append(indent)
            continue
        out.append(line[2 * len(dropped) :] if line.startswith(" " * (2 * len(dropped))) else line)
    return "\n".join(out)


def _tree_key(page: "Page", args: dict) -> str:
    """What a delta compares like with like: the same page, read the same way."""
    shape = {key: args.get(key) for key in ("within", "depth", "compact", "interactive") if args.get(key)}
    return page_key(page.url) + (" " + json.dumps(shape, sort_keys=True) if shape else "")


def _unnumbered(line: str) -> str:
    return _REF.sub("", line)


def delta_of(before: str | None, now: str, where: str) -> str:
    """What changed between two reads, line by line. A fresh load numbers the page again, so an element that
    appeared shifts every later number: lines are compared without their numbers, and a new line keeps its own."""
    if before is None:
        return (
            f"first aria read of {where} in this session: the whole tree below; the next delta=true read shows "
            f"only what changed\n\n{now}"
        )
    old_lines, new_lines = before.splitlines(), now.splitlines()
    matcher = difflib.SequenceMatcher(
        None, [_unnumbered(l) for l in old_lines], [_unnumbered(l) for l in new_lines], autojunk=False
    )
    changed: list[str] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            continue
        changed += ["- " + _unnumbered(line) for line in old_lines[i1:i2]]
        changed += ["+ " + line for line in new_lines[j1:j2]]
    if not changed:
        return f"nothing changed on {where} since the last aria read in this session"
    return f"changed on {where} since the last aria read in this session (+ new, - gone):\n" + "\n".join(changed)


@mode("aria", acts=False, capability="aria")
def read_aria(call: "Call", page: "Page", args: dict) -> str:
    tool = call.tool
    within = str(args["within"]).strip() if args.get("within") not in (None, "") else None
    options: dict[str, Any] = {"mode": "ai"}
    if args.get("depth") not in (None, ""):
        options["depth"] = int(args["depth"])
    if within is not None:
        part = call.locate(page, within)
        if part.count() == 0:
            raise WebToolError(
                f"browse: within={within} matches nothing on {scrub_url(page.url)} — name a part of "
                f"the page that is there (read it with mode=aria to see its parts)"
            )
        snapshot = part.first.aria_snapshot(**options)
    else:
        snapshot = page.aria_snapshot(**options)
    mark("aria snapshot")
    refs = load_refs(tool.sandbox)
    session = refs.get(call.session_key) or {}
    numbered = parse_snapshot(snapshot)
    if within is not None:
        for entry in numbered.values():  # found again inside the same part, counted there
            entry["within"] = within
    if flag(args, "compact"):
        snapshot = compact_lines(snapshot)
    text = interactive_lines(snapshot) if flag(args, "interactive") else snapshot
    trees: dict[str, str] = dict(session.get("trees") or {})
    key = _tree_key(page, args)
    before = trees.pop(key, None)
    trees[key] = text
    while len(trees) > KEPT_TREES:
        trees.pop(next(iter(trees)))
    refs[call.session_key] = {"page": page_key(page.url), "refs": numbered, "trees": trees}
    tool.write_file(refs_file(tool.sandbox), json.dumps(refs, indent=1, ensure_ascii=False).encode())
    if flag(args, "delta"):
        return delta_of(before, text, scrub_url(page_key(page.url)))
    return text
