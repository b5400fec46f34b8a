"""The same connect-time guard for an MCP server named by `url:`.

The MCP SDK talks over httpx2 (its fork of httpx, async); this is an httpcore2
network backend that connects only to checked addresses, under an httpx2
transport — the twin of transport.py for that stack.
"""

from __future__ import annotations

from typing import AsyncIterator, Iterable

import anyio
import httpcore2
import httpx2

from .guard import connect_addresses, policy
from .transport import client_errors

_EXCEPTIONS: list[tuple[type[Exception], type[Exception]]] = [
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
]


class AsyncGuardedBackend(httpcore2.AnyIOBackend):
    def __init__(self, *, allow_private: bool | None = None) -> None:
        self.allow_private = allow_private

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        # The lookup blocks: off the event loop. PrivateAddress / NoSuchHost pass through as they are.
        addresses = await anyio.to_thread.run_sync(
            lambda: connect_addresses(host, port, allow_private=self.allow_private)
        )
        last: Exception | None = None
        for address in addresses:
            try:
                return await super().connect_tcp(
                    address, port, timeout=timeout, local_address=local_address, socket_options=socket_options
                )
            except httpcore2.ConnectError as exc:
                last = exc
        assert last is not None
        raise last


class _Body(httpx2.AsyncByteStream):
    def __init__(self, inner) -> None:
        self._inner = inner

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with client_errors(_EXCEPTIONS):
            async for chunk in self._inner:
                yield chunk

    async def aclose(self) -> None:
        await self._inner.aclose()


class AsyncGuardedTransport(httpx2.AsyncBaseTransport):
    def __init__(self, *, allow_private: bool | None = None) -> None:
        context = httpx2.create_ssl_context(trust_env=False)
        for ca_file in policy().ca_files:
            context.load_verify_locations(ca_file)
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=context, max_connections=20, network_backend=AsyncGuardedBackend(allow_private=allow_private)
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        core = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with client_errors(_EXCEPTIONS):
            answer = await self._pool.handle_async_request(core)
        return httpx2.Response(
            status_code=answer.status, headers=answer.headers, stream=_Body(answer.stream), extensions=answer.extensions
        )

    async def aclose(self) -> None:
        await self._pool.aclose()


def mcp_client(headers: dict[str, str] | None = None, *, allow_private: bool | None = None) -> httpx2.AsyncClient:
    """A client for one remote MCP connection (the SDK closes it): no proxy from the environment, no
    redirect followed by the client (the SDK follows within the origin, each hop meeting the guard), the
    SDK's own timeouts (30 s, 300 s to read a stream)."""
    return httpx2.AsyncClient(
        transport=AsyncGuardedTransport(allow_private=allow_private),
        headers=headers,
        timeout=httpx2.Timeout(30.0, read=300.0),
        trust_env=False,
        follow_redirects=False,
    )
