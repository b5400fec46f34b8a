"""A desk as the contract sees it: files by path, classified into documents.

Pure Python: no Django. The CLI builds a Desk from a folder on a laptop, the
server from a workspace's revisions plus the account library and the gallery
shelf; both then call the same `check`.

    Desk(files={path: text}, library={path: text}, gallery={path: text})
    Desk.documents / .library_documents / .gallery_documents
    Desk.of_kind(kind, scopes=("workspace",)) -> [Document]
    Desk.named(kind, name, scope=..., agent=...) -> [Document]   (index, built once)
    Desk.files_under(scope, folder) -> [path]                      (directory index)
    Desk.text(scope, path) -> str | None

A file that is not UTF-8 text is carried as BINARY_MARKER (see paths.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable

from .findings import ContractError, Finding
from .frontmatter import Parsed, split_frontmatter
from .paths import BINARY_MARKER, read_folder

# Kinds of document, by where they live.
AGENTS_MD = "agents-md"
AGENT = "agent"
FLOW = "flow"
TOOL = "tool"
SKILL = "skill"
CONCEPT = "concept"  # knowledge/*.md, memory/*.md
GENERATED = "generated"  # index.md, log.md in knowledge/ and memory/
OTHER = "other"  # programs, requirements.txt, package.json, state/, storage/ …

SCOPES = ("workspace", "library", "gallery")
CONCEPT_DIRS = ("knowledge", "memory")
GENERATED_NAMES = ("index.md", "log.md")
PARSED_KINDS = frozenset({AGENTS_MD, AGENT, FLOW, TOOL, SKILL, CONCEPT})
NAMED_KINDS = frozenset({AGENT, FLOW, TOOL, SKILL})


@dataclass
class Document:
    path: str
    kind: str
    text: str
    scope: str = "workspace"  # workspace | library | gallery
    agent: str | None = None  # set for files under agents/<name>/ (the agent's own)
    name: str = ""  # the name it is known by (agent, flow, tool, skill)
    parsed: Parsed | None = None
    error: Finding | None = None  # set when the file could not be parsed at all
    path_name: str = ""  # the name its path gives it (before any `name:`)

    @property
    def meta(self) -> dict:
        return self.parsed.meta if self.parsed else {}

    @property
    def body(self) -> str:
        return self.parsed.body if self.parsed else ""

    @property
    def binary(self) -> bool:
        return self.text == BINARY_MARKER

    def line_of(self, key: str) -> int | None:
        return self.parsed.line_of(key) if self.parsed else None

    def line_in(self, parent: str, key: str) -> int | None:
        return self.parsed.line_in(parent, key) if self.parsed else None

    def line_at(self, *keys: str) -> int | None:
        return self.parsed.line_at(*keys) if self.parsed else None

    @property
    def folder(self) -> str:
        """The directory holding this file ('' at the root)."""
        return self.path.rsplit("/", 1)[0] if "/" in self.path else ""


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
    document = Document(path=path, kind=kind, text=text, scope=scope, agent=agent, name=name, path_name=name)
    if kind in PARSED_KINDS and text != BINARY_MARKER:
        try:
            document.parsed = split_frontmatter(text, path, required=kind != AGENTS_MD)
        except ContractError as exc:
            document.error = exc.finding
    if kind in NAMED_KINDS and document.parsed:
        named = document.parsed.meta.get("name")
        if isinstance(named, str) and named.strip():
            document.name = named.strip()
    return document


@dataclass
class Desk:
    """A workspace's files, with the account library and gallery beneath it.

    `files`, `library` and `gallery` map relative paths to text. Resolution is
    nearest wins: the agent's own, the workspace's, the library's, the shelf
    (see resolve.py). Parsed models are cached per document (see model/), so
    build a new Desk after the files change.
    """

    files: dict[str, str]
    library: dict[str, str] = field(default_factory=dict)
    gallery: dict[str, str] = field(default_factory=dict)
    cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    @cached_property
    def documents(self) -> list[Document]:
        return [make_document(p, t, "workspace") for p, t in sorted(self.files.items())]

    @cached_property
    def library_documents(self) -> list[Document]:
        return [make_document(p, t, "library") for p, t in sorted(self.library.items())]

    @cached_property
    def gallery_documents(self) -> list[Document]:
        return [make_document(p, t, "gallery") for p, t in sorted(self.gallery.items())]

    def pool(self, scope: str) -> list[Document]:
        if scope == "workspace":
            return self.documents
        if scope == "library":
            return self.library_documents
        if scope == "gallery":
            return self.gallery_documents
        raise ValueError(f"unknown scope {scope!r}")

    def texts(self, scope: str) -> dict[str, str]:
        return {"workspace": self.files, "library": self.library, "gallery": self.gallery}[scope]

    def text(self, scope: str, path: str) -> str | None:
        return self.texts(scope).get(path)

    @cached_property
    def _by_kind(self) -> dict[tuple[str, str], list[Document]]:
        index: dict[tuple[str, str], list[Document]] = {}
        for scope in SCOPES:
            for document in self.pool(scope):
                index.setdefault((scope, document.kind), []).append(document)
        return index

    def of_kind(self, kind: str, *, scopes: Iterable[str] = ("workspace",)) -> list[Document]:
        if isinstance(scopes, str):
            scopes = (scopes,)
        return [d for scope in scopes for d in self._by_kind.get((scope, kind), [])]

    @cached_property
    def _by_name(self) -> dict[tuple[str, str, str | None, str], list[Document]]:
        index: dict[tuple[str, str, str | None, str], list[Document]] = {}
        for (scope, kind), documents in self._by_kind.items():
            if kind not in NAMED_KINDS:
                continue
            for document in documents:
                index.setdefault((kind, scope, document.agent, document.name), []).append(document)
        return index

    def named(self, kind: str, name: str, *, scope: str = "workspace", agent: str | None = None) -> list[Document]:
        """Documents of `kind` called `name` in one scope (an agent's own when
        `agent` is given). More than one means a duplicate."""
        return self._by_name.get((kind, scope, agent, name), [])

    @cached_property
    def _by_norm(self) -> dict[tuple[str, str, str | None, str], list[str]]:
        """(kind, scope, agent, name with '-' as '_') -> the names written."""
        index: dict[tuple[str, str, str | None, str], list[str]] = {}
        for kind, scope, owner, name in self._by_name:
            index.setdefault((kind, scope, owner, name.replace("-", "_")), []).append(name)
        return index

    def named_loosely(
        self, kind: str, name: str, *, scope: str = "workspace", agent: str | None = None
    ) -> list[Document]:
        """Like `named`, where `desk-email` and `desk_email` are one name."""
        exact = self.named(kind, name, scope=scope, agent=agent)
        if exact:
            return exact
        found: list[Document] = []
        for other in sorted(self._by_norm.get((kind, scope, agent, name.replace("-", "_")), [])):
            found.extend(self.named(kind, other, scope=scope, agent=agent))
        return found

    @cached_property
    def _names_index(self) -> dict[tuple[str, str, str | None], set[str]]:
        index: dict[tuple[str, str, str | None], set[str]] = {}
        for kind, scope, owner, name in self._by_name:
            index.setdefault((kind, scope, owner), set()).add(name)
        return index

    def names(self, kind: str, *, scopes: Iterable[str] = SCOPES, agent: str | None = None) -> set[str]:
        """Every name of `kind` visible from `scopes` (and `agent`'s own)."""
        found: set[str] = set()
        for scope in scopes:
            found |= self._names_index.get((kind, scope, None), set())
            if agent is not None:
                found |= self._names_index.get((kind, scope, agent), set())
        return found

    @cached_property
    def _folders(self) -> dict[tuple[str, str], list[str]]:
        index: dict[tuple[str, str], list[str]] = {}
        for scope in SCOPES:
            for path in self.texts(scope):
                folder = path.rsplit("/", 1)[0] if "/" in path else ""
                index.setdefault((scope, folder), []).append(path)
        return index

    def files_in(self, scope: str, folder: str) -> list[str]:
        """Paths directly inside `folder` (not deeper)."""
        return sorted(self._folders.get((scope, folder), []))

    @cached_property
    def _trees(self) -> dict[tuple[str, str], list[str]]:
        index: dict[tuple[str, str], list[str]] = {}
        for scope in SCOPES:
            for path in self.texts(scope):
                parts = path.split("/")
                for depth in range(1, len(parts)):
                    index.setdefault((scope, "/".join(parts[:depth])), []).append(path)
        for paths in index.values():
            paths.sort()
        return index

    def files_under(self, scope: str, folder: str) -> list[str]:
        """Paths anywhere beneath `folder`."""
        return list(self._trees.get((scope, folder.rstrip("/")), []))

    def agents_md(self, scope: str = "workspace") -> Document | None:
        for document in self.of_kind(AGENTS_MD, scopes=(scope,)):
            return document
        return None

    @classmethod
    def from_folder(cls, root: str | Path, **kwargs) -> "Desk":
        return cls(files=read_folder(Path(root)), **kwargs)
