"""Issue 29, item 5: a corpus of hostile URLs — loopback written every way a resolver reads it, user-info
tricks, over-long and unicode hosts, bad ports, no host, control characters — fed to every path that takes a
URL, with private addresses switched off as in production: an http tool's `base`, `web action=fetch`,
`crawl` and `browse`, a remote MCP server's `url`, an openapi document's URL, a webhook destination, a
provider's `base_url`, the account's search engine. Each answers a sentence — the guard's own for every
form of a non-public address — and never a 5xx, a class name or an internal error."""

from __future__ import annotations

import json
import re

import pytest

from notify.actions import do_record_delivery, perform_attempt
from tests.runs.helpers import push

GUARD = ": private, loopback, link-local and other non-public addresses cannot be called"

# Every way of writing an address the guard must refuse; the host each names, as the sentence says it.
PRIVATE = {
    "http://0177.0.0.1/": "0177.0.0.1 resolves to 127.0.0.1",  # octal
    "http://127.000.000.001/": "127.000.000.001 resolves to 127.0.0.1",  # zero-padded
    "http://0x7f.1/": "0x7f.1 resolves to 127.0.0.1",  # hex, short form
    "http://0x7f000001/": "0x7f000001 resolves to 127.0.0.1",
    "http://2130706433/": "2130706433 resolves to 127.0.0.1",  # one number
    "http://017700000001/": "017700000001 resolves to 127.0.0.1",  # one octal number
    "http://127.1/": "127.1 resolves to 127.0.0.1",
    "http://0/": "0 resolves to 0.0.0.0",
    "http://[::1]/": "::1 resolves to ::1",
    "http://[::ffff:127.0.0.1]/": "::ffff:127.0.0.1 resolves to",
    "http://[::ffff:7f00:1]/": "::ffff:7f00:1 resolves to",
    "http://a@127.0.0.1/": "127.0.0.1 resolves to 127.0.0.1",  # user info before the host
    "http://user:pw@127.0.0.1:8080/": "127.0.0.1 resolves to 127.0.0.1",
    "http://example.com@127.0.0.1/": "127.0.0.1 resolves to 127.0.0.1",  # a name as the user
    "http://localhost/": "localhost resolves to",
    "http://169.254.169.254/latest/meta-data": "169.254.169.254 resolves to 169.254.169.254",
    "http://10.0.0.1/": "10.0.0.1 resolves to 10.0.0.1",
    "http://[fd00::1]/": "fd00::1 resolves to fd00::1",
    "http://[fe80::1%25eth0]/": "resolves to fe80::1",
}
# Anything else a URL can be wrong by: each a sentence, none a 5xx.
MALFORMED = [
    "http://" + "a" * 64 + ".example.com/",  # a label over 63 characters
    "http://" + ("a" * 60 + ".") * 5 + "com/",  # a host over 253 characters
    "http://example.com:99999/",
    "http://example.com:-1/",
    "http://example.com:abc/",
    "http://example.com:0/",
    "http://\u2488.com/",
    "http://xn--/",
    "http://a..b/",
    "http://.../",
    "http://1.2.3.4.5/",
    "http://256.0.0.1/",
    "http:///path",
    "http://",
    "http://[::1/",
    "http://[zz]/",
    "http://\x00/",
    "http://exa\nmple.com/",
    "http://example.com/\r\nX-Injected: 1",
    "ftp://example.com/",
    "javascript:alert(1)",
    "//127.0.0.1/",
    "http://example.com\\@127.0.0.1/",
    "http://127.0.0.1#@example.com/",
]
CORPUS = list(PRIVATE) + MALFORMED
CLASS_NAME = re.compile(r"\b(Traceback|[A-Z][a-z]+[A-Z]\w*(Error|Exception)|InvalidURL|IDNAError|ValueError)\b")


@pytest.fixture(autouse=True)
def production_network(settings):
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False


def _said(text: str, url: str) -> None:
    """`text` is a sentence for `url`: the guard's for a non-public address, and no class name for any."""
    assert text and not CLASS_NAME.search(text) and "internal error" not in text, (url, text)
    if url in PRIVATE:
        assert PRIVATE[url] in text and GUARD in text, (url, text)


def _tool_test(api, tool: str, arguments: dict):
    return api.post(f"/api/workspaces/rank-desk/tools/{tool}/test", {"arguments": arguments}, format="json")


def _answered(response, url: str) -> str:
    assert response.status_code < 500, (url, response.status_code, response.content[:300])
    body = response.json()
    return str(body.get("result") or body.get("message") or "")


@pytest.mark.parametrize("action", ["fetch", "crawl"])
def test_web_fetch_and_crawl_answer_each_hostile_url_with_a_sentence(alice_api, workspace, action):
    for url in CORPUS:
        answer = _answered(_tool_test(alice_api, "web", {"action": action, "url": url}), url)
        _said(answer, url)


def test_an_http_tool_whose_base_is_hostile_answers_with_a_sentence(alice_api, workspace):
    for n, url in enumerate(CORPUS):
        # a JSON string is a YAML double-quoted one: control characters reach `base` as written
        push(
            workspace,
            {
                "tools/api.md": f"---\ntransport: http\nname: api\ndescription: An API.\n"
                f"base: {json.dumps(url)}\n---\nCall it.\n"
            },
        )
        response = _tool_test(alice_api, "api", {"path": f"/items/{n}"})
        answer = _answered(response, url)
        assert response.json().get("ok") is not True, (url, answer)
        _said(answer, url)


def test_a_remote_mcp_server_at_a_hostile_url_answers_with_a_sentence(alice_api, workspace):
    for url in [
        "http://0177.0.0.1/mcp",
        "http://127.000.000.001/mcp",
        "http://[::ffff:127.0.0.1]/mcp",
        "http://2130706433/mcp",
        "http://example.com:99999/mcp",
        "http://[zz]/mcp",
        "http://\u2488.com/",
    ]:
        push(
            workspace,
            {"tools/remote.md": f"---\ntransport: mcp\nname: remote\ndescription: Remote.\nurl: {url}\n---\n"},
        )
        response = _tool_test(alice_api, "remote", {})
        answer = _answered(response, url)
        assert not CLASS_NAME.search(answer), (url, answer)
        if "0177" in url or "000" in url or "ffff" in url or "2130706433" in url:
            assert "resolves to 127.0.0.1" in answer or "resolves to ::ffff:7f00:1" in answer, (url, answer)


def test_an_openapi_document_at_a_hostile_url_loads_nothing_and_says_so(alice_api, workspace):
    for url in [
        "http://0177.0.0.1/openapi.json",
        "http://127.000.000.001/openapi.json",
        "http://[zz]/o.json",
        "http://example.com:99999/o.json",
    ]:
        push(
            workspace,
            {
                "tools/api.md": f"---\ntransport: http\nname: api\ndescription: An API.\n"
                f"base: https://api.example.com/v1\nopenapi: {url}\n"
                "operations: [getItem]\n---\n"
            },
        )
        response = _tool_test(alice_api, "api", {"id": "1"})
        answer = _answered(response, url)
        assert response.json().get("ok") is not True and not CLASS_NAME.search(answer), (url, answer)


def test_a_webhook_destination_at_a_hostile_url_is_a_failed_attempt_with_a_sentence(workspace):
    from tests.notify.conftest import write_agents_md

    for url in CORPUS:
        if not url.startswith("http") or any(ch in url for ch in "\r\n\x00 "):
            continue  # not something notify: accepts as a URL at all (its own check says so)
        write_agents_md(workspace, f'---\nnotify:\n  url: "{url}"\n---\n')
        delivery = do_record_delivery(workspace, "failed", '{"text": "x"}')
        result = perform_attempt(delivery.pk) if delivery is not None else None
        if result is None:
            continue  # the destination was refused before any attempt
        assert result.attempt.ok is False, url
        _said(result.attempt.error or "", url)


def test_the_accounts_search_engine_url_refuses_a_hostile_one_with_a_sentence(alice_api, workspace):
    for url in CORPUS:
        response = alice_api.patch("/api/account", {"search_engine_url": url}, format="json")
        assert response.status_code < 500, (url, response.status_code)
        if response.status_code == 400:
            assert not CLASS_NAME.search(response.json()["message"]), url


def test_a_provider_whose_base_url_is_hostile_fails_the_step_with_a_sentence():
    from foldrun.engine import StepRequest, run_step
    from foldrun.engine.local import LocalHost
    from tests.runs.engine_helpers import SECRETS, desk

    for url in [
        "http://0177.0.0.1/",
        "http://127.000.000.001/",
        "http://[::ffff:127.0.0.1]/",
        "http://2130706433/",
        "http://example.com:99999/",
        "http://[zz]/",
        "http://\u2488.com/",
        "http://a@127.0.0.1/",
    ]:
        agent = (
            f"---\nname: worker\ndescription: test agent\ntools: [read]\n"
            f"provider: {{name: anthropic, base_url: {json.dumps(url)}, key: '${{ANTHROPIC_API_KEY}}', "
            f"model: claude-sonnet-4-5}}\n---\nYou work.\n"
        )
        result = run_step(
            desk({"agents/worker/agent.md": agent}),
            StepRequest(run_id="run_t", label="1", agent="worker", task="Do it."),
            LocalHost(SECRETS),
        )
        assert result.status == "failed", url
        _said(result.error or "", url)
        assert result.error.startswith("base_url: "), (url, result.error)


@pytest.mark.e2e
def test_web_browse_answers_hostile_urls_with_a_sentence_and_opens_none(alice_api, workspace):
    for url in [
        "http://0177.0.0.1/",
        "http://127.000.000.001/",
        "http://[::ffff:127.0.0.1]/",
        "http://[::1/",
        "http://[zz]/",
        "http://example.com:99999/",
        "http://a@127.0.0.1/",
        "http://2130706433/",
    ]:
        answer = _answered(_tool_test(alice_api, "web", {"action": "browse", "url": url}), url)
        assert not CLASS_NAME.search(answer) and "internal error" not in answer, (url, answer)
        assert "resolves to" in answer or "port" in answer or "does not resolve" in answer, (url, answer)
        _said(answer, url)
