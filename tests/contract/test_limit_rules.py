"""spec/tools.md, Limits: keys that name nothing, values, tools not granted —
in AGENTS.md, an agent and a flow step."""

from .support import lines

CRM = "---\ntransport: http\nname: crm\nbase: https://crm.example.com\n---\n"
KEYS = (
    "calls, web, web.<action> (search fetch browse crawl map extract answer monitor), read, write, code, search, history, ask, desks, "
    "the SDK names Read Glob Grep Write Edit Bash"
)


def agent(limits: str, tools: str = "[web, crm, desk-email, Bash]") -> dict[str, str]:
    return {
        "agents/a.md": f"---\ntools: {tools}\nlimits:\n{limits}---\n",
        "tools/crm.md": CRM,
        "tools/desk-email.md": "---\ntransport: http\nbase: https://mail.example.com\n---\n",
    }


def test_every_kind_of_key_that_works_is_accepted():
    limits = "  web: 150\n  web.search: 40\n  web.monitor: 2\n  crm: 20\n  desk_email: 3\n  calls: 300\n  code: 4\n  Bash: 5\n"
    assert lines(agent(limits)) == []


def test_a_key_that_names_nothing_lists_the_keys_that_would_work():
    assert lines(agent("  web.serch: 4\n")) == [
        f"agents/a.md:4: error: limits: web.serch names nothing foldrun counts (did you mean web.search?); the keys that work are {KEYS}, and the granted tools (web, crm, desk-email)."
    ]


def test_values_must_be_whole_numbers_above_zero():
    assert lines(agent("  calls: 0\n  crm: 2.5\n  web: '10'\n  code: true\n", "[web, crm, code]")) == [
        "agents/a.md:4: error: limits: calls is 0, not a whole number above zero; write a whole number, 1 or more — to withhold a tool, leave it out of tools:.",
        "agents/a.md:5: error: limits: crm is 2.5, not a whole number above zero; write a whole number, 1 or more — to withhold a tool, leave it out of tools:.",
        "agents/a.md:6: error: limits: web is '10', not a whole number above zero; write a whole number, 1 or more — to withhold a tool, leave it out of tools:.",
        "agents/a.md:7: error: limits: code is True, not a whole number above zero; write a whole number, 1 or more — to withhold a tool, leave it out of tools:.",
    ]


def test_a_limit_for_a_tool_the_agent_does_not_grant_is_a_warning():
    assert lines(agent("  crm: 3\n  web.fetch: 5\n  Grep: 2\n", "[read]")) == [
        "agents/a.md:4: warning: limits: crm limits crm, which agent a does not grant; add crm to its tools: or drop the limit.",
        "agents/a.md:5: warning: limits: web.fetch limits web, which agent a does not grant; add web to its tools: or drop the limit.",
    ]


def test_agents_md_limits_are_checked_for_keys_and_values():
    files = {"AGENTS.md": "---\nlimits: {calls: 300, crm: 0, callz: 2}\n---\n", "tools/crm.md": CRM}
    assert lines(files) == [
        "AGENTS.md:2: error: limits: callz names nothing foldrun counts (did you mean calls?); the keys that work are "
        + KEYS
        + ", and any tool's name.",
        "AGENTS.md:2: error: limits: crm is 0, not a whole number above zero; write a whole number, 1 or more — to withhold a tool, leave it out of tools:.",
    ]


def test_a_flow_steps_limits_are_checked_against_its_agent():
    files = {
        **agent("  crm: 3\n"),
        "flows/f.md": "---\n---\n1. [[a]] — Go.\n   limits: {web.search: 10, search: 2, crmm: 1}\n",
    }
    assert lines(files) == [
        "flows/f.md:4: error: step 1 ([[a]]) has limits: crmm names nothing foldrun counts (did you mean crm?); the keys that work are "
        + KEYS
        + ", and the granted tools (web, crm, desk-email).",
        "flows/f.md:4: warning: step 1 ([[a]]) has limits: search limits search, which agent a does not grant; add search to its tools: or drop the limit.",
    ]


def test_limits_that_are_not_a_mapping_are_refused():
    assert lines({"agents/a.md": "---\nlimits: 40\n---\n"}) == [
        "agents/a.md:2: error: limits: must be a mapping of keys to whole numbers, such as limits: {web.search: 40, calls: 300}."
    ]


def test_on_deploy_a_key_that_names_nothing_warns_and_a_bad_value_still_refuses():
    found = lines(agent("  callz: 3\n  calls: none\n"), mode="deploy")
    assert [line.split(": ", 2)[1] for line in found] == ["warning", "error"]
    assert (
        found[1]
        == "agents/a.md:5: error: limits: calls is 'none', not a whole number above zero; write a whole number, 1 or more — to withhold a tool, leave it out of tools:."
    )
