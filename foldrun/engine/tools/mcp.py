"""MCP servers as tools, through the `mcp` SDK.

Both transports: a local process (`command`, `args`, `env`) or a remote
endpoint (`url`, `headers`). `${SECRET}` in `env` and `headers` is filled in
host-side. Every tool the server exposes reaches the agent that grants it,
named `<server>__<tool>`; they all count toward the server's name in
`limits:`. `mcpServers:` in an agent's frontmatter is the inline spelling.

One connection per server per step, held open by a small event-loop thread
so a local server process starts once, not once per call.
"""

from __future__ import annotations

import asyncio
import json
import re
import tempfile
import threading
from typing import TYPE_CHECKING, Any

from foldrun import net
from foldrun.net.mcp import mcp_client

from .base import Tool, ToolError
from .registry import ToolPlan, register_transport
from .http import PLACEHOLDER, fill

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ToolContext

CONNECT_TIMEOUT = 60


def mcp_secret_names(meta: dict) -> list[str]:
    names: list[str] = []
    for block in (meta.get("env") or {}, meta.get("headers") or {}):
        for value in block.values():
            names += PLACEHOLDER.findall(str(value))
    return list(dict.fromkeys(names))


def refusal_in(exc: BaseException) -> BaseException | None:
    """The network guard's refusal inside the SDK's task-group error, if that is what stopped it."""
    if isinstance(exc, (net.PrivateAddress, net.NoSuchHost)):
        return exc
    for inner in getattr(exc, "exceptions", ()):
        found = refusal_in(inner)
        if found is not None:
            return found
    return None


def _innermost(exc: BaseException) -> BaseException:
    """The first error inside the SDK's task-group errors (whose own text only counts sub-exceptions)."""
    inner = getattr(exc, "exceptions", None)
    return _innermost(inner[0]) if inner else exc


def _last_words(errlog) -> str:
    """The last line a local server wrote on stderr before it went, if any (its own words for why)."""
    if errlog is None:
        return ""
    try:
        errlog.flush()
        errlog.seek(0)
        lines = [line.strip() for line in errlog.read()[-4000:].splitlines() if line.strip()]
    except (OSError, ValueError):
        return ""
    return lines[-1][:300] if lines else ""


class McpConnection:
    """A live session with one MCP server, driven from synchronous code."""

    def __init__(
        self,
        name: str,
        meta: dict,
        secrets: dict[str, str],
        cwd: str | None,
        *,
        no_network: bool = False,
        wrap: list[str] | None = None,
        wrap_env: dict[str, str] | None = None,
    ) -> None:
        self.name = name
        self.no_network = no_network
        self.wrap = wrap  # the step's namespace + isolation prologue, as for its other programs
        self.wrap_env = wrap_env or {}
        self.meta = meta
        self.secrets = secrets
        self.cwd = cwd
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name=f"mcp-{name}", daemon=True)
        self.thread.start()
        self._client = None
        self._errlog = None
        self._stop: asyncio.Event | None = None
        self._ready = threading.Event()
        self._error: BaseException | str | None = None
        self._future = asyncio.run_coroutine_threadsafe(self._hold(), self.loop)
        if not self._ready.wait(CONNECT_TIMEOUT):
            self.close()
            raise ToolError(f"{name}: the MCP server did not answer within {CONNECT_TIMEOUT}s")
        if self._error is not None:
            self.close()
            raise ToolError(f"{name}: the MCP server could not be reached: {self._error}")

    def _server(self):
        from mcp import StdioServerParameters

        if self.meta.get("url"):
            from mcp.client.streamable_http import streamable_http_client

            url = str(self.meta["url"])
            problem = net.unreadable(url)  # a URL the SDK's client cannot read: the guard's sentence for it
            if problem is not None:
                raise problem
            headers = {k: fill(v, self.secrets) for k, v in (self.meta.get("headers") or {}).items()}
            # foldrun.net's guard: the server's address is checked when each connection is made.
            return streamable_http_client(url, http_client=mcp_client(headers))
        if not self.meta.get("command"):
            raise ToolError(f"{self.name}: an MCP server needs `command:` (a local process) or `url:`")
        env = {k: fill(v, self.secrets) for k, v in (self.meta.get("env") or {}).items()}
        command, args = str(self.meta["command"]), [str(a) for a in (self.meta.get("args") or [])]
        if self.wrap:  # its own PID/mount (and, on a test run, network) namespace, like the step's programs
            command, args = self.wrap[0], self.wrap[1:] + [command] + args
            env = {**env, **self.wrap_env}
        elif self.no_network:  # a test run: the server process gets a network namespace with no route
            import os

            command, args = "unshare", (["-n"] if os.geteuid() == 0 else ["-rn"]) + [command] + args
        from mcp.client.stdio import stdio_client

        # The server's stderr goes to a real file: the SDK's default is the sys.stderr of when it was
        # imported, which inside a Celery worker is a logging proxy with no file descriptor to hand on.
        self._errlog = tempfile.TemporaryFile(mode="w+", encoding="utf-8", errors="replace")
        return stdio_client(
            StdioServerParameters(command=command, args=args, env=env or None, cwd=self.cwd), errlog=self._errlog
        )

    async def _hold(self) -> None:
        from mcp import Client

        self._stop = asyncio.Event()
        try:
            server = self._server()
            async with Client(server, mode="legacy") as client:
                self._client = client
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - reported to the caller as a sentence
            # Why, in words: the guard's refusal; else what a local server last said on stderr (a command not
            # found, its own traceback's last line); else the innermost error's text — never the SDK's
            # "unhandled errors in a TaskGroup (1 sub-exception)".
            inner = _innermost(exc)
            self._error = (
                refusal_in(exc)
                or _last_words(self._errlog)
                or str(inner).strip()
                or "the connection ended before the server answered"
            )
            self._ready.set()

    def _run(self, coro, timeout: float | None):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def list_tools(self) -> list[Any]:
        result = self._run(self._client.list_tools(), CONNECT_TIMEOUT)
        return list(result.tools)

    def call(self, tool: str, arguments: dict, timeout: float | None) -> tuple[str, bool]:
        result = self._run(self._client.call_tool(tool, arguments), timeout)
        parts: list[str] = []
        for block in result.content:
            text = getattr(block, "text", None)
            parts.append(text if text is not None else json.dumps(block.model_dump(mode="json"))[:5000])
        if not parts and getattr(result, "structured_content", None) is not None:
            parts.append(json.dumps(result.structured_content))
        return "\n".join(parts), bool(getattr(result, "is_error", False))

    def close(self) -> None:
        if self._stop is not None:
            self.loop.call_soon_threadsafe(self._stop.set)
        try:
            self._future.result(10)
        except Exception:  # noqa: BLE001 - closing is best effort
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        if self._errlog is not None:
            self._errlog.close()


class McpToolRuntime:
    def __init__(self, name: str, meta: dict) -> None:
        self.name = name
        self.meta = meta
        self.timeout = float(meta["timeout"]) if meta.get("timeout") not in (None, "") else None
        self.connection: McpConnection | None = None

    def tools(self, env: "ToolContext") -> list[Tool]:
        if env.is_test and self.meta.get("url"):
            env.log(f"test run: the remote MCP server {self.name} is not reached — outward calls fail closed")
            return []
        secrets = env.secret_values(mcp_secret_names(self.meta))
        wrap, wrap_env = env.program_wrapper()
        self.connection = McpConnection(
            self.name, self.meta, secrets, str(env.sandbox.root), no_network=env.is_test, wrap=wrap, wrap_env=wrap_env
        )
        if env.is_test:
            env.log(f"test run: the MCP server {self.name} runs with no network (outward calls fail closed)")
        env.on_close(self.connection.close)
        tools: list[Tool] = []
        prefix = re.sub(r"[^A-Za-z0-9_-]", "_", self.name)
        for spec in self.connection.list_tools():
            annotations = getattr(spec, "annotations", None)
            read_only = bool(getattr(annotations, "read_only_hint", False)) if annotations else False
            schema = spec.input_schema if isinstance(getattr(spec, "input_schema", None), dict) else {"type": "object"}
            tools.append(
                Tool(
                    name=f"{prefix}__{spec.name}"[:64],
                    description=spec.description or f"{spec.name} from the {self.name} MCP server",
                    input_schema=schema,
                    handler=self._handler(spec.name),
                    limit_keys=[self.name],
                    writes=not read_only,
                    kind="mcp",
                )
            )
        return tools

    def _handler(self, remote_name: str):
        def handler(arguments: dict, env: "ToolContext") -> str:
            try:
                text, is_error = self.connection.call(remote_name, arguments, self.timeout)
            except TimeoutError:
                raise ToolError(f"{self.name}: {remote_name} timed out after {self.timeout:g}s") from None
            except ToolError:
                raise
            except Exception as exc:  # noqa: BLE001 - the model sees what went wrong
                raise ToolError(f"{self.name}: {remote_name} failed: {exc}") from None
            text = env.redact(text)
            if is_error:
                raise ToolError(text)
            return text

        return handler


def plan_mcp(tool_file: Any, ctx: "ToolContext") -> ToolPlan:
    """An MCP server (a tool file, or an agent's inline `mcp:` entry): its secrets, then its tools."""
    runtime = McpToolRuntime(tool_file.name, tool_file.meta)
    return ToolPlan(
        mcp_secret_names(tool_file.meta), lambda: runtime.tools(ctx), outward=bool(tool_file.meta.get("outward"))
    )


register_transport("mcp", plan_mcp)
