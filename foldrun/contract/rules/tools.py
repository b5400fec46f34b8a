"""Tool files: transport and fields, and requirements.txt read as the spec says."""

from __future__ import annotations

from ..check import rule
from ..desk import TOOL
from ..findings import Finding
from ..model import tool_of


@rule("tools.parse")
def parse(desk, context):
    for document in desk.of_kind(TOOL):
        if document.parsed is not None:
            yield from tool_of(desk, document).problems


@rule("tools.requirements")
def requirements(desk, context):
    for document in desk.of_kind(TOOL):
        if document.parsed is None:
            continue
        tool = tool_of(desk, document)
        if tool.requirements is None:
            continue
        for line, option in tool.requirements.options:
            yield Finding(
                tool.requirements_path,
                line,
                "warning",
                f"{option} is not applied; foldrun installs the requirement lines themselves and the build log names what it skipped.",
                "tools.requirements_option",
            )
        for line, why in tool.requirements.refused:
            yield Finding(
                tool.requirements_path,
                line,
                "warning",
                f"this line {why} and is refused; nothing is installed from it — pin the package as name==version instead.",
                "tools.requirements_refused",
            )
