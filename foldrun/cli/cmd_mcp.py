"""`foldrun mcp`: the server's MCP tools for a client that only speaks stdio.

A local bridge: JSON-RPC lines on stdin go to the signed-in server's `/mcp`
(Streamable HTTP, with the stored token as `Authorization: Bearer`), and what
the server answers comes back on stdout, one message a line. Nothing else is
written to stdout; notes go to stderr. The server is the one `foldrun login`
stored (or `$FOLDRUN_URL` / `$FOLDRUN_TOKEN`); the connection goes through
foldrun.net like every connection to an address a person named.
"""
from __future__ import annotations

import argparse
import sys

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server

from foldrun.net.mcp import mcp_client



def register(subparsers, common) -> None:
    p = subparsers.add_parser("mcp", parents=[common],
                              help="serve the server's MCP tools on stdin/stdout (for stdio-only MCP clients)")
    p.set_defaults(func=cmd_mcp)


def endpoint(url: str) -> str:
    return url.rstrip("/") + "/mcp"


def cmd_mcp(args: argparse.Namespace, ctx) -> int:
    # Not signed in, a server that does not answer, a revoked token: the CLI's own sentence, before stdio is
    # touched (over the relay a client would only see "Server returned an error response").
    ctx.api.get("/api/me")
    sys.stderr.write(f"foldrun mcp: relaying stdio to {endpoint(ctx.config.url)}\n")
    anyio.run(relay, endpoint(ctx.config.url), ctx.config.token)
    return 0


async def _pump(source: ObjectReceiveStream, sink: ObjectSendStream, side: str) -> None:
    async for item in source:
        if isinstance(item, Exception):
            # A line that is not JSON-RPC, or a connection that broke: said on stderr, never on the wire.
            sys.stderr.write(f"foldrun mcp: {side}: {item}\n")
            continue
        await sink.send(item)


# Once the client closes stdin, what the bridge still owes the server (its session's DELETE, a call in flight
# given up) gets this long; then it ends regardless, so a client never has to kill it.
GOODBYE_SECONDS = 0.5


async def relay(url: str, token: str) -> None:
    """Until stdin closes: every message from the client to the server and back, unchanged."""
    http = mcp_client({"Authorization": f"Bearer {token}"})
    async with stdio_server() as (stdio_read, stdio_write):
        try:
            with anyio.CancelScope() as bridge:
                async with streamable_http_client(url, http_client=http) as (http_read, http_write), \
                        anyio.create_task_group() as tg:
                    async def client_to_server() -> None:
                        await _pump(stdio_read, http_write, "from the client")
                        # The client closed stdin: the bridge is done, a call in flight included.
                        bridge.deadline = anyio.current_time() + GOODBYE_SECONDS
                        tg.cancel_scope.cancel()

                    tg.start_soon(client_to_server)
                    tg.start_soon(_pump, http_read, stdio_write, "from the server")
        finally:
            # stdio_server's writer ends only when its stream closes: without this it waits for ever.
            await stdio_write.aclose()
            with anyio.CancelScope(shield=True), anyio.move_on_after(GOODBYE_SECONDS):
                await http.aclose()
