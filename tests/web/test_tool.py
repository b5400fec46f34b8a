"""The web tool as a whole: its schema, what an agent may do, test runs, and the engine's adapter."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from foldrun.engine.limits import LimitCounter
from foldrun.engine.tools.base import Tool, ToolError, check_arguments
from foldrun.web import WebToolError, resolve_language, resolve_web_block
from foldrun.web.adapter import engine_tool
from foldrun.web.tool import WebTool, tool_md


def test_the_schema_is_the_shelfs_tool_md_args(make_tool):
    schema = make_tool().schema()
    assert schema["name"] == "web"
    assert schema["description"].startswith("Reach the web. action=search finds pages")
    properties = schema["input_schema"]["properties"]
    for name, description in tool_md()["args"].items():
        assert properties[name]["description"] == description
    assert properties["action"]["enum"] == ["search", "fetch", "browse", "crawl", "map", "extract", "answer", "monitor"]
    assert properties["count"]["type"] == "integer"
    assert properties["urls"]["type"] == "array"
    assert schema["input_schema"]["required"] == ["action"]


def test_web_actions_narrows_what_the_model_is_offered_and_may_call(make_tool, site):
    tool = make_tool({"actions": ["search"]})
    before = len(site.seen)
    assert tool.schema()["input_schema"]["properties"]["action"]["enum"] == ["search"]
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "fetch", "url": f"{site.url}/article"})
    assert str(caught.value) == "web: action=fetch is not allowed to this agent; its web.actions are search"
    assert len(site.seen) == before


def test_every_action_of_the_spec_runs_here_none_refused_as_not_built(make_tool):
    from foldrun.contract import web_engines as W
    from foldrun.web.tool import OWN_ACTIONS

    assert tuple(OWN_ACTIONS) == W.WEB_ACTIONS


@pytest.mark.parametrize(
    "action, args",
    [
        ("search", {"query": "owner inspections"}),
        ("fetch", {"url": "https://example.com/"}),
    ],
)
def test_a_test_run_makes_no_outward_call_and_says_so(make_tool, searxng, recorder, action, args):
    tool = make_tool(
        {"search": "brave"} if action == "search" else {},
        test_mode=True,
        searxng_url=searxng.url,
        secret=lambda name: pytest.fail("a test run never reads a provider's key"),
    )
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": action, **args})
    sentence = f"test run: web action={action} was not made — a test run has no internet, and outward calls fail closed"
    assert str(caught.value) == sentence
    assert recorder.lines == [sentence]
    assert recorder.events == [{"event": action, "refused": "test run"}]
    assert searxng.seen == []


def test_language_and_region_cascade_and_the_nearest_web_block_wins_whole():
    agent, workspace, account = {"region": "au"}, {"language": "de", "web": {"search": "brave"}}, {"language": "fr"}
    assert resolve_language(agent, workspace, account) == ("de", "au")
    assert resolve_language({}, {}, {}) == ("en", None)
    assert resolve_web_block(agent, workspace, account) == {"search": "brave"}
    assert resolve_web_block({"web": {"fetch": "jina"}}, workspace, account) == {"fetch": "jina"}


def test_a_provider_that_cannot_do_the_action_names_the_ones_that_can(make_tool):
    with pytest.raises(WebToolError) as caught:
        make_tool({"fetch": "brave"}).call({"action": "fetch", "url": "https://example.com/"})
    assert str(caught.value) == (
        "web.fetch: brave cannot fetch (it answers search); the providers that can are jina, "
        "firecrawl, exa, tavily, parallel, zyte, scrapingbee, anthropic — or leave web.fetch "
        "unset for foldrun's own"
    )


def test_a_key_written_as_a_value_is_refused(make_tool):
    tool = make_tool({"search": {"name": "exa", "key": "exa-live-123"}})
    assert tool.secret_names() == []  # building the step's tools never fails on it; the call says why
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "search", "query": "x"})
    assert str(caught.value) == "web.search.key must be a reference such as ${MY_KEY}, never a value"
    assert "exa-live-123" not in str(caught.value)


class FakeHost:
    def __init__(self) -> None:
        self.traced: list[tuple[str, dict]] = []

    def trace(self, kind: str, payload: dict) -> None:
        self.traced.append((kind, payload))

    # The rest of the engine's Host protocol that the web tool reads (engine/context.py): a laptop's answers.
    kept_seeds = None

    def session_action(self) -> None:
        return None

    def live_frames(self) -> None:
        return None


def _env(tmp_path: Path, http_client, *, is_test: bool = False) -> SimpleNamespace:
    host = FakeHost()
    closers: list = []
    logged: list[str] = []
    secrets = {"BRAVE_SEARCH_API_KEY": "BSA-test-key-123456"}
    return SimpleNamespace(
        host=host,
        http=http_client,
        sandbox=SimpleNamespace(root=tmp_path),
        is_test=is_test,
        allow_private_urls=True,
        log=logged.append,
        logged=logged,
        closers=closers,
        on_close=closers.append,
        secret_values=lambda names: {n: secrets[n] for n in names},
    )


def test_the_adapter_gives_the_engine_a_tool_whose_calls_count_per_action(tmp_path, http_client, site):
    env = _env(tmp_path, http_client)
    agent = SimpleNamespace(
        meta={"web": {"search": "brave"}, "language": "en-AU"}, workspace_defaults={}, account_defaults={}
    )
    tool, names = engine_tool(agent, env)
    assert isinstance(tool, Tool)
    assert names == ["BRAVE_SEARCH_API_KEY"]
    # the step's end closes the tool once (beside it, the try's browser image and pod line are written)
    assert len([c for c in env.closers if getattr(c, "__func__", None) is WebTool.close]) == 1
    arguments = {"action": "fetch", "urls": [f"{site.url}/json"] * 20}
    assert check_arguments(tool, arguments) is arguments
    counter = LimitCounter({"web.fetch": 1})
    assert counter.check(tool.limit_keys(arguments)) is None
    assert counter.used == {"web": 1, "web.fetch": 1, "calls": 1}
    assert counter.check(tool.limit_keys(arguments)) == (
        "limit reached: web.fetch 1 of 1 in this step — work with what you have, or say what more you would need"
    )
    out = tool.handler(arguments, env)
    assert out.count('{"items": [1, 2, 3]}') == 20
    assert env.host.traced[0][0] == "web"
    assert env.host.traced[0][1]["event"] == "fetch"


def test_the_adapter_turns_a_web_error_into_the_engines_tool_error(tmp_path, http_client):
    env = _env(tmp_path, http_client, is_test=True)
    agent = SimpleNamespace(meta={}, workspace_defaults={}, account_defaults={})
    tool, _names = engine_tool(agent, env)
    with pytest.raises(ToolError) as caught:
        tool.handler({"action": "browse", "url": "https://example.com/"}, env)
    assert str(caught.value) == (
        "test run: web action=browse was not run — a test run is handed no browser pod, and outward calls fail closed"
    )
    assert env.logged == [str(caught.value)]


def test_an_unknown_argument_is_named(make_tool):
    with pytest.raises(WebToolError, match=r"^web: unknown argument `vidoe`; it takes action, query, count"):
        make_tool().call({"action": "browse", "url": "https://example.com/", "vidoe": True})


def test_the_web_package_imports_no_django():
    import ast

    import foldrun.web

    package = Path(foldrun.web.__file__).parent
    imported = set()
    for source in package.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module.split(".")[0])
    assert "django" not in imported
    assert {"httpx", "playwright", "bs4", "html_to_markdown", "selectolax"} <= imported
