"""Nearest wins: desks, the Library page's blast radius, the workspace page."""

from __future__ import annotations

from accounts.models import Workspace
from foldrun.contract import Desk
from library.services import desk_for_workspace, library_overview, workspace_overview

from .conftest import files, push

SQL = "---\nname: sql\ntransport: http\nbase: https://example.com\n---\n"
SKILL = "---\nname: pacing-check\ndescription: Check pacing.\n---\nRun it.\n"


def agent(name: str, tools: str) -> str:
    return f"---\nname: {name}\ndescription: {name}.\ntools: [{tools}]\n---\nWork.\n"


def test_a_workspace_desk_holds_its_files_the_library_and_the_shelf(alice_api, desk):
    push(alice_api, "library", files=files(**{"tools/sql.md": SQL}))
    push(
        alice_api,
        "workspaces/rank-desk",
        files=files(**{"flows/weekly.md": "---\nname: weekly\n---\n1. [[researcher]] — go\n"}),
    )
    current = desk_for_workspace(desk)
    assert isinstance(current, Desk)
    assert "flows/weekly.md" in current.files
    assert current.library == {"tools/sql.md": SQL}
    assert "tools/web/tool.md" in current.gallery
    assert "flows/weekly.md" not in desk_for_workspace(desk, at=1).files


def test_the_blast_radius_names_who_grants_a_library_tool_and_what_overrides_it(alice_api, account, workspace):
    other = Workspace.objects.create(account=account, name="ops-desk")
    push(alice_api, "library", files=files(**{"tools/sql.md": SQL, "skills/pacing-check/SKILL.md": SKILL}))
    push(
        alice_api,
        "workspaces/rank-desk",
        files=files(
            **{
                "agents/ranker/agent.md": agent("ranker", "sql, read"),
                "agents/writer/agent.md": agent("writer", "sql"),
                "agents/writer/tools/sql.md": SQL.replace("example.com", "writer.example.com"),
                "agents/reporter/agent.md": agent("reporter", "read"),
            }
        ),
    )
    push(
        alice_api,
        "workspaces/ops-desk",
        files=files(
            **{
                "agents/ops/agent.md": agent("ops", "sql"),
                "tools/sql.md": SQL.replace("example.com", "ops.example.com"),
            }
        ),
    )
    entries = {e["path"]: e for e in library_overview(account)}
    sql = entries["tools/sql.md"]
    assert sql["scope"] == "library"
    assert sql["kind"] == "tool"
    assert sql["granted_by"] == [{"workspace": "rank-desk", "agent": "ranker"}]
    assert sql["overridden_by"] == [
        {"workspace": "ops-desk", "agent": None, "path": "tools/sql.md"},
        {"workspace": "rank-desk", "agent": "writer", "path": "agents/writer/tools/sql.md"},
    ]
    skill = entries["skills/pacing-check/SKILL.md"]
    assert {"workspace": "rank-desk", "agent": "reporter"} in skill["granted_by"]
    assert len(skill["granted_by"]) == 4
    assert other.name == "ops-desk"


def test_the_blast_radius_covers_gallery_tools_and_the_library_copy_shadows_them(alice_api, account, workspace):
    push(alice_api, "workspaces/rank-desk", files=files(**{"agents/reader/agent.md": agent("reader", "web, read")}))
    web = next(e for e in library_overview(account) if e["path"] == "tools/web/tool.md" and e["scope"] == "gallery")
    assert web["granted_by"] == [{"workspace": "rank-desk", "agent": "reader"}]
    alice_api.post("/api/library/gallery/web/install", {}, format="json")
    entries = [e for e in library_overview(account) if e["path"] == "tools/web/tool.md"]
    library_copy = next(e for e in entries if e["scope"] == "library")
    shelf = next(e for e in entries if e["scope"] == "gallery")
    assert library_copy["gallery"] == "gallery · current"
    assert library_copy["granted_by"] == [{"workspace": "rank-desk", "agent": "reader"}]
    assert shelf["granted_by"] == []
    assert shelf["overridden_by"][0] == {"workspace": None, "agent": None, "path": "tools/web/tool.md"}


def test_the_library_overview_api(alice_api, bob_api, charlie_api, account, workspace):
    push(alice_api, "library", files=files(**{"tools/sql.md": SQL}))
    paths = [e["path"] for e in alice_api.get("/api/library").json()["results"]]
    assert "tools/sql.md" in paths
    assert bob_api.get("/api/library").status_code == 200
    assert "tools/sql.md" not in [e["path"] for e in charlie_api.get("/api/library").json()["results"]]


def test_the_workspace_overview_lists_agents_flows_files_and_revisions(alice_api, desk):
    push(
        alice_api,
        "workspaces/rank-desk",
        message="flow",
        files=files(
            **{
                "flows/weekly.md": '---\nname: weekly\nschedule: "0 7 * * MON"\n---\n1. [[researcher]] — go\n',
            }
        ),
    )
    overview = workspace_overview(desk)
    assert overview["workspace"]["name"] == "rank-desk"
    assert overview["head"] == 2
    assert overview["agents"] == [
        {
            "name": "researcher",
            "path": "agents/researcher/agent.md",
            "description": "Finds pages.",
            "tools": ["web", "read"],
        }
    ]
    assert overview["flows"] == [
        {"name": "weekly", "path": "flows/weekly.md", "schedule": "0 7 * * MON", "description": None}
    ]
    assert [r["message"] for r in overview["revisions"]] == ["flow", "first"]
    assert "knowledge/index.md" in [f["path"] for f in overview["files"]]


def test_an_agents_own_skill_overrides_the_librarys_for_that_agent_only(alice_api, account, workspace):
    push(alice_api, "library", files=files(**{"skills/pacing-check/SKILL.md": SKILL}))
    push(
        alice_api,
        "workspaces/rank-desk",
        files=files(
            **{
                "agents/ranker/agent.md": agent("ranker", "read"),
                "agents/writer/agent.md": agent("writer", "read"),
                "agents/writer/skills/pacing-check/SKILL.md": SKILL.replace("Run it.", "Run it my way."),
            }
        ),
    )
    skill = next(e for e in library_overview(account) if e["path"] == "skills/pacing-check/SKILL.md")
    assert skill["granted_by"] == [{"workspace": "rank-desk", "agent": "ranker"}]
    assert skill["overridden_by"] == [
        {"workspace": "rank-desk", "agent": "writer", "path": "agents/writer/skills/pacing-check/SKILL.md"}
    ]


def test_library_knowledge_is_read_by_every_agent_unless_a_nearer_copy_exists(alice_api, account, workspace):
    concept = "---\ntype: Reference\ntitle: Prices\ndescription: The price list.\n---\n$5\n"
    push(alice_api, "library", files=files(**{"knowledge/prices.md": concept}))
    push(
        alice_api,
        "workspaces/rank-desk",
        files=files(
            **{
                "agents/ranker/agent.md": agent("ranker", "read"),
                "agents/writer/agent.md": agent("writer", "read"),
                "agents/writer/knowledge/prices.md": concept,
            }
        ),
    )
    prices = next(e for e in library_overview(account) if e["path"] == "knowledge/prices.md")
    assert prices["kind"] == "file"
    assert prices["granted_by"] == [{"workspace": "rank-desk", "agent": "ranker"}]
    assert prices["overridden_by"] == [
        {"workspace": "rank-desk", "agent": "writer", "path": "agents/writer/knowledge/prices.md"}
    ]
