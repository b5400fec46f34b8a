"""The workspace page, file views with history and diffs, and revision pages."""

from __future__ import annotations

import html
import re

import pytest

from accounts.models import Workspace
from library.services import files_at

from .conftest import agent, write

pytestmark = pytest.mark.django_db


def without_csrf(response) -> str:
    """The page with its per-request CSRF token blanked (it differs on every render)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", response.content.decode())


def test_the_workspace_page_shows_agents_with_their_tools_flows_files_and_revisions(alice_web, desk):
    response = alice_web.get("/w/rank-desk/")
    assert response.status_code == 200
    page = response.content.decode()
    assert ">ranker</a>" in page and "Finds where our pages rank." in page
    assert 'title="library: tools/dataforseo.md">dataforseo · library</span>' in page
    assert '<span class="tag" title="built-in">read</span>' in page
    assert ">weekly-rankings</a>" in page and "0 7 * * MON · Australia/Sydney" in page
    assert (
        '<strong>writer</strong> <span class="badge warn" title="approval gate">! approval</span> — Draft the note and send it. <span class="muted">· verify file outputs/receipt.json</span>'
        in page
    )
    assert 'href="/w/rank-desk/files/tools/sql.md">sql.md</a>' in page
    assert 'href="/w/rank-desk/revisions/1/">#1</a>' in page
    assert "first desk" in page


def test_the_file_tree_shows_folders_once_and_each_file_with_its_size(alice_web, desk):
    rows = alice_web.get("/w/rank-desk/").context["tree"]
    folders = [r.path for r in rows if r.is_dir]
    assert folders == ["agents", "agents/ranker", "agents/writer", "flows", "tools"]
    sql = next(r for r in rows if r.path == "tools/sql.md")
    assert (sql.depth, sql.size) == (1, len("---\ntransport: script\nname: sql\n---\n```python\nprint(1)\n```\n"))


def test_a_file_opens_at_its_newest_revision_with_its_history(alice_web, account, desk, alice):
    write(account, desk, {"tools/sql.md": "---\nname: sql\n---\nsecond\n"}, author=alice, message="shorter sql")
    response = alice_web.get("/w/rank-desk/files/tools/sql.md")
    page = response.content.decode()
    assert response.context["revision"].number == 2
    assert "second" in page
    assert "shorter sql" in page and "first desk" in page
    assert 'href="/w/rank-desk/files/tools/sql.md?from=1&amp;to=2">diff with #1</a>' in page


def test_a_file_opens_as_an_older_revision_left_it(alice_web, account, desk, alice):
    write(account, desk, {"tools/sql.md": "---\nname: sql\n---\nsecond\n"}, author=alice)
    response = alice_web.get("/w/rank-desk/files/tools/sql.md?at=1")
    assert response.context["revision"].number == 1
    assert "print(1)" in response.content.decode()


def test_a_diff_between_two_revisions_marks_removed_and_added_lines(alice_web, account, desk, alice):
    write(
        account,
        desk,
        {"tools/sql.md": "---\ntransport: script\nname: sql\n---\n```python\nprint(2)\n```\n"},
        author=alice,
    )
    page = alice_web.get("/w/rank-desk/files/tools/sql.md?from=1&to=2").content.decode()
    assert '<div class="del">-print(1)</div>' in page
    assert '<div class="add">+print(2)</div>' in page
    assert "Diff #1 → #2" in page


def test_a_revision_page_shows_the_diff_of_every_file_it_touched(alice_web, account, desk, alice):
    write(
        account,
        desk,
        {"agents/writer/agent.md": agent("writer", "read"), "tools/sql.md": None},
        author=alice,
        message="tidy",
    )
    page = alice_web.get("/w/rank-desk/revisions/2/").content.decode()
    assert "Revision #2" in page and "tidy" in page
    assert 'agents/writer/agent.md</a> <span class="badge">changed</span>' in page
    assert 'tools/sql.md</a> <span class="badge warn">deleted</span>' in page
    assert '<div class="del">-tools: [read, write]</div>' in page


def test_bob_reads_the_workspace_and_its_files(bob_web, desk):
    assert bob_web.get("/w/rank-desk/").status_code == 200
    assert bob_web.get("/w/rank-desk/files/tools/sql.md").status_code == 200
    assert bob_web.get("/w/rank-desk/revisions/1/").status_code == 200


@pytest.mark.parametrize(
    "url",
    [
        "/w/rank-desk/",
        "/w/rank-desk/files/tools/sql.md",
        "/w/rank-desk/files/tools/sql.md?at=1",
        "/w/rank-desk/files/tools/sql.md?from=0&to=1",
        "/w/rank-desk/revisions/1/",
    ],
)
def test_charlie_gets_the_same_404_as_for_a_missing_workspace(charlie_web, desk, url):
    theirs = charlie_web.get(url)
    missing = charlie_web.get(url.replace("rank-desk", "no-such-desk"))
    assert theirs.status_code == missing.status_code == 404
    assert without_csrf(theirs) == without_csrf(missing)
    assert "rank-desk" not in theirs.content.decode()


def test_charlie_with_a_workspace_of_the_same_name_sees_only_his_own(charlie_web, charlie, desk):
    theirs = Workspace.objects.create(account=charlie.memberships.get().account, name="rank-desk")
    page = charlie_web.get("/w/rank-desk/")
    assert page.context["workspace"] == theirs
    assert "ranker" not in page.content.decode()
    assert charlie_web.get("/w/rank-desk/files/tools/sql.md").status_code == 404


def test_a_missing_file_or_revision_is_404(alice_web, desk):
    assert alice_web.get("/w/rank-desk/files/nope.md").status_code == 404
    assert alice_web.get("/w/rank-desk/revisions/9/").status_code == 404
    assert alice_web.get("/w/rank-desk/files/tools/sql.md?at=abc").status_code == 404


def test_each_granted_tool_says_where_it_resolves_nearest_first(alice_web, account, desk, alice):
    write(
        account,
        desk,
        {
            "agents/ranker/agent.md": agent("ranker", "dataforseo, sql, web, nosuch"),
            "agents/ranker/tools/sql.md": "---\ntransport: script\nname: sql\n---\n```python\nprint(3)\n```\n",
        },
        author=alice,
    )
    tools = {t["name"]: (t["scope"], t["path"]) for t in alice_web.get("/w/rank-desk/").context["agents"][0]["tools"]}
    assert tools == {
        "dataforseo": ("library", "tools/dataforseo.md"),
        "sql": ("agent's own", "agents/ranker/tools/sql.md"),
        "web": ("gallery", "tools/web/tool.md"),
        "nosuch": ("missing", ""),
    }


def test_the_workspace_page_links_to_its_runs_triggers_and_notifications(alice_web, desk):
    page = alice_web.get("/w/rank-desk/").content.decode()
    assert '<a href="/w/rank-desk/" class="active" aria-current="page">Desk</a>' in page
    assert 'href="/w/rank-desk/runs/"' in page
    assert '<a href="/w/rank-desk/triggers/" class="">Triggers</a>' in page
    assert 'href="/w/rank-desk/notifications/"' in page


SQL_V2 = "---\ntransport: script\nname: sql\n---\n```python\nprint(2)\n```\n"


def test_alice_edits_a_file_as_a_new_revision(alice_web, account, desk, alice):
    page = alice_web.get("/w/rank-desk/files/tools/sql.md").content.decode()
    assert 'action="/w/rank-desk/edit/tools/sql.md"' in page
    response = alice_web.post(
        "/w/rank-desk/edit/tools/sql.md", {"content": SQL_V2.replace("\n", "\r\n"), "message": "print two"}, follow=True
    )
    assert "Saved tools/sql.md as revision #2." in response.content.decode()
    head = files_at(account, desk)["tools/sql.md"]
    assert (head.content, head.changeset.kind, head.changeset.message) == (SQL_V2, "edit", "print two")


def test_an_edit_the_contract_refuses_writes_nothing_and_keeps_the_text(alice_web, account, desk):
    response = alice_web.post(
        "/w/rank-desk/edit/agents/ranker/agent.md",
        {"content": "---\nname: [unclosed\n---\nbody\n", "message": ""},
        follow=True,
    )
    page = html.unescape(response.content.decode())
    assert "Nothing was written: agents/ranker/agent.md" in page
    assert "name: [unclosed" in page
    assert files_at(account, desk)["agents/ranker/agent.md"].number == 1


def test_alice_rolls_a_file_back_to_an_older_revision(alice_web, account, desk, alice):
    write(account, desk, {"tools/sql.md": SQL_V2}, author=alice)
    page = alice_web.get("/w/rank-desk/files/tools/sql.md").content.decode()
    assert "Roll back to #1" in page
    response = alice_web.post("/w/rank-desk/rollback/tools/sql.md", {"to": "1"}, follow=True)
    assert "Rolled tools/sql.md back to revision #1, as revision #3." in response.content.decode()
    head = files_at(account, desk)["tools/sql.md"]
    assert "print(1)" in head.content and head.changeset.kind == "rollback"


def test_bob_sees_no_edit_or_rollback_and_cannot_post_them(bob_web, account, desk, alice):
    write(account, desk, {"tools/sql.md": SQL_V2}, author=alice)
    page = bob_web.get("/w/rank-desk/files/tools/sql.md").content.decode()
    assert "/edit/" not in page and "/rollback/" not in page
    assert bob_web.post("/w/rank-desk/edit/tools/sql.md", {"content": "x"}).status_code == 403
    assert bob_web.post("/w/rank-desk/rollback/tools/sql.md", {"to": "1"}).status_code == 403
    assert files_at(account, desk)["tools/sql.md"].content == SQL_V2


def test_charlie_cannot_edit_or_roll_back_alices_files(charlie_web, account, desk):
    assert charlie_web.post("/w/rank-desk/edit/tools/sql.md", {"content": "x"}).status_code == 404
    assert charlie_web.post("/w/rank-desk/rollback/tools/sql.md", {"to": "1"}).status_code == 404
    assert files_at(account, desk)["tools/sql.md"].number == 1
