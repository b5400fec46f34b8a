"""Names: odd characters, duplicates, a name that differs from its path."""

from .support import lines


def test_odd_characters_in_a_name_are_refused_with_a_suggestion():
    assert lines(
        {
            "agents/my agent.md": "---\n---\n",
            "tools/t.md": "---\nname: send.mail\ntransport: http\nbase: https://x.example\n---\n",
        },
        code="names.characters",
    ) == [
        "agents/my agent.md: error: the agent name \"my agent\" has characters foldrun does not accept in a name; use letters, digits, '-' and '_', at most 64, starting with a letter or digit (such as my-agent).",
        "tools/t.md:2: error: the tool name \"send.mail\" has characters foldrun does not accept in a name; use letters, digits, '-' and '_', at most 64, starting with a letter or digit (such as send-mail).",
    ]


def test_two_agents_with_one_name_are_refused():
    assert lines({"agents/a.md": "---\n---\n", "agents/a/agent.md": "---\n---\n"}, code="names.duplicate") == [
        "agents/a/agent.md: error: the agent name a is also used by agents/a.md; two agents in this workspace cannot share a name."
    ]


def test_two_tools_with_one_name_in_an_agents_folder_are_refused():
    tool = "---\ntransport: http\nbase: https://x.example\n---\n"
    assert lines({"agents/a/tools/crm.md": tool, "agents/a/tools/crm/tool.md": tool}, code="names.duplicate") == [
        "agents/a/tools/crm/tool.md: error: the tool name crm is also used by agents/a/tools/crm.md; two tools in agents/a/ cannot share a name."
    ]


def test_a_tool_of_the_agent_and_one_of_the_workspace_may_share_a_name():
    tool = "---\ntransport: http\nbase: https://x.example\n---\n"
    assert lines({"agents/a/tools/crm.md": tool, "tools/crm.md": tool}, code="names.duplicate") == []


def test_a_skill_in_both_skills_and_agents_skills_is_a_warning():
    skill = "---\nname: tone\ndescription: d\n---\n"
    assert lines({"skills/tone/SKILL.md": skill, ".agents/skills/tone/SKILL.md": skill}, code="names.duplicate") == [
        ".agents/skills/tone/SKILL.md:2: warning: the skill name tone is also used by skills/tone/SKILL.md, which wins; rename one of them or remove the copy."
    ]


def test_a_name_that_differs_from_the_path_is_a_warning():
    assert lines({"agents/writer/agent.md": "---\nname: author\n---\n"}, code="names.mismatch") == [
        "agents/writer/agent.md:2: warning: name: author differs from the agent's path name writer; foldrun knows it as author, so rename one to match."
    ]
