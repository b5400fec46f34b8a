"""Skills and concepts parsed (skill_of, concept_of), and a workspace's agent or flow found by name (find_agent, find_flow)."""

from __future__ import annotations

from ..desk import AGENT, FLOW, Desk, Document
from ..findings import Finding
from ..skill_inputs import declaration_of
from .agents import agent_of
from .flows import flow_of
from .records import Agent, Concept, Flow, Skill
from .values import cached_model, as_str


def skill_of(desk: Desk, document: Document) -> Skill:
    def build() -> Skill:
        meta = document.meta
        problems: list[Finding] = []
        description = as_str(meta.get("description"))
        if document.parsed and not description:
            problems.append(
                Finding(
                    document.path,
                    2,
                    "error",
                    "has no description:; a skill needs name: and description: — the description is all an agent sees until a task matches it.",
                    "skill.description",
                )
            )
        if document.parsed and not as_str(meta.get("name")):
            problems.append(
                Finding(
                    document.path,
                    2,
                    "warning",
                    f"has no name:; add name: {document.path_name} (the Agent Skills format wants the folder's name).",
                    "skill.name",
                )
            )
        declaration, bad = declaration_of(meta, document.path, document.line_at)
        problems.extend(bad)
        return Skill(
            name=document.name,
            path=document.path,
            scope=document.scope,
            description=description,
            agent=document.agent,
            folder=document.folder,
            body=document.body,
            meta=meta,
            problems=problems,
            declaration=declaration,
        )

    return cached_model(desk, document, "skill", build)


def concept_of(desk: Desk, document: Document) -> Concept:
    def build() -> Concept:
        meta = document.meta
        type_ = as_str(meta.get("type")) or None
        concept = Concept(
            path=document.path,
            scope=document.scope,
            type=type_,
            title=as_str(meta.get("title")),
            description=as_str(meta.get("description")),
            agent=document.agent,
            body=document.body,
            meta=meta,
        )
        if document.parsed:
            directory = "knowledge" if "knowledge/" in document.path else "memory"
            if not type_:
                concept.problems.append(
                    Finding(
                        document.path,
                        1,
                        "error",
                        f"has no type: in its frontmatter; a concept in {directory}/ needs type:, title: and description:, and the server refuses a push that adds one without type:.",
                        "concept.type",
                    )
                )
            missing = [k for k in ("title", "description") if not as_str(meta.get(k))]
            if missing and type_:
                concept.problems.append(
                    Finding(
                        document.path,
                        1,
                        "warning",
                        f"has no {' or '.join(k + ':' for k in missing)}; the index of {directory}/ shows them, so add {'them' if len(missing) > 1 else 'it'}.",
                        "concept.fields",
                    )
                )
        return concept

    return cached_model(desk, document, "concept", build)


def find_agent(desk: Desk, name: str) -> Agent | None:
    """The workspace's agent called `name` (agents live only in workspaces)."""
    documents = [d for d in desk.named(AGENT, name, scope="workspace") if d.parsed]
    return agent_of(desk, documents[0]) if documents else None


def find_flow(desk: Desk, name: str) -> Flow | None:
    documents = [d for d in desk.named(FLOW, name, scope="workspace") if d.parsed]
    return flow_of(desk, documents[0]) if documents else None


def flow_names(desk: Desk) -> list[str]:
    """The workspace's flows by name, sorted: the choices a sentence about a missing flow lists."""
    return sorted(desk.names(FLOW, scopes=("workspace",)))


def flow_choices(names: list[str]) -> str:
    """How a sentence about a missing flow ends: the flows there are, or that there are none yet."""
    return f"its flows are {', '.join(names)}" if names else "it has no flows yet (flows/NAME.md makes one)"
