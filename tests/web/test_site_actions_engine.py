"""foldrun's own extract by prompt= inside a real engine step: the agent's own provider reads the page,
the trace says so, its tokens are counted; and a JS-only shell crawled is named for browse."""
from __future__ import annotations

import json

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from tests.fakes.providers import FakeProvider
from tests.fakes.website import docs_site
from tests.runs.engine_helpers import SECRETS, agent_md, desk


def test_extract_by_prompt_is_read_by_the_agents_provider_on_the_trace_and_counted(tmp_path):
    with docs_site() as site, FakeProvider() as fake:
        files = {"agents/a/agent.md": agent_md("a", fake, tools="[web]")}
        fake.reply_tool_use("web", {"action": "extract", "url": f"{site.url}/products", "prompt": "each flat's name"})
        fake.reply_text('{"names": ["Harbour flat", "Garden cottage"]}')   # the page read by the same provider
        fake.reply_text("GOOD")
        host = LocalHost(SECRETS)  # it keeps every trace event in host.events
        result = run_step(desk(files), StepRequest(run_id="r", label="1", agent="a", task="t", allow_private_urls=True),
                          host)
    assert result.status == "completed", result.error
    asked = fake.requests[1].body
    assert not asked.get("tools") and "What to read off it: each flat's name" in asked["messages"][0]["content"]
    reply = fake.requests[2].body["messages"][-1]["content"][0]["content"]
    assert json.loads(reply) == {"names": ["Harbour flat", "Garden cottage"]}
    models = [p for k, p in host.events if k == "model_request"]
    assert [m.get("for") for m in models] == [None, "web extract", None]
    assert {"event": "extract", "url": f"{site.url}/products", "model": "the agent's own provider reads the page"} in \
        [p for k, p in host.events if k == "web"]


def test_a_crawled_page_that_builds_itself_with_javascript_is_named_for_browse(make_tool, tmp_path):
    with docs_site() as site:
        out = make_tool().call({"action": "crawl", "url": f"{site.url}/app", "limit": 1})
    assert out.startswith(f"crawled {site.url}/app: 1 page this call")
    text = (tmp_path / "outputs/crawl/app.md").read_text()
    assert text.startswith(f"<!-- {site.url}/app builds itself with JavaScript (its content mounts into an empty "
                           f'<div id="root"> that a script fills in); read it with web action=browse -->')
