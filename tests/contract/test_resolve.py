"""Nearest wins: the agent's own, the workspace's, the library's, the shelf's."""

from foldrun.contract import Desk
from foldrun.contract.resolve import (
    agent_skills,
    effective_limits,
    granted_tools,
    resolve_skill,
    resolve_tool,
    step_secrets,
)
from foldrun.contract.model import find_flow

TOOL = "---\ntransport: http\nname: crm\nbase: https://{where}.example.com\n---\n"
SKILL = "---\nname: {name}\ndescription: {where}\n---\n"


def _desk(**extra):
    return Desk(
        files={
            "agents/sales/agent.md": "---\nname: sales\ntools: [crm, read, web, mailer, nothing]\nsecrets: [CRM_KEY]\nlimits: {crm: 5, web.search: 7}\nmcpServers: {linear: {url: 'https://mcp.linear.app/sse', headers: {Authorization: 'Bearer ${LINEAR_TOKEN}'}}}\n---\n",
            "agents/sales/tools/crm.md": TOOL.format(where="own"),
            "agents/other.md": "---\ntools: [crm]\n---\n",
            "tools/crm.md": TOOL.format(where="workspace"),
            "skills/pacing/SKILL.md": SKILL.format(name="pacing", where="workspace"),
            ".agents/skills/tone/SKILL.md": SKILL.format(name="tone", where="cross-client"),
            "agents/sales/skills/pacing/SKILL.md": SKILL.format(name="pacing", where="own"),
            "AGENTS.md": "---\nlimits: {calls: 300, web.search: 20, desk-email: 4}\n---\n",
            **extra,
        },
        library={
            "tools/crm.md": TOOL.format(where="library"),
            "tools/mailer/tool.md": "---\ntransport: script\nname: mailer\nrun: send.py\nsecrets: [RESEND_API_KEY, CRM_KEY]\n---\n",
            "tools/mailer/send.py": "print(1)\n",
            "skills/legal/SKILL.md": SKILL.format(name="legal", where="library"),
            "AGENTS.md": "---\nlimits: {calls: 100, read: 50}\n---\n",
        },
    )


def test_the_agents_own_tool_beats_the_workspaces_which_beats_the_librarys():
    desk = _desk()
    own, workspace = resolve_tool(desk, "sales", "crm"), resolve_tool(desk, "other", "crm")
    assert (own.scope, own.path, own.model.base) == ("agent", "agents/sales/tools/crm.md", "https://own.example.com")
    assert (workspace.scope, workspace.model.base) == ("workspace", "https://workspace.example.com")
    assert resolve_tool(Desk({}, library=desk.library), None, "crm").scope == "library"


def test_web_resolves_in_every_account_even_with_an_empty_shelf():
    found = resolve_tool(Desk({}), "anyone", "web")
    assert (found.scope, found.path, found.model.name, found.model.problems) == (
        "gallery",
        "tools/web/tool.md",
        "web",
        [],
    )


def test_the_shelfs_own_copy_of_web_is_used_when_there_is_one():
    found = resolve_tool(
        Desk(
            {},
            gallery={
                "tools/web/tool.md": "---\nname: web\ntransport: builtin\ngallery: true\ndescription: shelf\n---\n"
            },
        ),
        "a",
        "web",
    )
    assert (found.scope, found.model.description) == ("gallery", "shelf")


def test_a_dash_and_an_underscore_name_the_same_tool():
    desk = Desk({"tools/desk-email.md": "---\ntransport: http\nbase: https://x.example\n---\n"})
    assert resolve_tool(desk, None, "desk_email").path == "tools/desk-email.md"


def test_granted_tools_say_what_each_grant_turned_out_to_be():
    grants = granted_tools(_desk(), "sales")
    assert [(g.name, g.kind, g.resolved.scope if g.resolved else None) for g in grants] == [
        ("crm", "tool", "agent"),
        ("read", "builtin", None),
        ("web", "tool", "gallery"),
        ("mailer", "tool", "library"),
        ("nothing", "missing", None),
        ("linear", "mcp", None),
    ]


def test_skills_are_found_nearest_first_including_agents_skills_and_the_library():
    desk = _desk()
    assert resolve_skill(desk, "sales", "pacing").model.description == "own"
    assert resolve_skill(desk, "other", "pacing").model.description == "workspace"
    assert [(r.model.name, r.scope) for r in agent_skills(desk, "sales")] == [
        ("legal", "library"),
        ("pacing", "agent"),
        ("tone", "workspace"),
    ]


def test_an_agent_that_lists_skills_carries_only_those():
    desk = Desk(
        {
            "agents/a.md": "---\nskills: [tone]\n---\n",
            "skills/tone/SKILL.md": SKILL.format(name="tone", where="w"),
            "skills/x/SKILL.md": SKILL.format(name="x", where="w"),
        }
    )
    assert [r.model.name for r in agent_skills(desk, "a")] == ["tone"]


def test_limits_merge_nearest_wins_per_key():
    desk = _desk(**{"flows/f.md": "---\n---\n1. [[sales]] — go\n   limits: {web.search: 2}\n"})
    step = find_flow(desk, "f").steps[0]
    assert effective_limits(desk, "sales") == {"calls": 300, "read": 50, "web.search": 7, "desk_email": 4, "crm": 5}
    assert effective_limits(desk, "sales", step)["web.search"] == 2


def test_a_step_receives_each_secret_once_with_where_it_was_declared():
    assert step_secrets(_desk(), "sales") == {
        "CRM_KEY": "agent",
        "RESEND_API_KEY": "tool mailer",
        "LINEAR_TOKEN": "tool linear",
    }


def test_an_agent_reads_its_own_knowledge_then_the_workspaces_then_the_librarys():
    from foldrun.contract.resolve import visible_concepts

    concept = "---\ntype: Reference\ntitle: {}\ndescription: d\n---\n"
    desk = Desk(
        {
            "agents/a/knowledge/prices.md": concept.format("own prices"),
            "knowledge/prices.md": concept.format("desk prices"),
            "knowledge/terms.md": concept.format("terms"),
            "knowledge/index.md": "generated",
        },
        library={"knowledge/style.md": concept.format("style"), "knowledge/terms.md": concept.format("account terms")},
    )
    seen = visible_concepts(desk, "a", "knowledge")
    assert {k: (r.scope, r.model.title) for k, r in seen.items()} == {
        "prices.md": ("agent", "own prices"),
        "terms.md": ("workspace", "terms"),
        "style.md": ("library", "style"),
    }


def test_an_agent_renamed_by_its_name_key_still_owns_its_folder():
    desk = Desk(
        {
            "agents/writer/agent.md": "---\nname: author\ntools: [crm]\n---\n",
            "agents/writer/tools/crm.md": TOOL.format(where="own"),
        }
    )
    assert [(g.name, g.kind, g.resolved.scope) for g in granted_tools(desk, "author")] == [("crm", "tool", "agent")]
