"""`proxy`: the NAME of a secret holding `http://user:pass@host:port` (spec/tools.md, "The browser, in full").

Real Chromium, a loopback proxy that wants basic auth and counts what it carried (tests/fakes/http_proxy.py). The
browser still goes through the guard proxy; the guard hands each connection on to the user's proxy, so the page
is served through it, the guard still checks the address that proxy is at, and the proxy's credentials are in no
output, log line or event."""

from __future__ import annotations

import socket

import pytest

from foldrun.net import checked_addresses
from foldrun.web import WebToolError
from foldrun.web.net import GuardProxy, Upstream
from tests.fakes.http_proxy import AuthProxy
from tests.fakes.loopback import QuietHandler
from tests.fakes.tls import TlsLoopbackServer
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

PASSWORD = "pr0xy-s3cret-pass"
ROUTES = {"/shop": html(page("Shop", "<h1>Through the proxy</h1><p>three lamps in stock</p>"))}


@pytest.fixture
def proxy():
    with AuthProxy("ann", PASSWORD) as server:
        yield server


@pytest.fixture
def tls_site(tmp_path):
    """An HTTPS page on loopback with a throwaway certificate for localhost."""

    class Handler(QuietHandler):
        def do_GET(self):  # noqa: N802
            body = b"<!doctype html><title>Vault</title><p>sealed over TLS</p>"
            self.send_response(200)
            self.send_header("content-type", "text/html")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with TlsLoopbackServer(Handler, tmp_path) as server:
        yield server.host


def _tool(make_tool, browsers, block, secrets):
    return make_tool({"browse": block}, browsers=browsers, secret=secrets.__getitem__)


def test_a_browse_reaches_the_page_through_the_proxy_in_the_secret(make_tool, browsers, pages_site, proxy, recorder):
    tool = _tool(make_tool, browsers, {"proxy": "SHOP_PROXY"}, {"SHOP_PROXY": proxy.url_with("ann", PASSWORD)})
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/shop"})
    assert "three lamps in stock" in out
    assert f"GET {pages_site.url}/shop" in proxy.carried  # the page came through the user's proxy
    assert not proxy.refused
    assert PASSWORD not in out and PASSWORD not in recorder.text() and "ann:" not in recorder.text()


def test_a_tls_page_is_reached_through_a_tunnel_the_proxy_opens(make_tool, browsers, proxy, tls_site):
    tool = _tool(
        make_tool,
        browsers,
        {"proxy": "SHOP_PROXY", "ignore_https_errors": True},
        {"SHOP_PROXY": proxy.url_with("ann", PASSWORD)},
    )
    assert "sealed over TLS" in tool.call({"action": "browse", "url": f"https://{tls_site}/"})
    assert f"CONNECT {tls_site}" in proxy.carried


def test_the_call_argument_and_an_identity_name_the_proxy_too(make_tool, browsers, pages_site, proxy):
    secrets = {"AU_PROXY": proxy.url_with("ann", PASSWORD)}
    tool = _tool(make_tool, browsers, {"identities": {"au": {"proxy": "AU_PROXY"}}}, secrets)
    assert "three lamps" in tool.call({"action": "browse", "url": f"{pages_site.url}/shop", "identity": "au"})
    assert len(proxy.carried) == 1
    assert "three lamps" in tool.call({"action": "browse", "url": f"{pages_site.url}/shop", "proxy": "AU_PROXY"})
    assert len(proxy.carried) == 2
    tool.call({"action": "browse", "url": f"{pages_site.url}/shop"})  # neither: straight to the page
    assert len(proxy.carried) == 2


def test_a_proxy_that_refuses_its_password_is_a_sentence_naming_its_secret(
    make_tool, browsers, pages_site, proxy, recorder
):
    tool = _tool(make_tool, browsers, {"proxy": "SHOP_PROXY"}, {"SHOP_PROXY": proxy.url_with("ann", "wrong-pass")})
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/shop"})
    assert str(caught.value) == (
        f"browse: {pages_site.url}/shop was not opened — the proxy in the secret SHOP_PROXY "
        f"(127.0.0.1:{proxy.port}) refused its user:pass (HTTP 407 Proxy Authentication "
        f"Required)"
    )
    assert proxy.refused and not proxy.carried
    assert "wrong-pass" not in recorder.text()


def test_a_missing_or_misshapen_proxy_secret_is_refused_by_name(make_tool, browsers, pages_site):
    tool = _tool(make_tool, browsers, {"proxy": "NO_SUCH_PROXY"}, {})
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/shop"})
    assert str(caught.value) == (
        "browse: proxy: the secret NO_SUCH_PROXY is not available to this step — declare it "
        "under secrets: and set it to http://user:pass@host:port"
    )
    tool = _tool(make_tool, browsers, {"proxy": "SOCKS"}, {"SOCKS": "socks5://ann:pw@127.0.0.1:1080"})
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/shop"})
    assert str(caught.value) == (
        "browse: proxy: the secret SOCKS does not hold an HTTP proxy URL; it holds http://user:pass@host:port"
    )


def test_allowed_domains_still_holds_for_a_redirect_hop_only_the_proxy_reaches(make_tool, browsers, pages_site, proxy):
    other = f"http://localhost:{pages_site.port}"
    pages_site.routes["/away"] = (302, {"location": f"{other}/shop"}, b"")
    tool = _tool(
        make_tool,
        browsers,
        {"proxy": "SHOP_PROXY", "allowed_domains": ["127.0.0.1"]},
        {"SHOP_PROXY": proxy.url_with("ann", PASSWORD)},
    )
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/away"})
    assert "localhost is outside this agent's allowed_domains (127.0.0.1)" in str(caught.value)
    assert f"GET {pages_site.url}/away" in proxy.carried
    assert not any("localhost" in line for line in proxy.carried)  # the guard refused it before the proxy saw it


def test_the_guard_checks_the_address_the_users_proxy_is_at(proxy):
    """The install's own policy (no private addresses): a proxy on loopback is refused, whatever page it would
    reach — the page's public address is never the one checked."""
    guard = GuardProxy(
        lambda host, port: checked_addresses(host, port),
        upstream=lambda host: Upstream("127.0.0.1", proxy.port, "Basic eA==", "SHOP_PROXY"),
    )
    try:
        with socket.create_connection(("127.0.0.1", guard.port), timeout=5) as conn:
            conn.sendall(b"GET http://93.184.216.34/ HTTP/1.1\r\nHost: 93.184.216.34\r\n\r\n")
            answer = conn.recv(65536)
        assert answer.startswith(b"HTTP/1.1 403 Forbidden")
        assert guard.refusals and "127.0.0.1" in guard.refusals[0][1]
        assert not proxy.carried and not proxy.refused  # nothing reached the proxy
    finally:
        guard.close()


def test_an_engine_without_a_proxy_is_refused_in_the_words_check_uses_and_check_passes_chromium(
    make_tool, browsers, pages_site
):
    from foldrun.contract import Desk, check

    def found(engine: str) -> list[str]:
        text = (
            f"---\nname: researcher\ntools: [web]\nsecrets: [SHOP_PROXY]\nweb:\n  browse:\n    engine: {engine}\n"
            f"    proxy: SHOP_PROXY\n---\nP.\n"
        )
        return [
            f.message
            for f in check(Desk(files={"agents/researcher/agent.md": text}), mode="check")
            if f.code.startswith("web.")
        ]

    tool = _tool(make_tool, browsers, {"engine": "lightpanda", "proxy": "SHOP_PROXY"}, {"SHOP_PROXY": "http://h:1"})
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/shop"})
    assert found("lightpanda") == [str(caught.value) + "."]
    assert str(caught.value).startswith("web.browse: proxy needs a browser that takes a proxy")
    assert found("chromium") == []


def test_a_session_keeps_the_proxy_it_was_opened_with_and_a_call_that_changes_it_is_refused(
    make_tool, browsers, pages_site, proxy
):
    tool = _tool(make_tool, browsers, {}, {"SHOP_PROXY": proxy.url_with("ann", PASSWORD)})
    tool.call({"action": "browse", "url": f"{pages_site.url}/shop", "session": "s", "proxy": "SHOP_PROXY"})
    tool.call({"action": "browse", "url": f"{pages_site.url}/shop", "session": "s", "proxy": "SHOP_PROXY"})
    assert len(proxy.carried) == 2  # the session's context, still through the proxy
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/shop", "session": "s"})
    assert str(caught.value) == (
        "browse: session=s was opened with proxy SHOP_PROXY; a later call in it cannot "
        "change its proxy, extensions or webgpu (they are how its browser was opened) — use "
        "another session name"
    )
    tool.call({"action": "browse", "url": f"{pages_site.url}/shop", "session": "plain"})
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/shop", "session": "plain", "proxy": "SHOP_PROXY"})
    assert str(caught.value).startswith("browse: session=plain was opened with no proxy, extensions or webgpu; ")
