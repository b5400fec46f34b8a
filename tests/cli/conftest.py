"""Running the CLI in-process: `cli("check", path)` → Result(code, out, err).

`FOLDRUN_HOME` points at a fresh folder, and `FOLDRUN_URL`/`FOLDRUN_TOKEN`
are cleared unless a test signs someone in with `signed_in_as`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from foldrun.cli.main import main
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.loopback import LoopbackServer, QuietHandler


@dataclass
class Result:
    code: int
    out: str
    err: str

    @property
    def lines(self) -> list[str]:
        return self.out.splitlines()

    @property
    def err_lines(self) -> list[str]:
        return self.err.splitlines()

    @property
    def json(self):
        return json.loads(self.out)


@pytest.fixture
def foldrun_home(tmp_path, monkeypatch):
    home = tmp_path / "foldrun-home"
    monkeypatch.setenv("FOLDRUN_HOME", str(home))
    monkeypatch.delenv("FOLDRUN_URL", raising=False)
    monkeypatch.delenv("FOLDRUN_TOKEN", raising=False)
    monkeypatch.delenv("FOLDRUN_DEBUG", raising=False)
    return home


@pytest.fixture
def cli(foldrun_home, capsys):
    def run(*argv: str) -> Result:
        capsys.readouterr()
        code = main([str(a) for a in argv])
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return run


def mint_token(user, name: str = "cli test") -> str:
    from accounts.models import ApiToken, hash_token

    membership = user.memberships.order_by("created_at").first()
    raw = ApiToken.mint()
    ApiToken.objects.create(user=user, account=membership.account, name=name, token_hash=hash_token(raw), hint=raw[:8])
    return raw


@pytest.fixture
def signed_in_as(live_server, monkeypatch):
    """Point the CLI at the live server with a fresh token for `user`; returns the token."""

    def sign_in(user) -> str:
        raw = mint_token(user)
        monkeypatch.setenv("FOLDRUN_URL", live_server.url)
        monkeypatch.setenv("FOLDRUN_TOKEN", raw)
        return raw

    return sign_in


class CannedServer(LoopbackServer):
    """A loopback HTTP server answering every request with one canned response.

    For what a real foldrun server never sends (a hostile file listing, an
    HTML error page): `routes` maps a path (with its query, else without
    one) to (status, content type, body bytes).
    """

    def __init__(self, routes: dict[str, tuple[int, str, bytes]]) -> None:
        self.routes = routes
        self.requests: list[tuple[str, str]] = []
        server = self

        class Handler(QuietHandler):
            def _answer(self) -> None:
                path = self.path.split("?", 1)[0]
                server.requests.append((self.command, self.path))
                status, content_type, body = server.routes.get(self.path) or server.routes.get(
                    path, (404, "application/json", b'{"code":"not_found","message":"Not found.","details":{}}')
                )
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = do_DELETE = _answer

        super().__init__(Handler)
        self.start()

    def close(self) -> None:
        self.stop()


@pytest.fixture
def canned_server():
    servers: list[CannedServer] = []

    def start(routes: dict[str, tuple[int, str, bytes]]) -> CannedServer:
        server = CannedServer(routes)
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.close()
