"""Issue 32, item 1: an agent's `apis:` block grants an http tool declared inline (tools.md: "An `apis:` block
turns an OpenAPI or a base URL into a tool"). A base URL gives the generic tool named by the key; an openapi:
gives one typed tool per operation, with `operations:` held as in a tool file (path parameters encoded,
calls kept under base, undeclared arguments refused); a document that does not load or cannot be read leaves
the API no tools that run, with a sentence in the run. `check` reads the block, by line."""

from __future__ import annotations

import json

import pytest

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.contract.support import lines
from tests.conftest import wait_for
from tests.fakes.json_api import JsonApi
from tests.runs.engine_helpers import SECRETS, agent_md, desk
from tests.runs.helpers import agent_file, push

OPENAPI = {
    "openapi": "3.0.0",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/items/{id}": {"get": {"operationId": "getItem", "parameters": [{"name": "id", "in": "path"}]}},
        "/admin/users": {"get": {"operationId": "listUsers"}},
    },
}


@pytest.fixture
def api():
    receiver = JsonApi()
    yield receiver
    receiver.stop()


def answers(host: LocalHost) -> list[str]:
    return [d["content"] for kind, d in host.events if kind == "tool_result"]


def logs(host: LocalHost) -> list[str]:
    return [d["message"] for kind, d in host.events if kind == "log"]


def step(fake, files: dict[str, str], calls: list[tuple[str, dict]]) -> LocalHost:
    fake.reply_tool_uses(calls)
    fake.reply_text("GOOD")
    host = LocalHost(SECRETS)
    run_step(
        desk(files),
        StepRequest(run_id="run_t", label="1", agent="worker", task="Do it.", allow_private_urls=True),
        host,
    )
    return host


def test_an_api_with_a_base_is_a_tool_the_agent_may_call_without_listing_it(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md(
            "worker", fake_provider, tools="[read]", extra=f"apis:\n  echo2:\n    base: {api.url}/v2\n"
        )
    }
    host = step(fake_provider, files, [("echo2", {"path": "ping?x=1"})])
    assert answers(host)[0].startswith("HTTP 200")
    assert [r["path"] for r in api.requests] == ["/v2/ping?x=1"]
    offered = [t["name"] for t in fake_provider.requests[0].body["tools"]]
    assert "echo2" in offered


def test_an_apis_header_carries_the_agents_secret_and_the_model_never_sees_it(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md(
            "worker",
            fake_provider,
            tools="[echo2]",
            extra=f"secrets: [ECHO_TOKEN]\napis:\n  echo2:\n    base: {api.url}\n"
            "    headers: {Authorization: 'Bearer ${ECHO_TOKEN}'}\n",
        )
    }
    fake_provider.reply_tool_use("echo2", {"path": "me"})
    fake_provider.reply_text("GOOD")
    host = LocalHost({**SECRETS, "ECHO_TOKEN": "tok-sekrit-99"})
    run_step(
        desk(files),
        StepRequest(run_id="run_t", label="1", agent="worker", task="Do it.", allow_private_urls=True),
        host,
    )
    assert api.requests[0]["headers"]["Authorization"] == "Bearer tok-sekrit-99"
    assert "tok-sekrit-99" not in json.dumps([r.body for r in fake_provider.requests])


def test_an_apis_openapi_with_operations_holds_the_allowlist(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md(
            "worker",
            fake_provider,
            tools="[read]",
            extra=f"apis:\n  shop:\n    base: {api.url}/v1\n    openapi: openapi.json\n    operations: [getItem]\n",
        ),
        "agents/worker/openapi.json": json.dumps(OPENAPI),
    }
    host = step(
        fake_provider,
        files,
        [
            ("shop_getItem", {"id": "../../admin/users"}),
            ("shop_getItem", {"id": "1", "admin": True}),
            ("shop_listUsers", {}),
            ("shop", {"path": "admin/users"}),
        ],
    )
    said = answers(host)
    assert said[0].startswith("HTTP 200")
    assert said[1] == "shop: GET /items/{id} does not take admin; it takes id — nothing was sent"
    assert said[2] == "shop_listUsers is not a tool this agent was granted"
    assert said[3] == "shop is not a tool this agent was granted"
    assert [r["path"] for r in api.requests] == ["/v1/items/..%2F..%2Fadmin%2Fusers"]


@pytest.mark.parametrize(
    "document, why",
    [
        ("openapi: http://127.0.0.1:9/openapi.json", "the openapi document did not load ("),
        ("openapi: broken.json", "the openapi document did not load (it has no `paths`)"),
    ],
)
def test_an_apis_openapi_that_does_not_load_leaves_it_no_tools_and_the_run_says_so(fake_provider, api, document, why):
    files = {
        "agents/worker/agent.md": agent_md(
            "worker", fake_provider, tools="[read]", extra=f"apis:\n  shop:\n    base: {api.url}/v1\n    {document}\n"
        ),
        "agents/worker/broken.json": '{"openapi": "3.0.0", "info": {}}',
    }
    host = step(fake_provider, files, [("call_shop", {"path": "admin/users"}), ("shop", {"path": "x"})])
    said = logs(host)
    assert any(line.startswith(f"shop: {why}") and line.endswith("; the API has no tools that run") for line in said), (
        said
    )
    assert answers(host) == [
        "call_shop is not a tool this agent was granted",
        "shop is not a tool this agent was granted",
    ]
    assert api.requests == []


def test_check_knows_an_apis_block_and_names_what_is_wrong_in_it():
    good = (
        "---\nname: w\ntools: [echo2]\nlimits: {echo2: 3}\napis:\n  echo2:\n    base: https://api.example.com/v2\n"
        "---\nHi.\n"
    )
    assert lines({"agents/w.md": good}) == []
    bad = (
        "---\nname: w\napis:\n  a: 3\n  b:\n    base: ftp://x.example\n  c:\n    base: https://x.example\n"
        "    openapi: missing.yaml\n---\nHi.\n"
    )
    assert lines({"agents/w.md": bad}) == [
        "agents/w.md:4: error: apis: a must be a mapping with base: (the URL every call is relative to) or openapi:.",
        "agents/w.md:6: error: apis: b: base: ftp://x.example is not an http(s) URL.",
        "agents/w.md:9: error: apis: c: openapi: missing.yaml is neither a URL nor a file in this desk.",
    ]
    assert lines({"agents/w.md": "---\nname: w\napis: [x]\n---\nHi.\n"}) == [
        "agents/w.md:3: error: apis: must be a mapping of API names to blocks with base: (and openapi:, operations:, "
        "methods:, headers:)."
    ]


@pytest.mark.e2e
def test_on_a_real_worker_an_agents_api_is_called_and_the_run_completes(
    celery_worker_process, workspace, alice, fake_provider, api
):
    push(
        workspace,
        {
            "agents/worker/agent.md": agent_file(
                "worker", fake_provider, tools="[read]", extra=f"apis:\n  echo2:\n    base: {api.url}/v2\n"
            ),
            "flows/echo.md": "---\nname: echo\n---\n1. [[worker]] — Call the API.\n",
        },
    )
    fake_provider.reply_tool_use("echo2", {"path": "hello"})
    fake_provider.reply_text("GOOD")
    run = check_start_run(workspace=workspace, user=alice, flow="echo")
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=90)
    assert done.status == "completed", done.error
    said = [e.data["content"] for e in TraceEvent.objects.filter(run=done, kind="tool_result").order_by("id")]
    assert said[0].startswith("HTTP 200"), said
    assert [r["path"] for r in api.requests] == ["/v2/hello"]


def test_an_outward_api_declared_in_an_agent_needs_a_verify_or_a_gate_like_an_outward_tool_file():
    files = {
        "agents/w.md": "---\nname: w\napis:\n  sender:\n    base: https://api.example.com\n    outward: true\n"
        "---\nHi.\n",
        "flows/f.md": "---\nname: f\n---\n1. [[w]] — Send.\n",
    }
    assert lines(files) == [
        "flows/f.md:4: error: step 1 ([[w]]) grants the outward tool sender but has neither verify: nor a gate; add "
        "verify: file <path>, verify: reply <regex> or verify: grows <path>, put ! after [[w]], or add ask: <question>."
    ]
