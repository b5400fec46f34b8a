"""The `foldrun mcp` bridge itself: stdio on one side, the server's /mcp (Streamable HTTP, through foldrun.net)
on the other. Loaded by `foldrun.cli.loader.mcp_bridge()` only when `foldrun mcp` runs: the MCP SDK takes
seconds to import, which no other command should pay.
"""

from __future__ import annotations

import sys

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.client.streamable_http import streamable_http_client
from mcp.server.stdio import stdio_server

from foldrun.net.mcp import mcp_client


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
                async with (
                    streamable_http_client(url, http_client=http) as (http_read, http_write),
                    anyio.create_task_group() as tg,
                ):

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


def serve(url: str, token: str) -> None:
    anyio.run(relay, url, token)
