"""The ASGI entry point: Django (the dashboard and the API) with the MCP server at `/mcp`, the browser
sessions' DevTools relay (`/v1/sessions/<id>/cdp`, a WebSocket; browsing/relay.py) and their live view
(`/v1/sessions/<id>/live`, a WebSocket of frames, and `/v1/sessions/<id>/watch`, its page; browsing/live.py).

`./scripts/start` and deploy/ serve this through gunicorn's uvicorn workers;
foldrun.wsgi stays for anything that speaks WSGI only (it has no `/mcp`). The
MCP session manager runs on the server's lifespan: started before the first
request, stopped (its sessions ended) on shutdown.
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.dev")

from django.conf import settings  # noqa: E402

from foldrun.databases import pool_web_connections  # noqa: E402

from django.core.asgi import get_asgi_application  # noqa: E402

django_app = get_asgi_application()  # sets Django up before anything imports a model

from starlette.types import Receive, Scope, Send  # noqa: E402

from browsing import live, relay  # noqa: E402
from foldrun.mcp.http import McpEndpoint  # noqa: E402

MCP_PATH = settings.FOLDRUN_MCP_PATH


class App:
    """The whole server. `pool_connections`: at the server's start (its lifespan), this process's database
    connections come from a pool (PostgreSQL), bounded whatever the requests in flight, and none is kept past
    its request otherwise. Django runs each request's sync code on a thread of its own (asgiref's per-request
    ThreadSensitiveContext) and keeps a connection per thread: unpooled and kept, each request's connection
    outlived its thread until PostgreSQL's max_connections was spent ("too many clients"); opened per request
    and unbounded, 200 requests at once opened 96. It is set on this process's settings before any request
    opens a connection (each connection reads the dict it is made from), never in os.environ: a worker or any
    other child this process starts keeps its own one connection. At the start, not at import, so a program
    that imports this module (a test serving `App()` in its own process) keeps its own connections as they
    are. foldrun/databases.py says what the pool is."""

    def __init__(self, *, pool_connections: bool = False) -> None:
        self.mcp = McpEndpoint()
        self.pool_connections = pool_connections

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http" and scope["path"].rstrip("/") == MCP_PATH:
            await self.mcp(scope, receive, send)
        elif relay.matches(scope):  # a session's DevTools, from outside, with its token
            await relay.relay(scope, receive, send)
        elif live.matches(scope):  # a session's live view: its frames' WebSocket, and the watch page that reads it
            await live.serve(scope, receive, send)
        elif scope["type"] == "websocket":
            # Django speaks HTTP only: any other WebSocket is refused here rather than as its error in the log.
            await send({"type": "websocket.close", "code": 1008})
        else:
            await django_app(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        message = await receive()
        if message["type"] != "lifespan.startup":
            return
        started = False
        if self.pool_connections:
            pool_web_connections(settings.DATABASES, settings.FOLDRUN_DB_POOL)
        try:
            async with self.mcp.lifespan():
                await send({"type": "lifespan.startup.complete"})
                started = True
                while (await receive())["type"] != "lifespan.shutdown":
                    pass
        except Exception as exc:  # noqa: BLE001 — the server prints it and refuses to start (or stops)
            kind = "shutdown" if started else "startup"
            await send({"type": f"lifespan.{kind}.failed", "message": f"the MCP server failed at {kind}: {exc}"})
            return
        await send({"type": "lifespan.shutdown.complete"})


application = App(pool_connections=True)  # what gunicorn serves (scripts/start, deploy/)
