"""Issue 35 item 9, in real Chromium: the workspace's "Secrets this desk needs" card shows every cell whole —
the fix command of a missing secret wraps inside its column — at 1366 and 1920 px; nothing is cut at the
card's edge or hidden behind a scroll bar."""

from __future__ import annotations

import pytest

from tests.runs.helpers import push

AGENTS_MD = (
    "---\nprovider: {name: anthropic, base_url: https://api.anthropic.com, key: ${ANTHROPIC_API_KEY}, "
    "model: claude-sonnet-4-5}\n---\nThe desk.\n"
)
AGENT = "---\nname: ranker\ndescription: Ranks pages.\ntools: [read, dataforseo]\n---\nRank.\n"
TOOL = (
    "---\ntransport: http\nname: dataforseo\ndescription: SERP API.\nbase: https://api.dataforseo.com/v3\n"
    "methods: [POST]\nheaders:\n  Authorization: Basic ${DATAFORSEO_AUTH_BASIC_FOR_THE_LONGEST_NAME}\n---\n"
)


@pytest.mark.e2e
@pytest.mark.parametrize("width", [1366, 1920])
def test_every_cell_of_the_secrets_card_is_shown_whole(live_server, signed_in, alice, workspace, width):
    push(workspace, {"AGENTS.md": AGENTS_MD, "agents/ranker/agent.md": AGENT, "tools/dataforseo.md": TOOL})
    page = signed_in(alice, width=width, height=1000)
    page.goto(f"{live_server.url}/w/rank-desk/")
    card = page.locator("#secrets-needed")
    fixes = card.locator("td.fix code").all_text_contents()
    assert "foldrun secrets set DATAFORSEO_AUTH_BASIC_FOR_THE_LONGEST_NAME --to rank-desk" in fixes
    # The card does not scroll sideways, and no cell is wider than the room it is given.
    assert card.evaluate("el => el.scrollWidth <= el.clientWidth")
    cut = card.evaluate(
        "el => [...el.querySelectorAll('td, td *')].filter(c => c.scrollWidth > c.clientWidth + 1)"
        ".map(c => c.textContent)"
    )
    assert cut == []
    # Each fix line lies inside the card's box.
    box = card.bounding_box()
    for line in card.locator("td.fix code").all():
        inner = line.bounding_box()
        assert inner["x"] >= box["x"] and inner["x"] + inner["width"] <= box["x"] + box["width"] + 0.5
