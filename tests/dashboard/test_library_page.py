"""The Library page: every shared file and gallery tool, its blast radius, its
history, and the gallery marks with "update to gallery version"."""

from __future__ import annotations

import html
import re

import pytest

from accounts.models import Workspace
from foldrun.gallery import gallery_tools
from library.actions.gallery import do_install_gallery_tool
from library.actions.writes import FileWrite, do_write_files
from library.services import files_at

from .conftest import SHARED_TOOL, agent, write

pytestmark = pytest.mark.django_db


def section(page: str, anchor: str) -> str:
    """The text of one item's card on the Library page."""
    match = re.search(rf'<section class="card shared" id="{anchor}".*?</section>', page, re.S)
    assert match, f"no section {anchor}"
    return html.unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(0))))


@pytest.fixture
def two_desks(account, desk, alice):
    """rank-desk: ranker grants the library's dataforseo. seo-desk: keeps its own copy."""
    other = Workspace.objects.create(account=account, name="seo-desk")
    write(
        account,
        other,
        {
            "agents/auditor/agent.md": agent("auditor", "dataforseo"),
            "tools/dataforseo.md": SHARED_TOOL.replace("POST", "GET"),
        },
        author=alice,
    )
    return other


def test_the_library_page_names_the_agents_that_grant_a_shared_tool_and_where_it_is_overridden(alice_web, two_desks):
    page = alice_web.get("/library/").content.decode()
    card = section(page, "tool-dataforseo")
    assert "ranker in rank-desk grants it" in card
    assert "workspace seo-desk overrides it with its own copy seo-desk/tools/dataforseo.md" in card
    assert "Changing it changes what 1 agent uses; 1 nearer copy overrides it." in card
    assert "DataForSEO's SERP API." in card


def test_the_blast_radius_is_drawn_with_overridden_copies_greyed(alice_web, two_desks):
    page = alice_web.get("/library/").content.decode()
    card = re.search(r'<section class="card shared" id="tool-dataforseo".*?</section>', page, re.S).group(0)
    assert 'role="img" aria-label="Blast radius of dataforseo">' in card
    assert '<text class="hub-text"' in card and ">dataforseo</text>" in card
    assert '<rect class="node"' in card and ">ranker · rank-desk</text>" in card
    assert '<rect class="node overridden"' in card and ">workspace seo-desk</text>" in card
    assert ">overridden by</text>" in card and ">tools/dataforseo.md</text>" in card
    assert '<line class="spoke overridden"' in card


def test_the_picture_is_cropped_to_what_it_draws():
    from library.pages_library import Grant, SharedItem, blast_picture

    one = SharedItem(
        kind="tool", name="x", source="library", paths=[], main_path="tools/x.md", grants=[Grant("rank-desk", "ranker")]
    )
    four = SharedItem(
        kind="tool",
        name="x",
        source="library",
        paths=[],
        main_path="tools/x.md",
        grants=[Grant("rank-desk", name) for name in ("a", "b", "c", "d")],
    )
    height = lambda item: float(blast_picture(item)["view"].split()[3])  # noqa: E731
    assert height(one) < height(four) <= 320


def test_an_agents_own_copy_is_named_as_the_override(alice_web, account, desk, alice):
    write(account, desk, {"agents/ranker/tools/dataforseo.md": SHARED_TOOL}, author=alice)
    card = section(alice_web.get("/library/").content.decode(), "tool-dataforseo")
    assert "ranker in rank-desk overrides it with its own copy rank-desk/agents/ranker/tools/dataforseo.md" in card


def test_every_gallery_tool_is_listed_with_the_agents_that_grant_it(alice_web, account, desk, alice):
    write(account, desk, {"agents/reader/agent.md": agent("reader", "web, read")}, author=alice)
    page = alice_web.get("/library/").content.decode()
    for name in gallery_tools():
        assert f'id="tool-{name}"' in page
    card = section(page, "tool-web")
    assert "gallery shelf" in card
    assert "reader in rank-desk grants it" in card


def test_a_library_tool_shows_its_revisions_with_links_to_each_diff(alice_web, account, desk, alice):
    write(
        account,
        None,
        {"tools/dataforseo.md": SHARED_TOOL.replace("POST", "POST, GET")},
        author=alice,
        message="allow GET",
    )
    page = alice_web.get("/library/").content.decode()
    card = re.search(r'<section class="card shared" id="tool-dataforseo".*?</section>', page, re.S).group(0)
    assert "allow GET" in card and "shared tools" in card
    assert 'href="/library/files/tools/dataforseo.md?from=1&amp;to=2"' in card
    assert 'href="/library/revisions/2/">#2</a>' in card
    diff = alice_web.get("/library/files/tools/dataforseo.md?from=1&to=2").content.decode()
    assert '<div class="add">+methods: [POST, GET]</div>' in diff


def test_an_unedited_gallery_copy_is_marked_current_without_an_update_button(alice_web, account, alice):
    do_install_gallery_tool(account=account, workspace=None, name="web", author=alice)
    page = alice_web.get("/library/").content.decode()
    card = section(page, "tool-web")
    assert "gallery · current" in card
    assert 'action="/library/gallery/web/update"' not in page


def _edit_web_copy(account, alice):
    path = "tools/web/tool.md"
    edited = files_at(account, None)[path].content + "\nOur own note.\n"
    do_write_files(
        account=account,
        workspace=None,
        writes=[FileWrite(path=path, content=edited)],
        kind="edit",
        message="our note",
        author=alice,
    )


def test_an_edited_gallery_copy_is_marked_differs_with_an_update_button(alice_web, account, alice):
    do_install_gallery_tool(account=account, workspace=None, name="web", author=alice)
    _edit_web_copy(account, alice)
    page = alice_web.get("/library/").content.decode()
    assert "gallery · differs" in section(page, "tool-web")
    assert 'action="/library/gallery/web/update"' in page


def test_update_to_gallery_version_writes_the_shelf_files_as_a_new_revision(alice_web, account, alice):
    do_install_gallery_tool(account=account, workspace=None, name="web", author=alice)
    _edit_web_copy(account, alice)
    response = alice_web.post("/library/gallery/web/update", follow=True)
    page = response.content.decode()
    assert "web now matches the gallery version (library revision #3); your version is one revision back." in page
    assert "gallery · current" in section(page, "tool-web")
    assert files_at(account, None)["tools/web/tool.md"].content == gallery_tools()["web"]["tools/web/tool.md"]


def test_bob_sees_the_library_without_the_update_button_and_cannot_post_it(bob_web, account, alice):
    do_install_gallery_tool(account=account, workspace=None, name="web", author=alice)
    _edit_web_copy(account, alice)
    page = bob_web.get("/library/").content.decode()
    assert "gallery · differs" in page
    assert 'action="/library/gallery/web/update"' not in page
    assert bob_web.post("/library/gallery/web/update").status_code == 403
    assert "Our own note." in files_at(account, None)["tools/web/tool.md"].content


def test_charlie_sees_only_his_own_library(charlie_web, two_desks):
    page = charlie_web.get("/library/").content.decode()
    assert 'id="tool-dataforseo"' not in page
    assert "rank-desk" not in page
    assert charlie_web.get("/library/files/tools/dataforseo.md").status_code == 404
    assert charlie_web.get("/library/revisions/1/").status_code == 404


def test_charlie_cannot_update_alices_gallery_copy(charlie_web, account, alice):
    do_install_gallery_tool(account=account, workspace=None, name="web", author=alice)
    _edit_web_copy(account, alice)
    charlie_web.post("/library/gallery/web/update")
    assert "Our own note." in files_at(account, None)["tools/web/tool.md"].content


def test_a_library_file_opens_with_its_history(alice_web, desk):
    page = alice_web.get("/library/files/tools/dataforseo.md").content.decode()
    assert "base: https://api.dataforseo.com/v3" in page
    assert "shared tools" in page


def test_a_gallery_shelf_file_without_a_copy_opens_read_only(alice_web, desk):
    page = alice_web.get("/library/files/tools/web/tool.md").content.decode()
    assert "This file is on the gallery shelf; the account has no copy of it." in page


def test_a_library_revision_page_shows_its_diff(alice_web, desk):
    page = alice_web.get("/library/revisions/1/").content.decode()
    assert 'tools/dataforseo.md</a> <span class="badge ok">added</span>' in page
    assert '<div class="add">+name: dataforseo</div>' in page


def test_alice_copies_a_shelf_tool_into_the_library(alice_web, account):
    page = alice_web.get("/library/").content.decode()
    assert 'action="/library/gallery/web/install"' in page
    response = alice_web.post("/library/gallery/web/install", follow=True)
    assert "web copied into the library (library revision #1). It follows the gallery until you edit it." in (
        html.unescape(response.content.decode())
    )
    assert "gallery · current" in section(response.content.decode(), "tool-web")
    assert files_at(account, None)["tools/web/tool.md"].gallery_tool == "web"


def test_bob_cannot_copy_a_shelf_tool_and_charlie_does_not_touch_alices_library(bob_web, charlie_web, account):
    assert 'action="/library/gallery/web/install"' not in bob_web.get("/library/").content.decode()
    assert bob_web.post("/library/gallery/web/install").status_code == 403
    charlie_web.post("/library/gallery/web/install")
    assert files_at(account, None) == {}


def test_an_unknown_gallery_tool_is_404(alice_web):
    assert alice_web.post("/library/gallery/nosuch/install").status_code == 404
    assert alice_web.post("/library/gallery/nosuch/update").status_code == 404


def test_a_library_edit_is_a_revision_and_the_page_offers_a_rollback(alice_web, account, desk):
    edited = SHARED_TOOL.replace("[POST]", "[POST, GET]")
    response = alice_web.post(
        "/library/edit/tools/dataforseo.md", {"content": edited, "message": "allow GET"}, follow=True
    )
    assert "Saved tools/dataforseo.md as revision #2." in response.content.decode()
    assert files_at(account, None)["tools/dataforseo.md"].changeset.kind == "edit"
    alice_web.post("/library/rollback/tools/dataforseo.md", {"to": "1"})
    assert files_at(account, None)["tools/dataforseo.md"].content == SHARED_TOOL


def test_bob_and_charlie_cannot_edit_the_library(bob_web, charlie_web, account, desk):
    assert bob_web.post("/library/edit/tools/dataforseo.md", {"content": "x"}).status_code == 403
    assert charlie_web.post("/library/edit/tools/dataforseo.md", {"content": "x"}).status_code == 404
    assert charlie_web.post("/library/rollback/tools/dataforseo.md", {"to": "1"}).status_code == 404
    assert files_at(account, None)["tools/dataforseo.md"].content == SHARED_TOOL
