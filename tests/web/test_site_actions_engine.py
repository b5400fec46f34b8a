"""foldrun's own extract by prompt= inside a real engine step: refused, since it needs a provider (foldrun's own has
no second model), in a sentence the agent reads; and a JS-only shell crawled is named for browse."""

from __future__ import annotations

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from tests.fakes.providers import FakeProvider
from tests.fakes.website import docs_site
from tests.runs.engine_helpers import SECRETS, agent_md, desk


def test_extract_by_prompt_in_a_real_step_is_refused_for_want_of_a_provider_and_asks_no_second_model(tmp_path):
    with docs_site() as site, FakeProvider() as fake:
        files = {"agents/a/agent.md": agent_md("a", fake, tools="[web]")}
        fake.reply_tool_use("web", {"action": "extract", "url": f"{site.url}/products", "prompt": "each flat's name"})
        fake.reply_text("GOOD")
        host = LocalHost(SECRETS)  # it keeps every trace event in host.events
        result = run_step(
            desk(files), StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True), host
        )
    assert result.status == "completed", result.error
    said = fake.requests[1].body["messages"][-1]["content"][0]["content"]
    assert said.startswith(
        "web: extract by prompt= needs a model to read the page, and foldrun's own extract has "
        "none: name an extract provider in the agent's file (web: {extract: firecrawl}"
    )
    assert "Traceback" not in said and "/products" not in site.seen
    assert [p.get("for") for k, p in host.events if k == "model_request"] == [None, None]  # the agent's two turns


def test_a_crawled_page_that_builds_itself_with_javascript_is_named_for_browse(make_tool, tmp_path):
    with docs_site() as site:
        out = make_tool().call({"action": "crawl", "url": f"{site.url}/app", "limit": 1})
    assert out.startswith(f"crawled {site.url}/app: 1 page this call")
    text = (tmp_path / "outputs/crawl/app.md").read_text()
    assert text.startswith(
        f"<!-- {site.url}/app builds itself with JavaScript (its content mounts into an empty "
        f'<div id="root"> that a script fills in); read it with web action=browse -->'
    )
