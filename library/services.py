"""Reading the library: files at a revision, desks, nearest-wins resolution,
the blast radius, the gallery marks. No writes here (those are in actions,
which import this module; nothing here imports actions).

Resolution is nearest wins: the agent's own (`agents/<name>/…`), then the
workspace's, then the account library's, then the gallery shelf.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.db.models import OuterRef, Subquery

from accounts.models import Account, Workspace
from foldrun.contract import Desk
from foldrun.contract.desk import AGENT, AGENTS_MD, FLOW, SKILL, TOOL, classify, make_document
from foldrun.contract.resolve import agent_skills, granted_tools
from foldrun.gallery import gallery_files, gallery_tools

from .models import Changeset, LibraryFile, Revision, scope_key_for

_RESOLVED_KINDS = {AGENT, TOOL, SKILL, AGENTS_MD}


# ---------------------------------------------------------------- files


def sha256_text(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def file_at(account: Account, workspace: Workspace | None, path: str, number: int | None = None) -> Revision | None:
    """One live file of a scope as changeset `number` left it (the head when
    None), with its changeset; None when absent or deleted. One query."""
    revisions = Revision.objects.filter(file__scope_key=scope_key_for(account, workspace), file__path=path)
    if number is not None:
        revisions = revisions.filter(number__lte=number)
    revision = revisions.select_related("changeset", "changeset__author").order_by("-number").first()
    return None if revision is None or revision.deleted else revision


def files_at(
    account: Account, workspace: Workspace | None, number: int | None = None, *, with_content: bool = True
) -> dict[str, Revision]:
    """The live files of a scope at changeset `number` (the head when None)."""
    scope_key = scope_key_for(account, workspace)
    if number is None:
        files = LibraryFile.objects.select_related("head").filter(scope_key=scope_key, deleted=False)
        if not with_content:
            files = files.defer("head__content")
        return {f.path: f.head for f in files if f.head is not None}
    latest = (
        Revision.objects.filter(file_id=OuterRef("file_id"), number__lte=number).order_by("-number").values("pk")[:1]
    )
    revisions = (
        Revision.objects.filter(file__scope_key=scope_key, number__lte=number, deleted=False)
        .filter(pk=Subquery(latest))
        .select_related("file")
    )
    if not with_content:
        revisions = revisions.defer("content")
    return {r.file.path: r for r in revisions}


MARK_CURRENT = "gallery · current"
MARK_DIFFERS = "gallery · differs"


# ---------------------------------------------------------------- desks


def text_files(revisions: dict[str, Revision]) -> dict[str, str]:
    """Path → text for the UTF-8 files (binary storage/ files are not desk text)."""
    return {p: r.content for p, r in revisions.items() if r.encoding == "utf-8"}


def beneath(account: Account, workspace: Workspace | None) -> tuple[dict[str, str], dict[str, str]]:
    """What lies beneath a scope's own files: (account library, gallery shelf)
    for a workspace; (nothing, the shelf) for the library itself."""
    library = text_files(files_at(account, None)) if workspace is not None else {}
    return library, gallery_files()


def desk_for_workspace(workspace: Workspace, at: int | None = None) -> Desk:
    """The desk a run or a deploy sees: the workspace's files at changeset `at`
    (its head when None), the account library's head, and the gallery shelf."""
    return Desk(
        files=text_files(files_at(workspace.account, workspace, at)),
        library=text_files(files_at(workspace.account, None)),
        gallery=gallery_files(),
    )


def desk_for_library(account: Account, at: int | None = None) -> Desk:
    """The account library checked as a desk of its own (it has the same
    shape), with the gallery shelf beneath it."""
    return Desk(files=text_files(files_at(account, None, at)), gallery=gallery_files())


def desk_for_scope(account: Account, workspace: Workspace | None, at: int | None = None) -> Desk:
    return desk_for_workspace(workspace, at) if workspace is not None else desk_for_library(account, at)


# ---------------------------------------------------------------- gallery


def tool_paths(name: str, paths) -> list[str]:
    """The paths among `paths` that make up tool `name` (flat or folder form)."""
    flat, folder = f"tools/{name}.md", f"tools/{name}/"
    return sorted(p for p in paths if p == flat or p.startswith(folder))


def copy_of(heads: dict[str, Revision], name: str) -> dict[str, Revision]:
    """The scope's copy of gallery tool `name`, when it keeps one: the files
    under the tool's paths, provided at least one came from the gallery."""
    files = {p: heads[p] for p in tool_paths(name, heads)}
    if not any(r.gallery_tool == name for r in files.values()):
        return {}
    return files


def copy_mark(copy: dict[str, Revision], shelf: dict[str, str]) -> str:
    """`gallery · current` when the copy holds exactly the shelf's files."""
    mine = {p: r.sha256 for p, r in copy.items()}
    theirs = {p: sha256_text(t) for p, t in shelf.items()}
    return MARK_CURRENT if mine == theirs else MARK_DIFFERS


def copy_is_unedited(copy: dict[str, Revision], name: str) -> bool:
    """Every file of the copy is still what it was copied from the gallery."""
    return bool(copy) and all(r.gallery_tool == name and r.sha256 == r.gallery_sha256 for r in copy.values())


def gallery_marks(heads: dict[str, Revision]) -> dict[str, str]:
    """Path → mark for every file of every gallery copy in one scope."""
    marks: dict[str, str] = {}
    for name, shelf in gallery_tools().items():
        copy = copy_of(heads, name)
        if copy:
            mark = copy_mark(copy, shelf)
            marks.update({p: mark for p in copy})
    return marks


def gallery_tool_files(name: str) -> dict[str, str] | None:
    """One shelf tool's files (path → text), or None when the shelf has no such tool."""
    return gallery_tools().get(name)


def gallery_overview(account: Account) -> list[dict]:
    """The shelf's tools, and which copies the account keeps, with marks."""
    library = files_at(account, None, with_content=False)
    workspaces = list(Workspace.objects.filter(account=account).order_by("name"))
    ws_heads = {ws.pk: files_at(account, ws, with_content=False) for ws in workspaces}
    tools = []
    for name, shelf in sorted(gallery_tools().items()):
        main = f"tools/{name}/tool.md" if f"tools/{name}/tool.md" in shelf else f"tools/{name}.md"
        document = make_document(main, shelf.get(main, ""), "gallery")
        copies = []
        copy = copy_of(library, name)
        if copy:
            copies.append({"scope": "library", "workspace": None, "mark": copy_mark(copy, shelf)})
        for ws in workspaces:
            copy = copy_of(ws_heads[ws.pk], name)
            if copy:
                copies.append({"scope": "workspace", "workspace": ws.name, "mark": copy_mark(copy, shelf)})
        library_copy = next((c for c in copies if c["scope"] == "library"), None)
        tools.append(
            {
                "name": name,
                "description": " ".join(str(document.meta.get("description") or "").split()),
                "files": [
                    {"path": p, "sha256": sha256_text(t), "size": len(t.encode("utf-8"))}
                    for p, t in sorted(shelf.items())
                ],
                "kept": library_copy is not None,
                "mark": library_copy["mark"] if library_copy else None,
                "copies": copies,
            }
        )
    return tools


# ---------------------------------------------------------------- resolution


@dataclass(frozen=True)
class AgentInfo:
    workspace: str
    name: str
    path: str
    own_dir: str | None  # "agents/<name>/" for the folder form, None for agents/<name>.md
    tools: tuple[str, ...]
    description: str


def _names(value) -> tuple[str, ...]:
    """Grant names from a `tools:` value: strings, or mappings with a name."""
    if isinstance(value, str):
        value = [v.strip() for v in value.split(",")]
    if not isinstance(value, list):
        return ()
    names = []
    for item in value:
        if isinstance(item, dict) and item.get("name"):
            names.append(str(item["name"]))
        elif isinstance(item, str) and item.strip():
            names.append(item.strip())
    return tuple(names)


def agents_in(workspace_name: str, files: dict[str, str]) -> list[AgentInfo]:
    agents = []
    for path in sorted(files):
        kind, _owner, name = classify(path)
        if kind != AGENT:
            continue
        document = make_document(path, files[path])
        own = f"agents/{path.split('/')[1]}/" if path.endswith("/agent.md") else None
        agents.append(
            AgentInfo(
                workspace=workspace_name,
                name=document.name or name,
                path=path,
                own_dir=own,
                tools=_names(document.meta.get("tools")),
                description=" ".join(str(document.meta.get("description") or "").split()),
            )
        )
    return agents


def _subject(path: str) -> tuple[str, str]:
    """What a library/gallery file is part of: ("tool", name), ("skill", name)
    or ("file", path) for knowledge, memory, scripts, AGENTS.md and the rest."""
    parts = path.split("/")
    if parts[0] == "tools" and len(parts) >= 2:
        return "tool", parts[1][:-3] if len(parts) == 2 and parts[1].endswith(".md") else parts[1]
    if parts[0] == "skills" and len(parts) >= 3:
        return "skill", parts[1]
    return "file", path


def _nearer_paths(kind: str, name: str, path: str) -> list[str]:
    """Relative paths (from a desk root or an agent's own folder) whose presence
    shadows a library file."""
    if kind == "tool":
        return [f"tools/{name}.md", f"tools/{name}/tool.md"]
    if kind == "skill":
        return [f"skills/{name}/SKILL.md"]
    return [path]


def _resolution_files(account: Account, workspace: Workspace) -> tuple[dict[str, str], set[str]]:
    """A workspace's agents, tools, skills and AGENTS.md as text (what
    resolution reads), and the set of every live path (for same-path
    shadowing of knowledge, memory and the rest). Two queries."""
    heads = files_at(account, workspace, with_content=False)
    wanted = [r.pk for p, r in heads.items() if classify(p)[0] in _RESOLVED_KINDS and r.encoding == "utf-8"]
    texts = {r.file.path: r.content for r in Revision.objects.filter(pk__in=wanted).select_related("file")}
    return texts, set(heads)


def _main_path(kind: str, name: str, paths) -> str | None:
    """The document that defines tool/skill `name` among `paths`."""
    for candidate in _nearer_paths(kind, name, ""):
        if candidate in paths:
            return candidate
    return None


def library_overview(account: Account) -> list[dict]:
    """The Library page's blast radius: for every account-library file and
    every gallery shelf file, the agents (workspace, agent) that use it, and
    every nearer copy — a workspace's, an agent's own, or (for the shelf) the
    account library's — that overrides it.

    Tools and skills are resolved by the contract's own nearest-wins
    (`foldrun.contract.resolve`), the same lookup a run makes: a tool is used
    by the agents whose `tools:` grant resolves to it; a skill by the agents
    that carry it. Knowledge, memory, scripts and AGENTS.md are read by every
    agent of every workspace unless a file at the same path is nearer. An
    agent whose grant resolves nearer is listed under `overridden_by` with
    the path it gets instead, never under `granted_by`.
    """
    library_heads = files_at(account, None)
    library = text_files(library_heads)
    shelf = gallery_files()
    lib_marks = gallery_marks(library_heads)
    workspaces = list(Workspace.objects.filter(account=account).order_by("name"))

    uses: dict[tuple[str, str], list[dict]] = {}  # (scope, main path) -> [{workspace, agent}]
    shadows: dict[tuple[str, str], list[dict]] = {}  # (scope, main path) -> [{workspace, agent, path}]
    every_agent: list[tuple[str, str, str | None]] = []  # (workspace, agent, own folder)
    ws_paths: dict[str, set[str]] = {}
    desks: dict[str, Desk] = {}
    for ws in workspaces:
        texts, paths = _resolution_files(account, ws)
        ws_paths[ws.name] = paths
        desk = desks[ws.name] = Desk(files=texts, library=library, gallery=shelf)
        for document in desk.of_kind(AGENT):
            if document.parsed is None:
                continue
            agent = document.name
            own = f"agents/{document.path.split('/')[1]}/" if document.path.endswith("/agent.md") else None
            every_agent.append((ws.name, agent, own))
            hits = [(TOOL, g.name, g.resolved) for g in granted_tools(desk, agent) if g.kind == "tool" and g.resolved]
            hits += [(SKILL, r.document.name, r) for r in agent_skills(desk, agent)]
            for kind, name, resolved in hits:
                uses.setdefault((resolved.scope, resolved.path), []).append({"workspace": ws.name, "agent": agent})
                if resolved.scope != "agent":
                    # A workspace's copy is listed once per workspace, and the
                    # library's copy once, below; an agent's own is per agent.
                    continue
                for scope in ("library", "gallery"):
                    for shadowed in desk.named_loosely(kind, name, scope=scope):
                        shadows.setdefault((scope, shadowed.path), []).append(
                            {"workspace": ws.name, "agent": agent, "path": resolved.path}
                        )

    entries: list[dict] = []
    subjects = [(p, "library", lib_marks.get(p)) for p in sorted(library_heads)]
    # The shelf's own agents (the browser agent of a task) are the platform's, run by it: no agent grants them.
    subjects += [(p, "gallery", None) for p in sorted(shelf) if not p.startswith("agents/")]
    for path, scope, mark in subjects:
        kind, name = _subject(path)
        granted: list[dict] = []
        overridden: list[dict] = []
        if kind in ("tool", "skill"):
            contract_kind = TOOL if kind == "tool" else SKILL
            pool = library_heads if scope == "library" else shelf
            main = _main_path(kind, name, pool)
            if main is not None:
                granted = list(uses.get((scope, main), []))
                if scope == "gallery" and _main_path(kind, name, library_heads):
                    overridden.append({"workspace": None, "agent": None, "path": _main_path(kind, name, library_heads)})
                for ws in workspaces:
                    copies = desks[ws.name].named_loosely(contract_kind, name, scope="workspace")
                    if copies:
                        overridden.append({"workspace": ws.name, "agent": None, "path": copies[0].path})
                overridden += shadows.get((scope, main), [])
        else:
            for ws in workspaces:
                if path in ws_paths[ws.name]:
                    overridden.append({"workspace": ws.name, "agent": None, "path": path})
            for ws_name, agent, own in every_agent:
                if own and own + path in ws_paths[ws_name]:
                    overridden.append({"workspace": ws_name, "agent": agent, "path": own + path})
                elif path not in ws_paths[ws_name]:
                    granted.append({"workspace": ws_name, "agent": agent})
        entries.append(
            {
                "path": path,
                "scope": scope,
                "kind": kind,
                "name": name,
                "granted_by": granted,
                "overridden_by": overridden,
                "gallery": mark,
            }
        )
    return entries


# ---------------------------------------------------------------- pages


def changeset_dict(changeset: Changeset) -> dict:
    return {
        "id": changeset.public_id,
        "number": changeset.number,
        "kind": changeset.kind,
        "message": changeset.message,
        "author": changeset.who,
        "created_at": changeset.created_at.isoformat(),
    }


def workspace_overview(workspace: Workspace, *, recent: int = 10) -> dict:
    """What the workspace page shows: its agents, flows, files and recent revisions."""
    heads = files_at(workspace.account, workspace, with_content=False)
    marks = gallery_marks(heads)
    # Only agents and flows are read; the rest of the desk is listed by hash.
    wanted = [r.pk for p, r in heads.items() if classify(p)[0] in (AGENT, FLOW) and r.encoding == "utf-8"]
    files = {r.file.path: r.content for r in Revision.objects.filter(pk__in=wanted).select_related("file")}
    flows = []
    for path in sorted(files):
        kind, _owner, name = classify(path)
        if kind == FLOW:
            meta = make_document(path, files[path]).meta
            flows.append(
                {
                    "name": str(meta.get("name") or name),
                    "path": path,
                    "schedule": meta.get("schedule"),
                    "description": meta.get("description"),
                }
            )
    changesets = list(
        Changeset.objects.filter(scope_key=scope_key_for(workspace.account, workspace))
        .select_related("author")
        .order_by("-number")[:recent]
    )
    return {
        "workspace": {"id": workspace.public_id, "name": workspace.name, "description": workspace.description},
        "head": changesets[0].number if changesets else None,
        "agents": [
            {"name": a.name, "path": a.path, "description": a.description, "tools": list(a.tools)}
            for a in agents_in(workspace.name, files)
        ],
        "flows": flows,
        "files": [
            {"path": p, "sha256": r.sha256, "size": r.size, "revision": r.number, "gallery": marks.get(p)}
            for p, r in sorted(heads.items())
        ],
        "revisions": [changeset_dict(c) for c in changesets],
    }


def head_number(account: Account, workspace: Workspace | None) -> int:
    """The scope's newest changeset number (0 before the first write) — what
    a run records as the revision it ran at."""
    last = Changeset.objects.filter(scope_key=scope_key_for(account, workspace)).order_by("-number").first()
    return last.number if last is not None else 0


def history_of(account: Account, workspace: Workspace | None, path: str) -> list[Revision]:
    """Every revision of `path` in the scope, newest first ([] when unknown)."""
    row = LibraryFile.objects.filter(scope_key=scope_key_for(account, workspace), path=path).first()
    if row is None:
        return []
    return list(row.revisions.select_related("changeset", "changeset__author").defer("content").order_by("-number"))
