"""`endpoints.live`: a session's screen as it changes, for a person or a program to watch (never to drive).

`wss://<install>/v1/sessions/<id>/live?token=<session token>` is a WebSocket over which this module sends the
session's screen as JPEG frames (base64 text messages), and closes when the session ends. The frames come from
the browser's own screencast (`Page.startScreencast` on the session's first tab), over the same loopback
DevTools endpoint the CDP relay (browsing/relay.py) carries — here nothing the watcher sends reaches the
browser: the socket only speaks one way. `GET /v1/sessions/<id>/watch?token=…` is a small HTML page that reads
that socket, for a person (the dashboard's Browser sessions tab links it). The token is the session's
short-lived one (browsing/tokens.py): a page or socket opened with an expired or wrong token says so, and a
session that is not live says that.
"""

from __future__ import annotations

import asyncio
import html
import itertools
import json
import re
import secrets
from typing import Any
from urllib.parse import parse_qs

from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidURI

from .relay import GONE, REFUSED, live_session
from .tokens import DRIVE, WATCH, token_ok

# The session's key or a watch-only token (the dashboard's link for a member who may only read).
SEES = (DRIVE, WATCH)

PAGE = re.compile(r"^/v1/sessions/(?P<id>sess_us_[0-9a-z]{24})/watch/?$")
FRAMES = re.compile(r"^/v1/sessions/(?P<id>sess_us_[0-9a-z]{24})/live/?$")
QUALITY = 60
EXPIRED = "This live view's link has expired or is not valid: read the session again for a fresh one."
NOT_LIVE = "This session is not live any more, so there is nothing to watch."


def matches(scope: dict) -> bool:
    path = scope.get("path", "")
    return (scope.get("type") == "http" and bool(PAGE.match(path) or FRAMES.match(path))) or (
        scope.get("type") == "websocket" and bool(FRAMES.match(path))
    )


def _token(scope: dict) -> str:
    return (parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token") or [""])[0]


async def serve(scope: dict, receive: Any, send: Any) -> None:
    if scope["type"] == "websocket":
        await _frames(scope, receive, send)
    elif PAGE.match(scope["path"]):
        await _page(scope, send)
    else:  # the socket's address asked over plain HTTP (pasted into a browser): where to watch it instead
        public_id = FRAMES.match(scope["path"]).group("id")
        nonce = secrets.token_urlsafe(16)
        await _answer(
            send,
            426,
            _html(
                "Live view",
                (
                    f"<p>This address is the live view's WebSocket. To watch the session in a browser, open "
                    f"/v1/sessions/{public_id}/watch with the same token.</p>"
                ),
                nonce,
            ),
            nonce,
        )


def _html(title: str, body: str, nonce: str) -> bytes:
    return (
        f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>{html.escape(title)}</title>'
        f'<style nonce="{nonce}">body{{margin:0;background:#111;color:#eee;font:15px system-ui,sans-serif}}'
        f"p{{margin:1em}}img{{display:block;max-width:100vw;max-height:calc(100vh - 3em);margin:auto}}</style>"
        f"</head><body>{body}</body></html>"
    ).encode()


def _policy(nonce: str) -> bytes:
    """This page is served beside Django, so django-csp never sees it: its own Content-Security-Policy, as strict
    as the dashboard's — its one script and style by nonce, frames as data: images, the socket on this host."""
    return (
        f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; img-src data:; "
        f"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ).encode()


async def _answer(send: Any, status: int, page: bytes, nonce: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/html; charset=utf-8"),
                (b"cache-control", b"no-store"),
                (b"referrer-policy", b"no-referrer"),
                (b"x-frame-options", b"DENY"),
                (b"content-security-policy", _policy(nonce)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": page})


async def _page(scope: dict, send: Any) -> None:
    public_id = PAGE.match(scope["path"]).group("id")
    token = _token(scope)
    nonce = secrets.token_urlsafe(16)
    if not token_ok(public_id, token, uses=SEES):
        await _answer(send, 403, _html("Live view", f"<p>{EXPIRED}</p>", nonce), nonce)
        return
    if await live_session(public_id) is None:
        await _answer(send, 410, _html("Live view", f"<p>{NOT_LIVE}</p>", nonce), nonce)
        return
    frames = json.dumps(f"/v1/sessions/{public_id}/live?token={token}")
    script = (
        f'<script nonce="{nonce}">'
        "(function(){var img=document.getElementById('screen'),state=document.getElementById('state');"
        f"var path={frames};var ws=new WebSocket((location.protocol==='https:'?'wss://':'ws://')+location.host+path);"
        "ws.onmessage=function(e){img.src='data:image/jpeg;base64,'+e.data;img.dataset.frames="
        "String(Number(img.dataset.frames||0)+1);state.textContent='live';};"
        "ws.onclose=function(e){state.textContent=e.reason||'the live view ended';};})();</script>"
    )
    body = (
        f'<p>Session {public_id}: <span id="state">connecting…</span></p>'
        f'<img id="screen" alt="the session\'s screen" data-frames="0">{script}'
    )
    await _answer(send, 200, _html(f"Live view of {public_id}", body, nonce), nonce)


async def _frames(scope: dict, receive: Any, send: Any) -> None:
    public_id = FRAMES.match(scope["path"]).group("id")
    await receive()  # websocket.connect
    # Accepted before any refusal, so a program reading the socket gets the sentence as the close reason (a
    # refused handshake carries none).
    await send({"type": "websocket.accept"})
    if not token_ok(public_id, _token(scope), uses=SEES):
        await send({"type": "websocket.close", "code": REFUSED, "reason": EXPIRED})
        return
    session = await live_session(public_id)
    if session is None:
        await send({"type": "websocket.close", "code": GONE, "reason": NOT_LIVE})
        return
    try:
        browser = await connect(session.cdp_endpoint, max_size=None, open_timeout=10)
    except (OSError, InvalidHandshake, InvalidURI, asyncio.TimeoutError):
        await send({"type": "websocket.close", "code": GONE, "reason": "the session's browser did not answer"})
        return
    watcher = asyncio.ensure_future(_screencast(browser, send))
    try:
        while True:  # what the watcher sends is dropped: the view is watch-only
            if (await receive())["type"] == "websocket.disconnect":
                break
            if watcher.done():
                break
    finally:
        watcher.cancel()
        await browser.close()


async def _screencast(browser: Any, send: Any) -> None:
    """Attach to the session's first tab, start its screencast, send each frame on (and acknowledge it, or the
    browser sends no more)."""
    ids = itertools.count(1)

    async def call(method: str, params: dict | None = None, session_id: str | None = None) -> int:
        number = next(ids)
        await browser.send(
            json.dumps(
                {
                    "id": number,
                    "method": method,
                    "params": params or {},
                    **({"sessionId": session_id} if session_id else {}),
                }
            )
        )
        return number

    asked = await call("Target.getTargets")
    attach_id = None
    page_session = None
    try:
        async for raw in browser:
            message = json.loads(raw)
            if message.get("id") == asked:
                pages = [t for t in message["result"]["targetInfos"] if t.get("type") == "page"]
                if not pages:
                    break
                attach_id = await call("Target.attachToTarget", {"targetId": pages[0]["targetId"], "flatten": True})
            elif attach_id is not None and message.get("id") == attach_id:
                page_session = message["result"]["sessionId"]
                await call(
                    "Page.startScreencast", {"format": "jpeg", "quality": QUALITY, "everyNthFrame": 1}, page_session
                )
            elif message.get("method") == "Page.screencastFrame" and message.get("sessionId") == page_session:
                params = message["params"]
                await send({"type": "websocket.send", "text": params["data"]})
                await call("Page.screencastFrameAck", {"sessionId": params["sessionId"]}, page_session)
    except ConnectionClosed:
        pass
    await send({"type": "websocket.close", "code": 1000, "reason": "the session's browser closed"})
