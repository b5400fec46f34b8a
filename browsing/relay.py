"""The session's public DevTools endpoint: `wss://<install>/v1/sessions/<id>/cdp?token=<session token>`.

A session's browser listens for DevTools on its keeper's loopback, which no client outside reaches (and
which must not be reachable: DevTools has no authentication of its own). This relay, mounted on the ASGI
app beside `/mcp`, is the way in from outside: it takes a WebSocket only with the session's short-lived
token (browsing/tokens.py — derived, bound to the session, expiring), only while the session is live, and
then carries the frames both ways unchanged. Each frame is activity, so a client driving the session keeps
it from the idle reaper.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any
from urllib.parse import parse_qs

from asgiref.sync import sync_to_async
from django.db import connection
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from .ending import touch
from .models import BrowserSession, SessionStatus
from .tokens import token_ok

PATH = re.compile(r"^/v1/sessions/(?P<id>sess_us_[0-9a-z]{24})/cdp/?$")
TOUCH_EVERY_SECONDS = 5.0
# WebSocket close codes in the application range: the reason is in the close frame's text.
REFUSED, GONE = 4403, 4410


def matches(scope: dict) -> bool:
    return scope.get("type") == "websocket" and bool(PATH.match(scope.get("path", "")))


@sync_to_async
def live_session(public_id: str) -> BrowserSession | None:
    try:
        return (
            BrowserSession.objects.filter(public_id=public_id, status=SessionStatus.LIVE)
            .exclude(cdp_endpoint="")
            .first()
        )
    finally:
        connection.close()  # outside Django's request cycle, nothing else closes this thread's connection


@sync_to_async
def _touch(session_pk: int) -> None:
    try:
        touch(session_pk)
    finally:
        connection.close()


async def relay(scope: dict, receive: Any, send: Any) -> None:
    """One client's DevTools connection to one live session, or a refusal before it is accepted."""
    public_id = PATH.match(scope["path"]).group("id")
    token = (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token") or [""])[0]
    await receive()  # websocket.connect
    if not token_ok(public_id, token):
        await send(
            {
                "type": "websocket.close",
                "code": REFUSED,
                "reason": "the session token is missing, wrong or expired; read the session again for a fresh one",
            }
        )
        return
    session = await live_session(public_id)
    if session is None:
        await send({"type": "websocket.close", "code": GONE, "reason": "the session is not live"})
        return
    try:
        browser = await connect(session.cdp_endpoint, max_size=None, open_timeout=10)
    except (OSError, InvalidHandshake, InvalidURI, asyncio.TimeoutError):
        await send({"type": "websocket.close", "code": GONE, "reason": "the session's browser did not answer"})
        return
    await send({"type": "websocket.accept"})
    await _pump(session.pk, browser, receive, send)


async def _pump(session_pk: int, browser: Any, receive: Any, send: Any) -> None:
    loop = asyncio.get_running_loop()
    last_touch = 0.0

    async def activity() -> None:
        nonlocal last_touch
        if loop.time() - last_touch >= TOUCH_EVERY_SECONDS:
            last_touch = loop.time()
            await _touch(session_pk)

    async def client_to_browser() -> None:
        while True:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                return
            payload = message.get("text") if message.get("text") is not None else message.get("bytes")
            if payload is not None:
                await browser.send(payload)
                await activity()

    async def browser_to_client() -> None:
        try:
            async for frame in browser:
                await send(
                    {"type": "websocket.send", **({"text": frame} if isinstance(frame, str) else {"bytes": frame})}
                )
        except ConnectionClosed:
            pass
        await send({"type": "websocket.close", "code": 1000, "reason": "the session's browser closed"})

    tasks = [asyncio.ensure_future(client_to_browser()), asyncio.ensure_future(browser_to_client())]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await browser.close()
