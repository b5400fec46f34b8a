"""Issue 32, item 4 (wording): notifications.md — a completed run whose verdict is BLOCKED is sent as `blocked`
"with the headline `⛔ <flow> blocked`". A laptop run (`foldrun run --local`) sends that headline too, as the
server does, not the agent's own first line."""

from __future__ import annotations

import json

import pytest

from notify.events import headline_for
from tests.notify.conftest import Receiver
from vault.local import LocalVault

AGENTS = (
    "---\nprovider:\n  name: stub\n  base_url: {url}\n  key: ${{STUB_KEY}}\n  model: stub-model\n"
    "  format: openai\nnotify:\n  url: {hook}\n  events: [failed, blocked]\n---\nThe desk.\n"
)


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


def test_a_blocked_laptop_run_is_sent_with_the_headline_the_server_sends(
    cli, tmp_path, fake_provider, foldrun_home, receiver
):
    root = tmp_path / "desk"
    assert cli("init", root, "--name", "demo").code == 0
    (root / "AGENTS.md").write_text(AGENTS.format(url=fake_provider.openai_base_url, hook=receiver.url))
    LocalVault(foldrun_home).set("STUB_KEY", "stub-key-1")
    fake_provider.reply_text("BLOCKED — the publisher was down, nothing went out")
    result = cli("run", "hello", "--local", "--path", root, "--input", "topic=x")
    assert result.code == 0, result.out + result.err
    assert len(receiver.requests) == 1
    sent = receiver.requests[0]
    assert sent["headers"]["X-Foldrun-Event"] == "blocked"
    body = json.loads(sent["body"])
    assert body["verdict"] == "BLOCKED"
    assert body["text"].split(" · ", 1)[0] == "⛔ hello blocked"


def test_the_server_and_the_laptop_share_one_headline_for_each_event():
    class Run:
        name, headline, error, status = "hello", "BLOCKED — down", "", "completed"

    assert headline_for(Run(), "blocked") == "⛔ hello blocked"
