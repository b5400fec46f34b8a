"""Skills: SKILL.md needs a description (and a name)."""

from __future__ import annotations

from ..check import rule
from ..desk import SKILL
from ..model import skill_of


@rule("skills.parse")
def parse(desk, context):
    for document in desk.of_kind(SKILL):
        if document.parsed is not None:
            yield from skill_of(desk, document).problems
