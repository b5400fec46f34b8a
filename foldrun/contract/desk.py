"""A desk as the contract sees it: files by path, classified into documents.

Pure Python: no Django. The CLI builds a Desk from a folder on a laptop, the
server from a workspace's revisions plus the account library and the gallery
shelf; both then call the same `check`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Iterable

from .findings import ContractError, Finding
from .frontmatter import Parsed, split_frontmatter

# Kinds of document, by where they live.
AGENTS_MD = "agents-md"
AGENT = "agent"
FLOW = "flow"
TOOL = "tool"
SKILL = "skill"
CONCEPT = "concept"      # knowledge/*.md, memory/*.md
GENERATED = "generated"  # index.md, log.md in knowledge/ and memory/
OTHER = "other"          # programs, requirements.txt, package.json, state/, storage/ …

CONCEPT_DIRS = ("knowledge", "memory")
GENERATED_NAMES = ("index.md", "log.md")

_AGENT_OWN = re.compile(r"^agents/(?P<agent>[^/]+)/(?P<rest>.+)$")


@dataclass
class Document:
    path: str
    kind: str
    text: str
    scope: str = "workspace"          # workspace | library | gallery
    agent: str | None = None          # set for files under agents/<name>/ (the agent's own)
    name: str = ""                    # the name it is known by (agent, flow, tool, skill)
    parsed: Parsed | None = None
    error: Finding | None = None      # set when the file could not be parsed at all

    @property
    def meta(self) -> dict:
        return self.parsed.meta if self.parsed else {}

    def line_of(self, key: str) -> int | None:
        return self.parsed.line_of(key) if self.parsed else None


def classify(path: str) -> tuple[str, str | None, str]:
    """(kind, owning agent, name) for a path relative to a desk or library root."""
    parts = path.split("/")
    agent: str | None = None
    rest = parts
    if parts[0] == "agents" and len(parts) >= 2:
        if len(parts) == 2 and parts[1].endswith(".md"):
            return AGENT, None, parts[1][:-3]
        if len(parts) == 3 and parts[2] == "agent.md":
            return AGENT, None, parts[1]
        agent = parts[1]
        rest = parts[2:]
    if not rest:
        return OTHER, agent, ""
    if len(rest) == 1 and rest[0] == "AGENTS.md" and agent is None:
        return AGENTS_MD, None, ""
    if rest[0] == "flows" and len(rest) == 2 and rest[1].endswith(".md") and agent is None:
        return FLOW, None, rest[1][:-3]
    if rest[0] == "tools":
        if len(rest) == 2 and rest[1].endswith(".md"):
            return TOOL, agent, rest[1][:-3]
        if len(rest) == 3 and rest[2] == "tool.md":
            return TOOL, agent, rest[1]
        return OTHER, agent, rest[1] if len(rest) > 1 else ""
    if rest[0] == "skills" or (rest[0] == ".agents" and len(rest) > 1 and rest[1] == "skills"):
        skill_parts = rest[1:] if rest[0] == "skills" else rest[2:]
        if len(skill_parts) == 2 and skill_parts[1] == "SKILL.md":
            return SKILL, agent, skill_parts[0]
        return OTHER, agent, skill_parts[0] if skill_parts else ""
    if rest[0] in CONCEPT_DIRS and len(rest) >= 2 and rest[-1].endswith(".md"):
        if rest[-1] in GENERATED_NAMES:
            return GENERATED, agent, ""
        return CONCEPT, agent, rest[-1][:-3]
    return OTHER, agent, ""


def make_document(path: str, text: str, scope: str = "workspace") -> Document:
    kind, agent, name = classify(path)
    document = Document(path=path, kind=kind, text=text, scope=scope, agent=agent, name=name)
    if kind in {AGENTS_MD, AGENT, FLOW, TOOL, SKILL, CONCEPT}:
        try:
            document.parsed = split_frontmatter(text, path, required=kind != AGENTS_MD)
        except ContractError as exc:
            document.error = exc.finding
    if kind == AGENT and document.parsed and document.parsed.meta.get("name"):
        document.name = str(document.parsed.meta["name"])
    return document


@dataclass
class Desk:
    """A workspace's files, with the account library and gallery beneath it.

    `files`, `library` and `gallery` map relative paths to text. Resolution is
    nearest wins: the agent's own, the workspace's, the library's, the shelf.
    """

    files: dict[str, str]
    library: dict[str, str] = field(default_factory=dict)
    gallery: dict[str, str] = field(default_factory=dict)

    @cached_property
    def documents(self) -> list[Document]:
        return [make_document(p, t, "workspace") for p, t in sorted(self.files.items())]

    @cached_property
    def library_documents(self) -> list[Document]:
        return [make_document(p, t, "library") for p, t in sorted(self.library.items())]

    @cached_property
    def gallery_documents(self) -> list[Document]:
        return [make_document(p, t, "gallery") for p, t in sorted(self.gallery.items())]

    def of_kind(self, kind: str, *, scopes: Iterable[str] = ("workspace",)) -> list[Document]:
        pools = {"workspace": self.documents, "library": self.library_documents, "gallery": self.gallery_documents}
        return [d for scope in scopes for d in pools[scope] if d.kind == kind]

    @classmethod
    def from_folder(cls, root: str | Path, **kwargs) -> "Desk":
        from .paths import read_folder

        return cls(files=read_folder(Path(root)), **kwargs)
