"""The Tool Test button: call one tool with typed arguments from where a run
would call it — the same resolution, sandbox, materialised program, secrets
and boundary — and return the raw result. No model call."""
from __future__ import annotations

import time

from foldrun.contract import Desk
from foldrun.contract.resolve import resolve_tool

from .resolve import AgentSpec, ResolveError, ToolFile, files_in_folder, resolve_agent
from .sandbox import materialise
from .context import Host, StepRequest
from .errors import StepFailed
from .prepare import prepare_tools
from .redact import RedactingHost, Redactor
from .stepenv import StepEnv
from .tools.base import ToolError, check_arguments


def test_tool(desk: Desk, tool_name: str, arguments: dict, host: Host, request: StepRequest, *,
              agent: str | None = None, operation: str | None = None) -> dict:
    resolved = resolve_tool(desk, agent, tool_name)
    if resolved is None:
        raise ResolveError(f"tool {tool_name} is not in the workspace's tools/, the account library or the gallery")
    model = resolved.model
    tool_file = ToolFile(name=tool_name, meta=dict(model.meta), body=resolved.document.body, path=model.path,
                         scope=model.scope, transport=model.transport or "",
                         folder_files=files_in_folder(desk, model.scope, model.folder), model=model)
    spec = AgentSpec(name=agent or "tool-test", meta={}, body="", path="", tools=[tool_name], builtin=set(),
                     tool_files=[tool_file], mcp_inline={}, skills=[], account_defaults={}, workspace_defaults={})
    if agent:
        # As that agent would call it: its frontmatter (a `web:` block, language:, provider:) and the
        # workspace's and account's defaults — with only the tool under test offered.
        named = resolve_agent(desk, agent)
        spec = AgentSpec(name=named.name, meta=named.meta, body="", path=named.path, tools=[tool_name], builtin=set(),
                         tool_files=[tool_file], mcp_inline={}, skills=[], account_defaults=named.account_defaults,
                         workspace_defaults=named.workspace_defaults)
    sandbox = materialise(desk.files, desk.library, base=request.sandbox_base)
    host = RedactingHost(host, Redactor())  # the trace it answers with holds no value, as a run's does not
    env = StepEnv(request, host, sandbox, spec)
    env.sandbox_files = desk.files
    try:
        try:
            # The step's own built-in groups are not under test; a gallery tool (web) is, though built in.
            tools = [t for t in prepare_tools(spec, env, host) if t.kind != "builtin" or t.source.startswith("gallery")]
        except StepFailed as exc:
            return {"tool": tool_name, "ok": False, "result": str(exc), "seconds": 0}
        if not tools:
            return {"tool": tool_name, "ok": False, "seconds": 0,
                    "result": f"{tool_name} offers no tools that run (see the trace)"}
        if operation:
            chosen = next((t for t in tools if t.name == operation or t.name.endswith("_" + operation)
                           or t.name.endswith("__" + operation)), None)
            if chosen is None:
                raise ResolveError(f"operation {operation} is not one of {', '.join(t.name for t in tools)}")
        elif len(tools) == 1:
            chosen = tools[0]
        else:
            raise ResolveError(f"{tool_name} offers several tools; say which with operation: "
                               f"{', '.join(t.name for t in tools)}")
        started = time.monotonic()
        try:
            check_arguments(chosen, arguments)
            text, ok = chosen.handler(arguments, env), True
        except ToolError as exc:
            text, ok = str(exc), False
        return {"tool": chosen.name, "ok": ok, "result": env.redact(str(text)),
                "seconds": round(time.monotonic() - started, 3)}
    finally:
        env.close()
        sandbox.cleanup()
