"""Issue 2, item 4: the file contract is pure Python (no Django), and every
finding is an error or a warning with a file, a line where there is one, and
one sentence. Each rule the issue names has its own test in tests/contract/."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from foldrun.contract import Desk, check

from .test_check_offline_and_deploy_on_the_server_say_the_same_sentences import BAD_DESK, UNGUARDED_DESK

ROOT = Path(__file__).resolve().parents[2]


def test_the_contract_checks_a_desk_without_importing_django():
    script = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('django', 'rest_framework', 'celery'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from foldrun.contract import Desk, check\n"
        "found = check(Desk.from_folder('foldrun/demo/rank-desk'), mode='deploy')\n"
        "print(len([f for f in found if f.level == 'error']), 'django' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "False"]


def test_every_finding_is_a_level_a_file_a_line_and_one_sentence():
    found = check(Desk(files=BAD_DESK), mode="check") + check(Desk(files=UNGUARDED_DESK), mode="check")
    assert len(found) == 12
    bad = [
        f.format()
        for f in found
        if f.level not in ("error", "warning")
        or f.file not in {**BAD_DESK, **UNGUARDED_DESK}
        or not (f.line is None or f.line >= 1)
        or "\n" in f.message
        or not f.message.rstrip().endswith((".", ")"))
    ]
    assert bad == []


def test_a_finding_prints_as_file_line_level_and_sentence():
    found = [f for f in check(Desk(files=BAD_DESK), mode="check") if f.file == "flows/weekly.md"]
    assert [f.format() for f in found] == [
        "flows/weekly.md:4: error: step 1 names [[nobody]], which is not an agent in this workspace; add "
        "agents/nobody/agent.md or fix the name."
    ]
    assert found[0].to_dict()["file"] == "flows/weekly.md"


# Finding codes the contract can emit that no test in tests/contract produced
# (found by recording every Finding made while that suite ran).
def lines(files: dict[str, str]) -> list[str]:
    return [f.format() for f in check(Desk(files=files), mode="check")]


AGENT_WITH = "---\nname: a\ndescription: d.\ntools: [read]\nprovider: {provider}\n---\nx\n"


def test_a_key_header_that_is_neither_x_api_key_nor_bearer_is_refused():
    block = "{name: anthropic, model: claude-sonnet-4-5, key: '${ANTHROPIC_API_KEY}', key_header: cookie}"
    assert lines({"agents/a/agent.md": AGENT_WITH.format(provider=block)}) == [
        "agents/a/agent.md:5: error: provider.key_header must be x-api-key or bearer."
    ]


def test_a_model_that_is_not_text_is_refused():
    assert lines({"agents/a/agent.md": AGENT_WITH.format(provider="{name: anthropic, model: 5}")}) == [
        "agents/a/agent.md:5: error: provider.model must be a model id as text, e.g. claude-sonnet-4-5."
    ]


def test_an_identity_key_that_does_not_exist_names_the_closest_and_the_keys():
    agent = (
        "---\nname: a\ndescription: d.\ntools: [web]\nweb:\n  browse:\n    engine: chromium\n    identities:\n"
        "      au: {locale: en-AU, locle: en-AU}\n---\nx\n"
    )
    assert lines({"agents/a/agent.md": agent}) == [
        "agents/a/agent.md:9: error: web.browse.identities.au.locle is not an identity key; did you mean locale? An "
        "identity takes engine, browser, device, locale, timezone, user_agent, proxy, headers, geolocation, "
        "color_scheme, block, cookies, cookie_domain."
    ]


MCP_TOOL = "---\ntransport: mcp\nname: notes\ndescription: Notes.\nurl: ftp://notes.example.com\n---\n"
MCP_DESK = {"agents/a/agent.md": "---\nname: a\ndescription: d.\ntools: [notes]\n---\nx\n", "tools/notes.md": MCP_TOOL}


def test_an_mcp_url_that_is_not_http_is_refused():
    assert [line.split(": ", 1)[1] for line in lines(MCP_DESK)] == [
        "error: this mcp tool has url: that is not an http(s) URL."
    ]


def test_an_mcp_url_that_is_not_http_is_reported_at_its_line():
    assert lines(MCP_DESK)[0].startswith("tools/notes.md:5: error:")
