"""The guard inside the connection, through httpcore's public seams.

`GuardedBackend` is an httpcore network backend: every TCP connect resolves
the host once, checks every address (foldrun.net.guard) and opens the socket
to a checked address — so a redirect hop, a keep-alive reconnect or a name
that re-resolves somewhere else meets the same check when it connects. TLS
still verifies the host name (httpcore passes the origin's name as SNI).

`GuardedTransport` is an httpx transport over an httpcore pool built with
that backend; it also keeps a request's overall deadline: every connect,
read and write, and the reading of the body, ends by it.
"""

from __future__ import annotations

import time
import zlib
from contextlib import contextmanager
from typing import Iterable, Iterator

import httpcore
import httpx

from .guard import NoSuchHost, Resolver, connect_addresses, deadline, left, policy
from .malformed import port_problem, refusal
from .target import request_target

_EXCEPTIONS: list[tuple[type[Exception], type[httpx.HTTPError]]] = [
    (httpcore.ConnectTimeout, httpx.ConnectTimeout),
    (httpcore.ReadTimeout, httpx.ReadTimeout),
    (httpcore.WriteTimeout, httpx.WriteTimeout),
    (httpcore.PoolTimeout, httpx.PoolTimeout),
    (httpcore.TimeoutException, httpx.TimeoutException),
    (httpcore.ConnectError, httpx.ConnectError),
    (httpcore.ReadError, httpx.ReadError),
    (httpcore.WriteError, httpx.WriteError),
    (httpcore.NetworkError, httpx.NetworkError),
    (httpcore.ProxyError, httpx.ProxyError),
    (httpcore.UnsupportedProtocol, httpx.UnsupportedProtocol),
    (httpcore.RemoteProtocolError, httpx.RemoteProtocolError),
    (httpcore.LocalProtocolError, httpx.LocalProtocolError),
    (httpcore.ProtocolError, httpx.ProtocolError),
]
_POOL_ERRORS = tuple(core for core, _client in _EXCEPTIONS)


@contextmanager
def client_errors(table: list[tuple[type[Exception], type[Exception]]] = _EXCEPTIONS) -> Iterator[None]:
    """A pool's errors as the client library's (what callers catch); anything else — the guard's own
    refusals included — as it is. `table` pairs (pool error, client error), most specific first."""
    try:
        yield
    except tuple(core for core, _client in table) as exc:
        mapped = _mapped(exc, table)
        if mapped is None:
            raise
        raise mapped from None


def _mapped(exc: Exception, table: list[tuple[type[Exception], type[Exception]]] = _EXCEPTIONS) -> Exception | None:
    """The client library's error for a pool's `exc`; None for any other."""
    return next((client(str(exc)) for core, client in table if isinstance(exc, core)), None)


def _spent(kind: type[Exception], timeout: float | None) -> float | None:
    capped = left(timeout)
    if deadline.at is not None and capped is not None and capped <= 0:
        raise kind("the request took longer than its deadline")
    return capped


class _DeadlineStream(httpcore.NetworkStream):
    """A socket whose every read and write ends by the request's deadline."""

    def __init__(self, inner: httpcore.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _spent(httpcore.ReadTimeout, timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _spent(httpcore.WriteTimeout, timeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, _spent(httpcore.ConnectTimeout, timeout))
        )

    def get_extra_info(self, info: str):
        return self._inner.get_extra_info(info)


class GuardedBackend(httpcore.SyncBackend):
    """httpcore's own socket backend, connecting only to checked addresses.

    `allow_private` None means the install's policy at the moment of the connect; by itself it is strict.
    """

    def __init__(self, resolve: Resolver | None = None, *, allow_private: bool | None = False) -> None:
        self.resolve = resolve
        self.allow_private = allow_private

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable | None = None,
    ) -> httpcore.NetworkStream:
        addresses = connect_addresses(host, port, allow_private=self.allow_private, resolve=self.resolve)
        last: Exception | None = None
        for address in addresses:
            try:
                return _DeadlineStream(
                    super().connect_tcp(
                        address,
                        port,
                        timeout=_spent(httpcore.ConnectTimeout, timeout),
                        local_address=local_address,
                        socket_options=socket_options,
                    )
                )
            except httpcore.ConnectError as exc:  # try the next checked address
                last = exc
            except UnicodeError:  # a label the IDNA codec refuses (allowed-private path: the name goes as is)
                raise NoSuchHost(host) from None
        assert last is not None
        raise last


class _Body(httpx.SyncByteStream):
    """The response body, read within the request's deadline."""

    def __init__(self, inner: Iterable[bytes], at: float | None) -> None:
        self._inner = inner
        self._at = at

    def __iter__(self) -> Iterator[bytes]:
        chunks = iter(self._inner)
        while True:
            at = self._at  # read each time: PlainAnswer.shorten may bring it forward
            before, deadline.at = deadline.at, at
            try:
                if at is not None and time.monotonic() >= at:
                    raise httpx.ReadTimeout("the answer took longer than the request's deadline")
                chunk = next(chunks)
            except StopIteration:
                return
            except _POOL_ERRORS as exc:  # client_errors' mapping, inline: a streamed answer comes in many chunks
                mapped = _mapped(exc)
                if mapped is None:
                    raise
                raise mapped from None
            finally:
                deadline.at = before
            yield chunk

    def close(self) -> None:
        close = getattr(self._inner, "close", None)
        if close is not None:
            close()


class GuardedTransport(httpx.BaseTransport):
    def __init__(
        self, backend: GuardedBackend, *, deadline_seconds: float | None = None, limits: httpx.Limits | None = None
    ) -> None:
        limits = limits or httpx.Limits(max_connections=50, max_keepalive_connections=20)
        self.deadline_seconds = deadline_seconds
        self.allow_private = backend.allow_private
        context = httpx.create_ssl_context(trust_env=False)
        for ca_file in policy().ca_files:
            context.load_verify_locations(ca_file)
        self._pool = httpcore.ConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=backend,
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        at = time.monotonic() + self.deadline_seconds if self.deadline_seconds else None
        core = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        before, deadline.at = deadline.at, at
        try:
            with client_errors():
                answer = self._pool.handle_request(core)
        finally:
            deadline.at = before
        return httpx.Response(
            status_code=answer.status,
            headers=answer.headers,
            stream=_Body(answer.stream, at),
            extensions=answer.extensions,
        )

    @contextmanager
    def plain_get(
        self, url: str, headers: dict[str, str], *, timeout: float, connect: float | None = None
    ) -> Iterator["PlainAnswer"]:
        """One GET straight onto the guarded pool, for a caller reading many pages of a site (a crawl).

        The client layer's per-request work — building and merging headers, auth, cookies, redirect
        and event-hook bookkeeping, the Response wrapper — cost a crawled page more CPU than its
        reading and converting together. This path has none of it, and none is missing for a GET that
        sends no cookie and follows no redirect: the same pool, so every connect still meets the
        guard in GuardedBackend.connect_tcp; the same deadline; the pool's errors as httpx's. The body
        is decoded (gzip, deflate: what it asks for) as it is read, so a cap counts decoded bytes.
        """
        with self.plain("GET", url, headers, timeout=timeout, connect=connect) as answer:
            yield answer

    @contextmanager
    def plain(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        *,
        content: bytes | None = None,
        timeout: float,
        connect: float | None = None,
    ) -> Iterator["PlainAnswer"]:
        """One request straight onto the guarded pool (plain_get's path, with a method and a body): for a
        model call's streamed answer, whose every event the client layer's stream wrappers cost more CPU
        than its parsing. Sends no cookie, follows no redirect; `content` goes with its Content-Length."""
        # validated and IDNA-encoded as the client would (httpx.URL), its origin's parse kept across a site's pages
        try:
            scheme, raw_scheme, raw_host, port, raw_path = request_target(url)
        except (httpx.InvalidURL, UnicodeError):  # the guard's sentence, not the library's refusal
            raise refusal(url, allow_private=self.allow_private) from None
        bad_port = port_problem(port, raw_host.decode("ascii", "replace"))
        if bad_port is not None:
            raise bad_port
        if scheme not in ("http", "https"):
            raise httpx.UnsupportedProtocol(f"Request URL has an unsupported protocol '{scheme}://'.")
        if not raw_host:
            raise httpx.LocalProtocolError("Request URL is missing a host")
        default_port = 443 if scheme == "https" else 80
        host = raw_host + (b":%d" % port if port and port != default_port else b"")
        wire = [(b"Host", host), (b"Accept-Encoding", b"gzip, deflate"), (b"Connection", b"keep-alive")]
        wire += [(name.encode("ascii"), value.encode("latin-1")) for name, value in headers.items()]
        if content is not None:
            wire.append((b"Content-Length", b"%d" % len(content)))
        extensions = {
            "timeout": {"connect": min(connect or timeout, timeout), "read": timeout, "write": timeout, "pool": timeout}
        }
        core = httpcore.Request(
            method=method.encode("ascii"),
            url=httpcore.URL(scheme=raw_scheme, host=raw_host, port=port, target=raw_path),
            headers=wire,
            content=content,
            extensions=extensions,
        )
        at = time.monotonic() + self.deadline_seconds if self.deadline_seconds else None
        before, deadline.at = deadline.at, at
        try:
            with client_errors():
                answer = self._pool.handle_request(core)
        finally:
            deadline.at = before
        try:
            yield PlainAnswer(answer, at)
        finally:
            with client_errors():
                answer.close()

    def close(self) -> None:
        self._pool.close()


class PlainAnswer:
    """A plain answer: status, headers (names lower-cased; a repeated one keeps its first value; `raw_headers`
    has them all as sent), body."""

    def __init__(self, answer: httpcore.Response, at: float | None) -> None:
        self.status_code = answer.status
        self.raw_headers: list[tuple[bytes, bytes]] = answer.headers
        self.headers: dict[str, str] = {}
        for name, value in answer.headers:
            self.headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))
        self._body = _Body(answer.stream, at)

    @property
    def is_redirect(self) -> bool:
        return self.status_code in (301, 302, 303, 307, 308) and "location" in self.headers

    def shorten(self, seconds: float) -> None:
        """From now on the body's reads end within `seconds` (or by the request's deadline, when sooner): for the
        rest of an answer already whole, read so its connection goes back to the pool but not waited on for long."""
        at = time.monotonic() + seconds
        self._body._at = at if self._body._at is None else min(self._body._at, at)

    def read(self) -> bytes:
        """The whole body, decoded."""
        return b"".join(self.iter_bytes())

    def iter_bytes(self) -> Iterator[bytes]:
        coding = self.headers.get("content-encoding", "identity").strip().lower()
        if coding in ("", "identity"):
            yield from self._body
            return
        if coding not in ("gzip", "x-gzip", "deflate"):
            raise httpx.DecodingError(f"the answer is {coding}-encoded, which was not asked for")
        # 47: a gzip or zlib header, told apart by the decoder; a raw deflate stream (some servers) by -15
        decoder = zlib.decompressobj(47 if coding != "deflate" else 15)
        first = True
        try:
            for chunk in self._body:
                if first and coding == "deflate" and chunk[:1] and (chunk[0] & 0x0F) != 8:
                    decoder = zlib.decompressobj(-15)
                first = False
                if out := decoder.decompress(chunk):
                    yield out
            if tail := decoder.flush():
                yield tail
        except zlib.error as exc:
            raise httpx.DecodingError(f"the {coding} body could not be decoded ({exc})") from None
