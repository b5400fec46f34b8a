"""Built-in tool groups, by the names `limits:` uses.

`read` (Read, Glob, Grep), `write` (Write, Edit), `code` (Bash), `search`
(search_files), `history` (recall_runs, read_run), `ask` (a question to a
person; parks the run). `memory/` is writable without `write`; `knowledge/`
never is. Every path is checked by the sandbox before any work is done.
"""

from __future__ import annotations

import fnmatch
import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

from ..sandbox import SandboxPathError, is_memory_path
from .base import Park, ToolError, schema
from .registry import builtin, builtin_groups, builtin_tools

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ToolContext

MAX_READ_CHARS = 200_000


def _path(env: "ToolContext", raw: str, *, write: bool = False) -> Path:
    try:
        return env.sandbox.resolve(raw, for_write=write)
    except SandboxPathError as exc:
        raise ToolError(str(exc)) from None


@builtin(
    "Read",
    group="read",
    description="Read a text file in the workspace. Returns numbered lines.",
    schema=schema({"path": {"type": "string"}, "offset": {"type": "integer"}, "limit": {"type": "integer"}}, ["path"]),
)
def read_file(args: dict, env: "ToolContext") -> str:
    path = _path(env, args["path"])
    if not path.is_file():
        raise ToolError(f"{args['path']}: no such file")
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = text.splitlines()
    offset = max(int(args.get("offset") or 1), 1)
    limit = int(args.get("limit") or 2000)
    chunk = lines[offset - 1 : offset - 1 + limit]
    out = "\n".join(f"{offset + i:>6}\t{line}" for i, line in enumerate(chunk))
    return out[:MAX_READ_CHARS] or "(empty file)"


def _walk(env: "ToolContext", base: Path):
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") or d == ".agents")
        for name in sorted(filenames):
            full = Path(dirpath) / name
            if full.is_symlink():
                continue
            yield full


@builtin(
    "Glob",
    group="read",
    description="List files whose path matches a glob pattern, e.g. knowledge/*.md.",
    schema=schema({"pattern": {"type": "string"}, "path": {"type": "string"}}, ["pattern"]),
)
def glob_files(args: dict, env: "ToolContext") -> str:
    pattern = args["pattern"]
    if pattern.startswith("/") or ".." in Path(pattern).parts:
        raise ToolError(f"{pattern}: patterns stay inside the workspace")
    base = _path(env, args.get("path") or ".")
    hits = [
        env.sandbox.rel(p)
        for p in _walk(env, base)
        if fnmatch.fnmatch(env.sandbox.rel(p), pattern) or fnmatch.fnmatch(p.name, pattern)
    ]
    return "\n".join(hits[:500]) or "no files match"


@builtin(
    "Grep",
    group="read",
    description="Search file contents with a regular expression; returns path:line: text.",
    schema=schema({"pattern": {"type": "string"}, "path": {"type": "string"}, "glob": {"type": "string"}}, ["pattern"]),
)
def grep_files(args: dict, env: "ToolContext") -> str:
    try:
        regex = re.compile(args["pattern"])
    except re.error as exc:
        raise ToolError(f"Grep: the pattern is not a regular expression: {exc}") from None
    base = _path(env, args.get("path") or ".")
    only = args.get("glob")
    hits: list[str] = []
    files = [base] if base.is_file() else _walk(env, base)
    for full in files:
        rel = env.sandbox.rel(full)
        if only and not fnmatch.fnmatch(full.name, only) and not fnmatch.fnmatch(rel, only):
            continue
        try:
            for number, line in enumerate(full.read_text(encoding="utf-8").splitlines(), 1):
                if regex.search(line):
                    hits.append(f"{rel}:{number}: {line[:300]}")
        except (UnicodeDecodeError, OSError):
            continue
        if len(hits) >= 300:
            break
    return "\n".join(hits) or "no matches"


def _may_write(env: "ToolContext", raw: str) -> Path:
    path = _path(env, raw, write=True)
    rel = env.sandbox.rel(path) if path.exists() else Path(raw.strip()).as_posix()
    if "write" not in env.granted and not is_memory_path(rel):
        raise ToolError(f"{raw}: this agent is not granted `write`; without it only memory/ is writable")
    return path


@builtin(
    "Write",
    group="write",
    always=True,
    description="Write a file (memory/ always; anywhere but knowledge/ with the write grant).",
    schema=schema({"path": {"type": "string"}, "content": {"type": "string"}}, ["path", "content"]),
)
def write_file(args: dict, env: "ToolContext") -> str:
    path = _may_write(env, args["path"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(args["content"], encoding="utf-8")
    return f"wrote {args['path']} ({len(args['content'].encode())} bytes)"


@builtin(
    "Edit",
    group="write",
    always=True,
    description="Replace old_string with new_string in a file.",
    schema=schema(
        {
            "path": {"type": "string"},
            "old_string": {"type": "string"},
            "new_string": {"type": "string"},
            "replace_all": {"type": "boolean"},
        },
        ["path", "old_string", "new_string"],
    ),
)
def edit_file(args: dict, env: "ToolContext") -> str:
    path = _may_write(env, args["path"])
    if not path.is_file():
        raise ToolError(f"{args['path']}: no such file")
    text = path.read_text(encoding="utf-8")
    old, new = args["old_string"], args["new_string"]
    count = text.count(old)
    if count == 0:
        raise ToolError(f"{args['path']}: old_string was not found")
    if count > 1 and not args.get("replace_all"):
        raise ToolError(f"{args['path']}: old_string occurs {count} times; give more context or replace_all")
    path.write_text(text.replace(old, new) if args.get("replace_all") else text.replace(old, new, 1), encoding="utf-8")
    return f"edited {args['path']}"


@builtin(
    "Bash",
    group="code",
    description="Run a bash command in the workspace directory (timeout in seconds, default 120).",
    schema=schema({"command": {"type": "string"}, "timeout": {"type": "integer"}}, ["command"]),
)
def bash(args: dict, env: "ToolContext") -> str:
    timeout = min(int(args.get("timeout") or 120), 600)
    result = env.run_program(["bash", "-c", args["command"]], timeout=timeout, extra_env=env.agent_env())
    return result


@builtin(
    "search_files",
    group="search",
    description="Ranked full-text (BM25) search over knowledge, memory, state and storage. "
    "Search first, then Read the hit.",
    schema=schema({"query": {"type": "string"}, "limit": {"type": "integer"}}, ["query"]),
)
def search(args: dict, env: "ToolContext") -> str:
    hits = env.search_index().query(args["query"], limit=int(args.get("limit") or 10))
    if not hits:
        return "no results"
    return "\n".join(f"{h['path']} (score {h['score']:.2f}): {h['snippet']}" for h in hits)


@builtin(
    "recall_runs",
    group="history",
    description="What this workspace's earlier runs concluded: id, flow, status, verdict, headline.",
    schema=schema({"limit": {"type": "integer"}}),
)
def recall_runs(args: dict, env: "ToolContext") -> str:
    return json.dumps(env.host.recall_runs(limit=int(args.get("limit") or 10)), ensure_ascii=False)


@builtin(
    "read_run",
    group="history",
    description="One earlier run: its steps and what each said.",
    schema=schema({"id": {"type": "string"}}, ["id"]),
)
def read_run(args: dict, env: "ToolContext") -> str:
    found = env.host.read_run(args["id"])
    if found is None:
        raise ToolError(f"{args['id']}: no such run in this workspace")
    return json.dumps(found, ensure_ascii=False)


@builtin(
    "ask",
    group="ask",
    description="Ask a person a question. The run waits until they answer; then this step starts "
    "again from the beginning with their answer in the task — so ask before you change "
    "anything outside.",
    schema=schema({"question": {"type": "string"}}, ["question"]),
    limit_keys=["ask"],
)
def ask(args: dict, env: "ToolContext") -> str:
    """Park the run on a question. The step runs again from the start with the answer (its conversation
    is not kept), so a step that has already changed something outside may not ask: it would do it twice."""
    if env.wrote:
        raise ToolError(
            f"ask: this step has already changed something outside ({env.wrote[0]}); a question now "
            f"would run the step again from the start and do it twice — finish without asking, or ask "
            f"before you change anything"
        )
    raise Park(args["question"])


@builtin(
    "consult",
    group="desks",
    description="Ask an agent on another desk (workspace) of this account a question; "
    "its answer comes back. Its tool calls count toward this step's limits.",
    schema=schema(
        {"desk": {"type": "string"}, "agent": {"type": "string"}, "question": {"type": "string"}},
        ["desk", "agent", "question"],
    ),
    limit_keys=lambda args: ["desks", str(args.get("agent") or "")],
)
def consult(args: dict, env: "ToolContext") -> str:
    """A colleague on another desk answers; its calls pass this step's limits (a sub-agent counts here)."""
    return env.host.consult(
        str(args["desk"]),
        str(args["agent"]),
        str(args["question"]),
        counter=env.counter,
        pod_writes=getattr(env, "pod_writes", None),
    )


BUILTIN_GROUPS = builtin_groups()
__all__ = ["BUILTIN_GROUPS", "builtin_tools"]
