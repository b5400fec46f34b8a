"""Parsed models: what runs, deploy and the CLI read from the files."""

from datetime import timedelta

from foldrun.contract import Desk
from foldrun.contract.desk import AGENT, TOOL
from foldrun.contract.model import (
    Verify,
    agent_of,
    agents_md_of,
    concept_of,
    cron_problem,
    find_agent,
    find_flow,
    parse_duration,
    parse_steps,
    skill_of,
    tool_of,
)

FLOW = """---
name: weekly-rankings
schedule: "0 7 * * MON"
timezone: Australia/Sydney
inputs: {topic: building inspections}
sla: 2h
disable_after: 3
approve_within: 2d
approvers: [owner@example.com]
budget: 5.00
webhook: {signature: hmac, secret: INBOUND_KEY}
---
Some prose before the list is allowed.

1. [[researcher]] — Find pages about {{topic}}.
2. [[reader]] — Read this page and pull out what matters.
   each: lines
   max: 20
   retry: 2
   on-fail: continue
3. [[publisher]] ! — Publish the draft.
   verify: file outputs/receipt.json
4. [[checker]] — Check it.
   verify: reply ^(GOOD|BAD)
   limits: {web.search: 10}
   wait: event signed-off
5. [[asker]] — Ask first.
   ask: Shall I send it?
   limits:
     web.fetch: 3
     calls: 9
6. [[reporter]] — Summarise the week.
   Lead with GOOD, BAD, QUIET or BLOCKED.
"""


def _tool(files, path):
    desk = Desk(files)
    document = next(d for d in desk.of_kind(TOOL) if d.path == path)
    return tool_of(desk, document)


def test_a_flow_reads_its_frontmatter():
    flow = find_flow(Desk({"flows/weekly-rankings.md": FLOW}), "weekly-rankings")
    assert (flow.schedule, flow.timezone, flow.inputs) == (
        "0 7 * * MON",
        "Australia/Sydney",
        {"topic": "building inspections"},
    )
    assert (flow.sla, flow.disable_after, flow.approve_within) == (timedelta(hours=2), 3, timedelta(days=2))
    assert (flow.approvers, flow.budget, flow.webhook) == (
        ["owner@example.com"],
        5.0,
        {"signature": "hmac", "secret": "INBOUND_KEY"},
    )
    assert flow.problems == []


def test_a_flow_reads_every_step_and_option():
    steps = find_flow(Desk({"flows/weekly-rankings.md": FLOW}), "weekly-rankings").steps
    assert [(s.number, s.agent, s.gate) for s in steps] == [
        (1, "researcher", False),
        (2, "reader", False),
        (3, "publisher", True),
        (4, "checker", False),
        (5, "asker", False),
        (6, "reporter", False),
    ]
    assert steps[0].task == "Find pages about {{topic}}."
    assert steps[0].line == 15
    assert (steps[1].each, steps[1].max, steps[1].retry, steps[1].on_fail) == ("lines", 20, 2, "continue")
    assert steps[2].verify == Verify("file", "outputs/receipt.json")
    assert (steps[3].verify, steps[3].limits, steps[3].wait_event) == (
        Verify("reply", "^(GOOD|BAD)"),
        {"web.search": 10},
        "signed-off",
    )
    assert (steps[4].ask, steps[4].gated, steps[4].limits) == ("Shall I send it?", True, {"web.fetch": 3, "calls": 9})
    assert steps[5].task == "Summarise the week.\nLead with GOOD, BAD, QUIET or BLOCKED."
    assert (steps[0].retry, steps[0].on_fail, steps[0].each, steps[0].verify) == (0, "stop", None, None)


def test_a_default_approve_within_is_seven_days():
    flow = find_flow(Desk({"flows/f.md": "---\n---\n1. [[a]] — x\n"}), "f")
    assert flow.approve_within == timedelta(days=7)


def test_steps_accept_other_dashes_and_numbering_with_a_parenthesis():
    steps, problems = parse_steps("1) [[a]] - one\n2. [[b]]: two\n3. [[c]] – three\n4. [[d]]\n", 1, "flows/f.md")
    assert [(s.agent, s.task) for s in steps] == [("a", "one"), ("b", "two"), ("c", "three"), ("d", "")]
    assert problems == []


def test_durations_read_minutes_hours_days_and_weeks():
    assert [parse_duration(v) for v in ("30m", "2h", "2d", "1w", "2x", "0h", 3)] == [
        timedelta(minutes=30),
        timedelta(hours=2),
        timedelta(days=2),
        timedelta(weeks=1),
        None,
        None,
        None,
    ]


def test_cron_expressions_are_read_with_names_ranges_steps_and_macros():
    assert [cron_problem(v) for v in ("0 7 * * MON", "*/15 9-17 * JAN-MAR 1-5", "@daily", "0 0 1,15 * *")] == [None] * 4
    assert cron_problem("0 7 * *") == "it has 4 fields, not 5"
    assert cron_problem("61 * * * *") == "the minute field '61' has a value outside 0-59"


def test_an_agent_reads_every_key_in_either_spelling_of_its_path():
    text = """---
name: researcher
description: Finds and reads pages about a topic.
tools: [web, read, search, history]
secrets: [MEDIUM_COOKIES]
limits: {web.search: 40, calls: 300}
web: {search: exa, browse: {engine: chromium, locale: en-AU}}
provider: {name: anthropic, model: claude-sonnet-4-5}
mcpServers:
  linear: {url: "https://mcp.linear.app/sse", headers: {Authorization: "Bearer ${LINEAR_TOKEN}"}}
  files: {command: npx, args: [-y, server-files], env: {ROOT: /data}}
language: en-AU
region: au
timezone: Australia/Sydney
---
The prompt.
"""
    for path in ("agents/researcher/agent.md", "agents/researcher.md"):
        desk = Desk({path: text})
        agent = find_agent(desk, "researcher")
        assert (agent.name, agent.path, agent.description) == (
            "researcher",
            path,
            "Finds and reads pages about a topic.",
        )
        assert (agent.tools, agent.secrets, agent.limits) == (
            ["web", "read", "search", "history"],
            ["MEDIUM_COOKIES"],
            {"web.search": 40, "calls": 300},
        )
        assert agent.web == {"search": "exa", "browse": {"engine": "chromium", "locale": "en-AU"}}
        assert agent.provider == {"name": "anthropic", "model": "claude-sonnet-4-5"}
        assert (agent.language, agent.region, agent.timezone, agent.prompt) == (
            "en-AU",
            "au",
            "Australia/Sydney",
            "The prompt.",
        )
        assert agent.mcp_servers["linear"].url == "https://mcp.linear.app/sse"
        assert agent.mcp_servers["linear"].secret_names == ["LINEAR_TOKEN"]
        assert (
            agent.mcp_servers["files"].command,
            agent.mcp_servers["files"].args,
            agent.mcp_servers["files"].env,
        ) == ("npx", ["-y", "server-files"], {"ROOT": "/data"})
        assert agent.problems == []


def test_agents_md_reads_the_workspace_defaults():
    text = "---\nnotify: {url: https://example.com/hook}\nlimits: {calls: 300}\nweb: {search: brave}\nprovider: {name: anthropic}\nlanguage: en-AU\nregion: au\ntimezone: Australia/Sydney\nbudget: {month: 40}\n---\nBe precise.\n"
    defaults = agents_md_of(Desk({"AGENTS.md": text}))
    assert (defaults.notify, defaults.limits, defaults.web, defaults.provider) == (
        {"url": "https://example.com/hook"},
        {"calls": 300},
        {"search": "brave"},
        {"name": "anthropic"},
    )
    assert (defaults.language, defaults.region, defaults.timezone, defaults.budget, defaults.body) == (
        "en-AU",
        "au",
        "Australia/Sydney",
        {"month": 40},
        "Be precise.\n",
    )


def test_an_http_tool_reads_every_field():
    tool = _tool(
        {
            "tools/ads.md": """---
transport: http
name: google-ads
description: The Google Ads API.
base: https://googleads.googleapis.com/v18
methods: [GET, post]
headers:
  Authorization: Bearer ${GOOGLE_ADS_TOKEN}
query: {key: "${ADS_KEY}"}
timeout: 30
rate: 100/m
openapi: https://example.com/openapi.json
operations: [listCustomers, GET /customers]
---
"""
        },
        "tools/ads.md",
    )
    assert (tool.name, tool.transport, tool.base, tool.methods) == (
        "google-ads",
        "http",
        "https://googleads.googleapis.com/v18",
        ["GET", "POST"],
    )
    assert (tool.headers, tool.query, tool.timeout, tool.rate) == (
        {"Authorization": "Bearer ${GOOGLE_ADS_TOKEN}"},
        {"key": "${ADS_KEY}"},
        30.0,
        (100.0, 60),
    )
    assert (tool.openapi, tool.operations, tool.secret_names) == (
        "https://example.com/openapi.json",
        ["listCustomers", "GET /customers"],
        ["GOOGLE_ADS_TOKEN", "ADS_KEY"],
    )
    assert tool.problems == []


def test_a_folder_script_tool_reads_its_program_and_its_dependencies():
    files = {
        "tools/email/tool.md": "---\ntransport: script\nname: email\noutward: true\nrun: send.py\nsecrets: [RESEND_API_KEY, EMAIL_FROM]\nargs: {to: The address}\ntimeout: 30\ntest_mode: allow\nruntime: {packages: [pandas], npm: [left-pad]}\n---\n",
        "tools/email/send.py": "import httpx\n",
        "tools/email/requirements.txt": "httpx==0.28.1 \\\n    --hash=sha256:abc\n-r other.txt\nrich ; python_version < '3.11'\n",
        "tools/email/package.json": '{"dependencies": {"@scope/kit": "1.0.0", "got": "^14"}}',
    }
    tool = _tool(files, "tools/email/tool.md")
    assert (tool.transport, tool.outward, tool.folder, tool.program_path, tool.program) == (
        "script",
        True,
        "tools/email",
        "tools/email/send.py",
        "import httpx\n",
    )
    assert (tool.interpreter, tool.args, tool.secrets, tool.secrets_mode, tool.test_mode, tool.timeout) == (
        "python3",
        {"to": "The address"},
        ["RESEND_API_KEY", "EMAIL_FROM"],
        "materialised",
        "allow",
        30.0,
    )
    assert tool.packages == ["pandas", "httpx==0.28.1"]
    assert tool.npm == ["left-pad", "@scope/kit", "got"]
    assert tool.requirements.options == [
        (1, "--hash (pins are installed without hash checking)"),
        (3, "-r (another requirements file)"),
    ]
    assert tool.requirements.refused == [(4, "has an environment marker")]


def test_a_single_file_script_tool_takes_its_program_from_the_fenced_block():
    tool = _tool(
        {
            "tools/sql.md": "---\nname: sql\nsecrets: proxied\ntestMode: allow\nruntime:\n  packages: [duckdb]\n---\nRuns SQL.\n```python\nimport duckdb\n```\n"
        },
        "tools/sql.md",
    )
    assert (tool.transport, tool.program, tool.program_path, tool.program_line) == (
        "script",
        "import duckdb\n",
        None,
        10,
    )
    assert (tool.interpreter, tool.secrets_mode, tool.test_mode, tool.packages) == (
        "python3",
        "proxied",
        "allow",
        ["duckdb"],
    )


def test_an_mcp_tool_reads_a_process_or_an_endpoint():
    local = _tool(
        {"tools/files.md": "---\ntransport: mcp\ncommand: npx\nargs: [-y, srv]\nenv: {TOKEN: '${FILES_TOKEN}'}\n---\n"},
        "tools/files.md",
    )
    remote = _tool(
        {
            "tools/linear.md": "---\ntransport: mcp\nname: linear\nurl: https://mcp.linear.app/sse\nheaders:\n  Authorization: Bearer ${LINEAR_TOKEN}\n---\n"
        },
        "tools/linear.md",
    )
    assert (local.mcp.kind, local.mcp.command, local.mcp.args, local.secret_names) == (
        "stdio",
        "npx",
        ["-y", "srv"],
        ["FILES_TOKEN"],
    )
    assert (remote.mcp.kind, remote.mcp.url, remote.mcp.headers) == (
        "http",
        "https://mcp.linear.app/sse",
        {"Authorization": "Bearer ${LINEAR_TOKEN}"},
    )


def test_skills_and_concepts_read_their_frontmatter():
    desk = Desk(
        {
            "skills/pacing-check/SKILL.md": "---\nname: pacing-check\ndescription: Check pacing.\n---\nRun it.\n",
            "knowledge/keywords.md": "---\ntype: Reference\ntitle: Target keywords\ndescription: The queries.\n---\n| a |\n",
        }
    )
    skill = skill_of(desk, desk.of_kind("skill")[0])
    concept = concept_of(desk, desk.of_kind("concept")[0])
    assert (skill.name, skill.description, skill.folder) == ("pacing-check", "Check pacing.", "skills/pacing-check")
    assert (concept.type, concept.title, concept.description) == ("Reference", "Target keywords", "The queries.")


def test_models_are_parsed_once_per_desk():
    desk = Desk({"agents/a.md": "---\ntools: [read]\n---\n"})
    document = desk.of_kind(AGENT)[0]
    assert agent_of(desk, document) is agent_of(desk, document)
