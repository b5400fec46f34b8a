"""The Tool Test button: call one tool with typed arguments from where a run
would call it — the same resolution, sandbox, materialised program, secrets
and boundary — and return the raw result. No model call.

Each call gets a fresh sandbox, as a step does; what a host keeps between
calls (its scratch: `Scratch`) is laid out in that sandbox's state/ and
outputs/ before the call and read back after it, so a second `monitor` sees
its first look and a crawl carries on — without the test writing anything
to the workspace's own files.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Protocol

from foldrun.contract import Desk
from foldrun.contract.desk import TOOL
from foldrun.contract.resolve import resolve_tool

from .resolve import AgentSpec, ResolveError, ToolFile, files_in_folder, resolve_agent
from .sandbox import materialise
from .context import Host, StepRequest
from .errors import StepFailed
from .prepare import prepare_tools
from .redact import RedactingHost, Redactor
from .stepenv import StepEnv
from .tools.base import ToolError, check_arguments

KEPT_DIRS = ("state", "outputs")  # what a Tool Test's scratch keeps of its sandbox


class Scratch(Protocol):
    """What a host keeps of one tool's Tool Tests between calls."""

    def load(self) -> dict[str, bytes]:
        """The kept files, by sandbox path (state/…, outputs/…)."""

    def save(self, files: dict[str, bytes]) -> dict:
        """Keep `files` (everything under state/ and outputs/ after the call); what it kept, for the answer."""


def lay_out(root: Path, files: dict[str, bytes]) -> None:
    """Write the scratch's files into a fresh sandbox; a path outside state/ or outputs/ is not written."""
    for path, content in files.items():
        parts = path.split("/")
        if len(parts) < 2 or parts[0] not in KEPT_DIRS or any(p in ("", ".", "..") for p in parts):
            continue
        target = root.joinpath(*parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        if target.is_symlink():
            target.unlink()
        target.write_bytes(content)


def kept_files(root: Path, given: dict[str, str]) -> dict[str, bytes]:
    """Every regular file under state/ and outputs/ after a call — but not a workspace state/ file the call left
    as the workspace has it (`given`): that one is the workspace's, not the test's."""
    found: dict[str, bytes] = {}
    for top in KEPT_DIRS:
        for dirpath, dirnames, filenames in os.walk(root / top):
            dirnames.sort()
            for name in sorted(filenames):
                full = Path(dirpath) / name
                if full.is_symlink() or not full.is_file():
                    continue
                path = full.relative_to(root).as_posix()
                content = full.read_bytes()
                if path in given and content == given[path].encode("utf-8"):
                    continue
                found[path] = content
    return found


def tool_names(desk: Desk, agent: str | None = None) -> list[str]:
    """The tools a tool test can name besides the gallery's: the workspace's, the account library's and
    `agent`'s own, sorted."""
    return sorted(desk.names(TOOL, scopes=("workspace", "library"), agent=agent))


def test_tool(
    desk: Desk,
    tool_name: str,
    arguments: dict,
    host: Host,
    request: StepRequest,
    *,
    agent: str | None = None,
    operation: str | None = None,
    scratch: Scratch | None = None,
) -> dict:
    resolved = resolve_tool(desk, agent, tool_name)
    if resolved is None:
        names = tool_names(desk, agent)
        there = f"this desk has {', '.join(names)}" if names else "this desk has none of its own"
        raise ResolveError(
            f"tool {tool_name} is not in the workspace's tools/, the account library or the gallery; "
            f"{there} (`foldrun gallery` lists the gallery's)",
            details={"what": "tool", "name": tool_name, "choices": names},
        )
    model = resolved.model
    tool_file = ToolFile(
        name=tool_name,
        meta=dict(model.meta),
        body=resolved.document.body,
        path=model.path,
        scope=model.scope,
        transport=model.transport or "",
        folder_files=files_in_folder(desk, model.scope, model.folder),
        model=model,
    )
    spec = AgentSpec(
        name=agent or "tool-test",
        meta={},
        body="",
        path="",
        tools=[tool_name],
        builtin=set(),
        tool_files=[tool_file],
        mcp_inline={},
        skills=[],
        account_defaults={},
        workspace_defaults={},
    )
    if agent:
        # As that agent would call it: its frontmatter (a `web:` block, language:, provider:) and the
        # workspace's and account's defaults — with only the tool under test offered.
        named = resolve_agent(desk, agent)
        spec = AgentSpec(
            name=named.name,
            meta=named.meta,
            body="",
            path=named.path,
            tools=[tool_name],
            builtin=set(),
            tool_files=[tool_file],
            mcp_inline={},
            skills=[],
            account_defaults=named.account_defaults,
            workspace_defaults=named.workspace_defaults,
        )
    sandbox = materialise(desk.files, desk.library, base=request.sandbox_base)
    if scratch is not None:
        lay_out(sandbox.root, scratch.load())
    host = RedactingHost(host, Redactor())  # the trace it answers with holds no value, as a run's does not
    env = StepEnv(request, host, sandbox, spec)
    env.sandbox_files = desk.files
    try:
        answer = _call(tool_name, arguments, spec, env, host, operation)
    finally:
        env.close()  # first: a browse call's video and HAR are written as its contexts close
        try:  # kept as a run keeps its outputs/ and state/ writes: with every secret value redacted
            kept = (
                scratch.save(
                    {
                        path: env.redactor.bytes(content)
                        for path, content in kept_files(sandbox.root, desk.files).items()
                    }
                )
                if scratch is not None
                else None
            )
        finally:
            sandbox.cleanup()
    if kept is not None:
        answer["scratch"] = kept
    return answer


def _call(tool_name: str, arguments: dict, spec: AgentSpec, env: StepEnv, host: Host, operation: str | None) -> dict:
    try:
        # The step's own built-in groups are not under test; a gallery tool (web) is, though built in.
        tools = [t for t in prepare_tools(spec, env, host) if t.kind != "builtin" or t.source.startswith("gallery")]
    except StepFailed as exc:
        return {"tool": tool_name, "ok": False, "result": str(exc), "seconds": 0}
    if not tools:
        return {
            "tool": tool_name,
            "ok": False,
            "seconds": 0,
            "result": f"{tool_name} offers no tools that run (see the trace)",
        }
    if operation:
        chosen = next(
            (
                t
                for t in tools
                if t.name == operation or t.name.endswith("_" + operation) or t.name.endswith("__" + operation)
            ),
            None,
        )
        if chosen is None:
            raise ResolveError(f"operation {operation} is not one of {', '.join(t.name for t in tools)}")
    elif len(tools) == 1:
        chosen = tools[0]
    else:
        raise ResolveError(
            f"{tool_name} offers several tools; say which with operation: {', '.join(t.name for t in tools)}"
        )
    started = time.monotonic()
    try:
        check_arguments(chosen, arguments)
        text, ok = chosen.handler(arguments, env), True
    except ToolError as exc:
        text, ok = str(exc), False
    return {
        "tool": chosen.name,
        "ok": ok,
        "result": env.redact(str(text)),
        "seconds": round(time.monotonic() - started, 3),
    }
