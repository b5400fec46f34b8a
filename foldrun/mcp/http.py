"""`/mcp` over HTTP: the bearer token in front of the SDK's Streamable HTTP session manager.

Every request names its token (`Authorization: Bearer frt_…`). A missing or bad
token is a 401 with a JSON body and `WWW-Authenticate`, before the SDK sees the
request. A good one becomes the request's `McpCall` (its account is the
spec's "project").

The session manager runs stateless: each POST carries a whole exchange and is
checked on its own, so any web process can answer any request (gunicorn runs
several, with no sticky routing), and a token revoked between two calls stops
the second.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import AsyncIterator

import anyio
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.types import Receive, Scope, Send

from accounts.auth import InvalidToken, check_token
from accounts.models import Membership
from foldrun import incidents
from foldrun.nesting import MAX_DEPTH, sentence, too_deep

from .call import McpCall
from .server import CALL_CONTEXT_KEY, build_server, in_thread

log = logging.getLogger("foldrun.mcp")

MISSING_TOKEN = (
    "This endpoint needs an API token: send Authorization: Bearer <token> "
    "(make one on Settings, or run `foldrun login`)."
)
NOT_A_MEMBER = "This API token's user is no longer a member of its account; make a new token."


def _bearer(scope: Scope) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            scheme, _, raw = value.decode("latin-1").strip().partition(" ")
            return raw.strip() if scheme.lower() == "bearer" and raw.strip() else ""
    return None


def _call_for(raw: str) -> McpCall:
    token = check_token(raw)
    membership = Membership.objects.filter(user=token.user, account=token.account).first()
    if membership is None:
        raise InvalidToken(NOT_A_MEMBER)
    return McpCall(
        account=token.account,
        user=token.user,
        token_id=token.public_id,
        role=membership.role,
        can_write=membership.can_write,
    )


async def _json(send: Send, status: int, body: dict, headers: list[tuple[bytes, bytes]] = ()) -> None:
    data = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()), *headers],
        }
    )
    await send({"type": "http.response.body", "body": data})


async def _unauthorized(send: Send, message: str, error: str) -> None:
    challenge = f'Bearer realm="foldrun", error="{error}", error_description="{message}"'
    await _json(
        send,
        401,
        {"code": "unauthorized", "message": message, "details": {}},
        [(b"www-authenticate", challenge.replace("`", "").encode("latin-1", "replace"))],
    )


async def _whole_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body"):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the SDK the body read already, then whatever the connection says next."""
    given = False

    async def again():
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again


class McpEndpoint:
    """The ASGI app mounted at `/mcp`. `lifespan()` must be entered once around serving
    (foldrun.asgi does it on the server's lifespan startup)."""

    def __init__(self) -> None:
        self.manager = StreamableHTTPSessionManager(app=build_server(), stateless=True)

    @contextlib.asynccontextmanager
    async def lifespan(self) -> AsyncIterator[None]:
        async with self.manager.run():
            yield

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        raw = _bearer(scope)
        if not raw:
            await _unauthorized(send, MISSING_TOKEN, "invalid_request")
            return
        try:
            call = await anyio.to_thread.run_sync(lambda: in_thread(lambda: _call_for(raw)))
        except InvalidToken as exc:
            await _unauthorized(send, str(exc), "invalid_token")
            return
        except Exception:  # noqa: BLE001 — the database did not answer, say: a sentence, not a traceback
            code = incidents.record(log, "mcp: the token could not be checked")
            await _json(
                send,
                503,
                {
                    "code": "server_error",
                    "details": {"incident": code},
                    "message": incidents.sentence("Checking the API token", code) + "; try again.",
                },
            )
            return
        if scope.get("method") == "POST":
            body = await _whole_body(receive)
            if too_deep(body):
                # before the SDK parses it: the same limit, and the same sentence, as the API's and the hooks'
                await _json(
                    send,
                    400,
                    {
                        "jsonrpc": "2.0",
                        "id": None,
                        "error": {
                            "code": -32700,
                            "message": f"Parse error: {sentence()}; at most {MAX_DEPTH} are read.",
                            "data": {"limit": MAX_DEPTH},
                        },
                    },
                )
                return
            receive = _replay(body, receive)
        scope = dict(scope)
        scope[CALL_CONTEXT_KEY] = call
        # The SDK's own notion of who calls: the token (never its value), for anything of the SDK that asks.
        scope["user"] = AuthenticatedUser(
            AccessToken(token=call.token_id, client_id=call.token_id, scopes=[], subject=call.account.public_id)
        )
        await self.manager.handle_request(scope, receive, send)
