"""Flows: the numbered steps, their options, the frontmatter keys, and the
agents the steps name."""

from __future__ import annotations

from ..check import rule
from ..desk import AGENT, FLOW
from ..findings import Finding
from ..model import did_you_mean, flow_of
from ..resolve import resolve_agent


@rule("flows.parse")
def parse(desk, context):
    for document in desk.of_kind(FLOW):
        if document.parsed is None:
            continue
        yield from flow_of(desk, document).problems


@rule("flows.agents")
def agents(desk, context):
    names = None
    for document in desk.of_kind(FLOW):
        if document.parsed is None:
            continue
        for step in flow_of(desk, document).steps:
            if resolve_agent(desk, step.agent) is not None:
                continue
            if names is None:
                names = desk.names(AGENT, scopes=("workspace",))
            hint = did_you_mean(step.agent, names, "[[{}]]") or f"; add agents/{step.agent}/agent.md or fix the name."
            yield Finding(
                document.path,
                step.line,
                "error",
                f"step {step.number} names [[{step.agent}]], which is not an agent in this workspace{hint}",
                "flows.agent_missing",
            )
