"""Agents: grants and skills that name nothing, their own keys."""

from .support import lines


def test_a_grant_that_names_nothing_gets_the_closest_names():
    files = {
        "agents/a.md": "---\ntools: [web, raed, emial, frobnicate]\n---\n",
        "tools/email.md": "---\ntransport: http\nbase: https://x.example\n---\n",
    }
    assert lines(files) == [
        "agents/a.md:2: error: tools: grants emial, which is not a built-in group, an MCP server or a tool in this agent's folder, the workspace, the account library or the gallery; did you mean email?",
        "agents/a.md:2: error: tools: grants frobnicate, which is not a built-in group, an MCP server or a tool in this agent's folder, the workspace, the account library or the gallery; add tools/frobnicate.md or fix the name.",
        "agents/a.md:2: error: tools: grants raed, which is not a built-in group, an MCP server or a tool in this agent's folder, the workspace, the account library or the gallery; did you mean read?",
    ]


def test_grants_resolve_to_built_ins_sdk_names_library_tools_and_inline_mcp_servers():
    files = {
        "agents/a.md": "---\ntools: [read, write, code, search, history, ask, desks, Bash, web, crm, linear]\nmcpServers: {linear: {url: 'https://mcp.linear.app/sse'}}\n---\n"
    }
    assert lines(files, library={"tools/crm.md": "---\ntransport: http\nbase: https://crm.example\n---\n"}) == []


def test_a_skill_the_agent_names_must_exist():
    files = {
        "agents/a/agent.md": "---\nskills: [pacing-chek, tone]\n---\n",
        "skills/pacing-check/SKILL.md": "---\nname: pacing-check\ndescription: d\n---\n",
        "agents/a/skills/tone/SKILL.md": "---\nname: tone\ndescription: d\n---\n",
    }
    assert lines(files) == [
        "agents/a/agent.md:2: error: skills: names pacing-chek, which is not a skill in this agent's folder, the workspace, .agents/skills/ or the account library; did you mean pacing-check?"
    ]


def test_agent_keys_of_the_wrong_shape_are_refused():
    files = {
        "agents/a.md": "---\ntools: {web: true}\ntimezone: Nowhere/City\nmcpServers:\n  both: {url: 'https://x.example', command: npx}\n  neither: {args: [x]}\n  odd: 3\n---\n"
    }
    assert lines(files) == [
        "agents/a.md:2: error: tools: must be a list of names, such as tools: [web, read].",
        "agents/a.md:3: error: timezone: Nowhere/City is not a time zone foldrun knows; use an IANA name such as Australia/Sydney.",
        "agents/a.md:5: error: mcpServers: both has both command: and url:; give command: (a local process) or url: (a remote endpoint), not both.",
        "agents/a.md:6: error: mcpServers: neither has neither command: nor url:; give command: (with args: and env:) for a local process or url: (with headers:) for a remote endpoint.",
        "agents/a.md:7: error: mcpServers: odd must be a mapping with command: or url:.",
    ]


def test_a_skill_needs_a_description_and_should_have_a_name():
    assert lines({"skills/tone/SKILL.md": "---\nlicense: MIT\n---\n"}) == [
        "skills/tone/SKILL.md:2: error: has no description:; a skill needs name: and description: — the description is all an agent sees until a task matches it.",
        "skills/tone/SKILL.md:2: warning: has no name:; add name: tone (the Agent Skills format wants the folder's name).",
    ]


def test_the_workspace_budget_is_one_window_and_an_amount():
    from foldrun.contract import Desk
    from foldrun.contract.model import agents_md_of

    assert agents_md_of(Desk({"AGENTS.md": "---\nbudget: {week: 12.5}\n---\n"})).budget_window == ("week", 12.5)
    assert lines({"AGENTS.md": "---\nbudget: 50\n---\n"}) == [
        "AGENTS.md:2: error: budget: must be the workspace's spend for one window, such as budget: {month: 50} — day, week or month, in USD."
    ]
