"""The MCP server: `tools/list` and `tools/call` on the `mcp` SDK's low-level server.

Handlers are plain synchronous Django code (the ORM and Playwright's sync API
need a thread with no event loop), so every call runs in a worker thread, under
a limiter so a burst of long waits cannot take every thread. A handler's
failure is a result (`isError`), never a JSON-RPC error; an exception we did not
expect is logged whole under an incident code and answered with one sentence naming it.
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import anyio
import mcp_types as types
from django.conf import settings
from django.db import close_old_connections, connections
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

import foldrun
from foldrun import incidents

from . import registry
from . import tools as _tools  # noqa: F401  (importing the package registers every fixed tool)
from .call import McpCall
from .results import ToolError, ToolResult, failure, from_error, to_call_result

log = logging.getLogger("foldrun.mcp")

SERVER_NAME = "foldrun"
INSTRUCTIONS = (
    "foldrun's browser, browser agent, smoke tests and skills, on the account of the API token you connect with. "
    "Tools that wait return within their cap; a longer job goes on and is read with get_task, get_report or "
    "get_skill_run."
)
CALL_CONTEXT_KEY = "foldrun.mcp_call"
T = TypeVar("T")


def in_thread(fn: Callable[[], T]) -> T:
    """Run Django code the way a request would: fresh connections in, this thread's closed after."""
    close_old_connections()
    try:
        return fn()
    finally:
        connections.close_all()


def _call_of(ctx: ServerRequestContext[Any, Any]) -> McpCall:
    request = ctx.request
    call = request.scope.get(CALL_CONTEXT_KEY) if request is not None else None
    if not isinstance(call, McpCall):
        # The HTTP front door sets it on every request; without one this is not a request we serve.
        raise RuntimeError("an MCP request reached the server without the token's call")
    return call


def _refusal(tool: registry.McpTool, call: McpCall) -> ToolResult | None:
    if tool.acts and not call.can_write:
        return failure(
            "forbidden", f"Your role ({call.role}) can read this account but not change it, and {tool.name} changes it."
        )
    return None


def run_tool(call: McpCall, name: str, arguments: dict[str, Any] | None) -> ToolResult:
    """One `tools/call`, synchronously: find, check, refuse, run. Never raises."""
    tool = registry.find(call, name)
    if tool is None:
        return failure("not_found", f"There is no tool named {name[:100]!r} on this server; tools/list names them.")
    refused = _refusal(tool, call)
    if refused is not None:
        return refused
    try:
        args = registry.check_arguments(tool, arguments)
        result = tool.handler(call, args)
        if not isinstance(result, ToolResult):
            raise TypeError(f"the handler of {tool.name} returned {type(result).__name__}, not a ToolResult")
        return result
    except ToolError as exc:
        return from_error(exc)
    except Exception as exc:  # noqa: BLE001 — the caller gets a sentence, the log gets the whole error
        mapped = registry.as_tool_error(exc)
        if mapped is not None:
            return from_error(mapped)
        code = incidents.record(log, "mcp tool %s failed on account %s", tool.name, call.account.public_id)
        return failure("server_error", incidents.sentence(f"The tool {tool.name}", code) + ".", {"incident": code})


def _log_call(call: McpCall, name: str, started: float, result: ToolResult) -> None:
    # Tool, time and outcome only: arguments can hold a goal, a header or a vault reference.
    outcome = "ok"
    if result.is_error:
        code = (result.structured or {}).get("error", {}).get("code") if result.structured else None
        outcome = f"isError {code}" if code else "isError"
    log.info(
        "mcp call %s account=%s token=%s %d ms %s",
        name[:100],
        call.account.public_id,
        call.token_id,
        (time.monotonic() - started) * 1000,
        outcome,
    )


def build_server() -> Server[dict[str, Any]]:
    @contextlib.asynccontextmanager
    async def lifespan(_server: Server[Any]) -> AsyncIterator[dict[str, Any]]:
        # `running`: calls in progress per account, in this process (one event loop, so no lock).
        yield {"limiter": anyio.CapacityLimiter(settings.FOLDRUN_MCP_THREADS), "running": {}}

    async def list_tools(
        ctx: ServerRequestContext[dict[str, Any], Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        call = _call_of(ctx)
        tools = await anyio.to_thread.run_sync(
            lambda: in_thread(lambda: registry.tools_for(call)), limiter=ctx.lifespan_context["limiter"]
        )
        return types.ListToolsResult(
            tools=[
                types.Tool(
                    name=t.name,
                    description=t.description,
                    input_schema=t.input_schema,
                    annotations=types.ToolAnnotations(read_only_hint=not t.acts),
                )
                for t in tools
            ]
        )

    async def call_tool(
        ctx: ServerRequestContext[dict[str, Any], Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        call = _call_of(ctx)
        started = time.monotonic()
        running: dict[int, int] = ctx.lifespan_context["running"]
        cap = settings.FOLDRUN_MCP_CALLS_PER_ACCOUNT
        if running.get(call.account.pk, 0) >= cap:
            # One account's burst must not take every thread from the others.
            calls = "1 tool call" if cap == 1 else f"{cap} tool calls"
            result = failure(
                "rate_limited",
                f"This account already has {calls} running on this server; wait for one to finish, then call again.",
            )
        else:
            running[call.account.pk] = running.get(call.account.pk, 0) + 1
            try:
                result = await anyio.to_thread.run_sync(
                    lambda: in_thread(lambda: run_tool(call, params.name, params.arguments)),
                    limiter=ctx.lifespan_context["limiter"],
                )
            finally:
                running[call.account.pk] -= 1
                if not running[call.account.pk]:
                    del running[call.account.pk]
        _log_call(call, params.name, started, result)
        return to_call_result(result)

    return Server(
        SERVER_NAME,
        version=foldrun.__version__,
        instructions=INSTRUCTIONS,
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
