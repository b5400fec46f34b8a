"""spec/tools.md: a flow step whose agent grants an outward tool must have a
`verify:` the runtime can fail on, or a gate (`!` or `ask:`). Neither, and
`foldrun check` fails, naming the step; a deploy warns, naming the step."""

from __future__ import annotations

from ..check import rule
from ..desk import FLOW
from ..findings import Finding
from ..model import flow_of
from ..resolve import granted_tools, resolve_agent


def outward_grants(desk, agent_name: str) -> list[str]:
    names = []
    for grant in granted_tools(desk, agent_name):
        if grant.tool is not None and grant.tool.outward:
            names.append(grant.name)
    return names


@rule("outward.unguarded")
def unguarded(desk, context):
    for document in desk.of_kind(FLOW):
        if document.parsed is None:
            continue
        for step in flow_of(desk, document).steps:
            if step.verify is not None or step.gated or resolve_agent(desk, step.agent) is None:
                continue
            names = outward_grants(desk, step.agent)
            if not names:
                continue
            plural = "s" if len(names) > 1 else ""
            yield Finding(
                document.path,
                step.line,
                context.level(),
                f"{step.label} grants the outward tool{plural} {', '.join(names)} but has neither verify: nor a gate; "
                f"add verify: file <path>, verify: reply <regex> or verify: grows <path>, put ! after [[{step.agent}]], or add ask: <question>.",
                "outward.unguarded",
            )
