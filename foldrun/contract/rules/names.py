"""Names: odd characters, two files claiming one name, a `name:` that
differs from the path."""

from __future__ import annotations

import re

from ..check import rule
from ..desk import AGENT, FLOW, SKILL, TOOL
from ..findings import Finding
from ..model import NAME_RE

_NOUN = {AGENT: "agent", FLOW: "flow", TOOL: "tool", SKILL: "skill"}


def suggest(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", name).strip("-_")[:64] or "a-name"


@rule("names.characters")
def characters(desk, context):
    for kind, noun in _NOUN.items():
        for document in desk.of_kind(kind):
            name = document.name
            if not name or NAME_RE.match(name):
                continue
            line = document.line_of("name") if name != document.path_name else None
            yield Finding(
                document.path,
                line,
                "error",
                f"the {noun} name \"{name}\" has characters foldrun does not accept in a name; use letters, digits, '-' and '_', at most 64, starting with a letter or digit (such as {suggest(name)}).",
                "names.characters",
            )


@rule("names.duplicate")
def duplicate(desk, context):
    groups: dict[tuple, list] = {}
    for kind in _NOUN:
        for document in desk.of_kind(kind):
            if document.name:
                groups.setdefault((kind, document.agent, document.name), []).append(document)
    for (kind, agent, name), documents in groups.items():
        if len(documents) < 2:
            continue
        ordered = sorted(documents, key=lambda d: (".agents/" in d.path, d.path))
        first = ordered[0]
        where = f"agents/{agent}/" if agent else "this workspace"
        for other in ordered[1:]:
            if kind == SKILL:
                yield Finding(
                    other.path,
                    other.line_of("name"),
                    "warning",
                    f"the skill name {name} is also used by {first.path}, which wins; rename one of them or remove the copy.",
                    "names.duplicate",
                )
            else:
                yield Finding(
                    other.path,
                    other.line_of("name"),
                    "error",
                    f"the {_NOUN[kind]} name {name} is also used by {first.path}; two {_NOUN[kind]}s in {where} cannot share a name.",
                    "names.duplicate",
                )


@rule("names.mismatch")
def mismatch(desk, context):
    for kind, noun in _NOUN.items():
        for document in desk.of_kind(kind):
            if document.parsed is None or document.name == document.path_name or not NAME_RE.match(document.name):
                continue
            yield Finding(
                document.path,
                document.line_of("name"),
                "warning",
                f"name: {document.name} differs from the {noun}'s path name {document.path_name}; foldrun knows it as {document.name}, so rename one to match.",
                "names.mismatch",
            )
