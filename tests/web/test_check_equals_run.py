"""check = run: `foldrun check` (and the deploy, which runs it) and the run read one table of what each
action and provider can do, and refuse the same names in the same words."""

from __future__ import annotations

import json

import pytest

from foldrun.contract import Desk, check
from foldrun.contract import web_capabilities as C
from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from foldrun.web import WebToolError
from foldrun.web.providers import REGISTRY
from tests.fakes.providers import FakeProvider
from tests.runs.engine_helpers import SECRETS, agent_md, desk

AGENT = "agents/researcher/agent.md"
CALLS = {
    "search": {"query": "x"},
    "fetch": {"url": "https://example.com/"},
    "crawl": {"url": "https://example.com/"},
    "map": {"url": "https://example.com/"},
    "extract": {"url": "https://example.com/", "prompt": "x"},
    "answer": {"query": "x"},
    "monitor": {"url": "https://example.com/"},
}


def _check_messages(web_yaml: str, extra: str = "") -> list[str]:
    text = f"---\nname: researcher\ntools: [web]\n{extra}web:\n{web_yaml}\n---\nPrompt.\n"
    return [f.message for f in check(Desk(files={AGENT: text}), mode="check") if f.code.startswith("web.")]


def _run_refusal(make_tool, block: dict, action: str, **options) -> str:
    tool = make_tool(block, secret=lambda name: "k" * 12, **options)
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": action, **CALLS[action]})
    return str(caught.value)


def test_every_provider_the_table_names_has_an_adapter_and_no_adapter_is_outside_the_table():
    table = {(action, name) for action, by in C.CAN.items() if action != "browse" for name in by}
    assert set(REGISTRY) == table


@pytest.mark.parametrize(
    "action,name",
    [
        ("crawl", "jina"),
        ("monitor", "exa"),
        ("extract", "tavily"),
        ("map", "zyte"),
        ("answer", "serper"),
        ("fetch", "jinna"),
        ("search", "deepseek"),
        ("search", "bing"),
        ("search", "google"),
        ("fetch", "apify"),
    ],
)
def test_a_name_check_refuses_the_run_refuses_in_the_same_words(make_tool, action, name):
    (from_check,) = _check_messages(f"  {action}: {name}")
    from_run = _run_refusal(make_tool, {action: name}, action)
    assert from_check == from_run + "."


def test_a_model_providers_own_search_is_refused_alike_when_another_provider_answers(make_tool):
    (from_check,) = _check_messages("  search: kimi", extra="provider: {name: anthropic}\n")
    from_run = _run_refusal(make_tool, {"search": "kimi"}, "search", model_provider="anthropic")
    assert from_check == from_run + "."
    assert from_run.startswith("web.search: kimi's search runs on Moonshot, $web_search, inside its own tool loop")


def test_every_pair_in_the_table_passes_check():
    for action, by in C.CAN.items():
        if action == "browse":
            continue
        for name, can in by.items():
            extra = f"provider: {{name: {name}}}\n" if can["kind"] == "model" else ""
            assert _check_messages(f"  {action}: {name}", extra=extra) == [], (action, name)


def test_a_date_filter_to_a_provider_that_cannot_is_refused_with_the_tables_reason(make_tool):
    for name in ("parallel", "jina", "dataforseo"):
        tool = make_tool({"search": name}, secret=lambda n: "k" * 12)
        with pytest.raises(WebToolError) as caught:
            tool.call({"action": "search", "query": "x", "time_range": "week"})
        assert str(caught.value) == (
            f"{name} cannot filter by date, so time_range=week is refused rather than "
            f"answered for every date; search without it"
        )


def test_the_deploy_refuses_what_check_refuses_in_the_same_words(make_tool):
    text = "---\nname: researcher\ntools: [web]\nweb:\n  crawl: jina\n---\nPrompt.\n"
    deploy = [f.message for f in check(Desk(files={AGENT: text}), mode="deploy") if f.code.startswith("web.")]
    assert deploy == _check_messages("  crawl: jina") == [_run_refusal(make_tool, {"crawl": "jina"}, "crawl") + "."]


@pytest.mark.parametrize(
    "block_yaml,block",
    [
        ("  browse:\n    engine: lightpanda\n    device: Pixel 7", {"engine": "lightpanda", "device": "Pixel 7"}),
        ("  browse:\n    engine: obscura\n    block: image", {"engine": "obscura", "block": "image"}),
        ("  browse:\n    engine: chrome\n    browser: firefox", {"engine": "chrome", "browser": "firefox"}),
        (
            "  browse:\n    engine: lightpanda\n    identities:\n      phone: {device: Pixel 7}",
            {"engine": "lightpanda", "identities": {"phone": {"device": "Pixel 7"}}},
        ),
    ],
)
def test_a_browse_block_check_refuses_the_call_refuses_in_the_same_words(make_tool, block_yaml, block):
    (from_check,) = _check_messages(block_yaml)
    tool = make_tool({"browse": block})
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {
                "action": "browse",
                "url": "https://example.com/",
                **({"identity": "phone"} if "identities" in block else {}),
            }
        )
    assert from_check == str(caught.value) + "."


def test_a_call_asking_its_engine_for_what_the_table_marks_is_refused_from_the_table(make_tool):
    tool = make_tool({"browse": {"engine": "lightpanda"}})
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": "https://example.com/", "mode": "screenshot"})
    assert str(caught.value) == (
        "browse: screenshot needs a browser that renders; lightpanda reads and drives "
        "pages without drawing them — use engine chrome"
    )  # mode= is the call's own
    with pytest.raises(WebToolError) as caught:
        make_tool().call(
            {"action": "browse", "url": "https://example.com/", "browser": "firefox", "actions": [{"pdf": "page"}]}
        )
    assert str(caught.value) == (
        "browse: pdf needs Chromium's PDF printer (chromium, chrome, or obscura's raster "
        "picture); firefox is Firefox — use engine chrome"
    )
    with pytest.raises(WebToolError) as caught:
        make_tool().call({"action": "browse", "url": "https://example.com/", "browser": "chromium", "engine": "safari"})
    assert str(caught.value) == (
        "browse sets engine safari and browser chromium, which disagree — they are one "
        "setting; give either, or both only if they agree"
    )


STUB = (
    "document.addEventListener('DOMContentLoaded', () => "
    "document.body.insertAdjacentHTML('beforeend', '<p id=\"stub\">from init</p>'));\n"
)


def _run_reply(fake, files: dict[str, str], url: str) -> str:
    """What the step's browse call answered: a real engine step on the materialised workspace."""
    fake.reply_tool_use("web", {"action": "browse", "url": url, "actions": [{"get": "#stub"}]})
    fake.reply_text("GOOD")
    result = run_step(
        desk(files),
        StepRequest(run_id="r", label="1", agent="researcher", task="t", allow_private_urls=True),
        LocalHost(SECRETS),
    )
    assert result.status == "completed", result.error
    return fake.requests[-1].body["messages"][-1]["content"][0]["content"]


@pytest.mark.e2e
def test_an_agents_init_script_is_a_workspace_path_to_check_and_to_the_run_alike(site):
    """`init:` takes workspace paths (spec/tools.md): a script beside an agent in agents/researcher/ but not at the
    workspace's scripts/ is refused by check and by the run; the same script at the workspace root passes both."""
    with FakeProvider() as fake:
        agent = agent_md("researcher", fake, tools="[web]", extra="web:\n  browse:\n    init: [scripts/stub.js]\n")
        beside = {AGENT: agent, "agents/researcher/scripts/stub.js": STUB}
        assert [f.message for f in check(Desk(files=beside), mode="check") if f.code.startswith("web.")] == [
            "web.browse.init: 'scripts/stub.js' is not a file in this workspace; init: takes workspace paths of "
            "scripts, e.g. scripts/stub-analytics.js."
        ]
        assert "init=scripts/stub.js: no such file in the agent directory" in _run_reply(
            fake, beside, f"{site.url}/app"
        )
        at_root = {AGENT: agent, "scripts/stub.js": STUB}
        assert [f for f in check(Desk(files=at_root), mode="check") if f.code.startswith("web.")] == []
        assert json.loads(_run_reply(fake, at_root, f"{site.url}/app")) == [
            {"get": "text of #stub", "value": "from init"}
        ]
