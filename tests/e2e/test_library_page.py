"""End to end, in a real browser: sign in through the real allauth form, push
desks with the real CLI against a live server, and read the Library page's
blast radius."""

from __future__ import annotations

import pytest

from accounts.actions import do_create_token
from accounts.models import Workspace

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

SHARED_TOOL = """---
transport: http
name: dataforseo
description: DataForSEO's SERP API. POST a keyword and a location.
base: https://api.dataforseo.com/v3
methods: [POST]
---
"""


def agent(name: str, tools: str) -> str:
    return f"---\nname: {name}\ndescription: The {name}.\ntools: [{tools}]\n---\nDo the work.\n"


def make_folder(root, files: dict[str, str]):
    for path, text in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    return root


def cli(*argv: str) -> int:
    from foldrun.cli.main import main

    return main(list(argv))


@pytest.mark.e2e
def test_the_library_page_shows_who_grants_a_shared_tool_and_which_workspace_overrides_it(
    live_server, alice, account, tmp_path, monkeypatch, capsys
):
    from playwright.sync_api import expect, sync_playwright

    # Set-up through the real CLI, against the live server, with alice's token.
    Workspace.objects.create(account=account, name="rank-desk")
    Workspace.objects.create(account=account, name="seo-desk")
    _, raw = do_create_token(alice, account, "e2e")
    monkeypatch.setenv("FOLDRUN_URL", live_server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", raw)
    monkeypatch.setenv("FOLDRUN_HOME", str(tmp_path / "home"))
    library = make_folder(tmp_path / "library", {"tools/dataforseo.md": SHARED_TOOL})
    rank_desk = make_folder(
        tmp_path / "rank-desk",
        {
            "agents/ranker/agent.md": agent("ranker", "dataforseo, read"),
            "agents/auditor/agent.md": agent("auditor", "dataforseo"),
        },
    )
    seo_desk = make_folder(
        tmp_path / "seo-desk",
        {
            "agents/scout/agent.md": agent("scout", "dataforseo"),
            "tools/dataforseo.md": SHARED_TOOL.replace("[POST]", "[GET, POST]"),
        },
    )
    assert cli("push", str(library), "--library", "-m", "shared tools") == 0
    assert cli("push", str(rank_desk), "--to", "rank-desk", "-m", "two agents") == 0
    assert cli("push", str(seo_desk), "--to", "seo-desk", "-m", "own copy") == 0
    assert "revision 1" in capsys.readouterr().out

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1100, "height": 1400})
        try:
            # Sign in through allauth's real form.
            page.goto(f"{live_server.url}/library/")
            expect(page).to_have_url(f"{live_server.url}/accounts/login/?next=/library/")
            page.fill("input[name=login]", "alice@example.com")
            page.fill("input[name=password]", "correct horse battery")
            page.click("form button[type=submit]")
            expect(page).to_have_url(f"{live_server.url}/library/")
            expect(page.locator(".topbar .email")).to_have_text("alice@example.com")

            card = page.locator("#tool-dataforseo")
            expect(card.locator("li[data-agent=ranker][data-workspace=rank-desk]")).to_have_text(
                "ranker in rank-desk grants it"
            )
            expect(card.locator("li[data-agent=auditor][data-workspace=rank-desk]")).to_have_text(
                "auditor in rank-desk grants it"
            )
            expect(card.locator("li.overridden[data-workspace=seo-desk]")).to_have_text(
                "workspace seo-desk overrides it with its own copy seo-desk/tools/dataforseo.md"
            )
            expect(card).to_contain_text("Changing it changes what 2 agents use; 1 nearer copy overrides it.")
            # The picture: two live spokes, one greyed with the overriding copy named.
            expect(card.locator("svg rect.node:not(.overridden)")).to_have_count(2)
            expect(card.locator("svg rect.node.overridden")).to_have_count(1)
            expect(card.locator("svg g:has(rect.node.overridden) text")).to_have_text(
                ["workspace seo-desk", "overridden by", "tools/dataforseo.md"]
            )
            card.screenshot(path=str(tmp_path / "library-dataforseo.png"))
            page.screenshot(path=str(tmp_path / "library-page.png"), full_page=True)
        finally:
            browser.close()
    assert (tmp_path / "library-page.png").stat().st_size > 10_000
