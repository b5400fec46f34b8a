"""Issue 29, item 6: an http tool's allowlist holds. A path parameter is one encoded segment (`..`, `/`, `?`,
`#` cannot change the path); every URL — a typed operation's and the generic tool's — stays under `base`'s
path; an argument a typed operation does not declare is refused with a sentence and nothing is sent. In
a step in this process and in a run on a real worker, against a loopback API that records what reached it."""

from __future__ import annotations

import json

import pytest

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from foldrun.engine.tools.http_url import OutsideBase, resolve
from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.fakes.json_api import JsonApi
from tests.runs.engine_helpers import SECRETS, agent_md, desk
from tests.runs.helpers import agent_file, push

OPENAPI = {
    "openapi": "3.0.0",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/items/{id}": {
            "get": {
                "operationId": "getItem",
                "parameters": [{"name": "id", "in": "path"}, {"name": "fields", "in": "query"}],
            }
        },
        "/admin/users": {"get": {"operationId": "listUsers"}},
    },
}


def tool_files(api_url: str, *, operations: bool = True) -> dict[str, str]:
    allow = "operations: [getItem]\n" if operations else ""
    return {
        "tools/shop/tool.md": f"---\ntransport: http\nname: shop\nbase: {api_url}/v1\nopenapi: openapi.json\n"
        f"{allow}---\n",
        "tools/shop/openapi.json": json.dumps(OPENAPI),
        "tools/plain.md": f"---\ntransport: http\nname: plain\nbase: {api_url}/v1\n---\n",
    }


@pytest.fixture
def api():
    receiver = JsonApi()
    yield receiver
    receiver.stop()


def results(fake) -> list[str]:
    """What each tool call answered, in order, as the model read it."""
    found = []
    for request in fake.requests:
        for message in request.body["messages"]:
            if isinstance(message.get("content"), list):
                found += [str(b.get("content")) for b in message["content"] if b.get("type") == "tool_result"]
    return list(dict.fromkeys(found))


def one_call(fake, api, tool: str, args: dict, *, tools: str = "[shop, plain]", operations: bool = True) -> str:
    files = {
        "agents/worker/agent.md": agent_md("worker", fake, tools=tools),
        **tool_files(api.url, operations=operations),
    }
    fake.reply_tool_use(tool, args)
    fake.reply_text("GOOD")
    run_step(
        desk(files),
        StepRequest(run_id="run_t", label="1", agent="worker", task="Do it.", allow_private_urls=True),
        LocalHost(SECRETS),
    )
    return results(fake)[-1]


def test_a_path_parameter_that_climbs_out_of_base_reaches_the_api_as_one_segment_under_it(fake_provider, api):
    answer = one_call(fake_provider, api, "shop_getItem", {"id": "../../admin/users?all=1#"})
    assert answer.startswith("HTTP 200")
    assert [r["path"] for r in api.requests] == ["/v1/items/..%2F..%2Fadmin%2Fusers%3Fall%3D1%23"]


@pytest.mark.parametrize("value", ["..", ".", ""])
def test_a_path_parameter_that_is_a_dot_segment_is_refused_and_nothing_is_sent(fake_provider, api, value):
    answer = one_call(fake_provider, api, "shop_getItem", {"id": value})
    assert answer == (
        f"shop: GET /items/{{id}}: id: {value!r} cannot be a path parameter — it would name no "
        f"segment or another one — nothing was sent"
    )
    assert api.requests == []


def test_an_argument_the_operation_does_not_declare_is_refused_not_sent_as_a_query(fake_provider, api):
    answer = one_call(fake_provider, api, "shop_getItem", {"id": "7", "admin": "true", "all": 1})
    assert answer == "shop: GET /items/{id} does not take admin, all; it takes fields, id — nothing was sent"
    assert api.requests == []


def test_a_declared_query_parameter_still_goes_as_a_query(fake_provider, api):
    one_call(fake_provider, api, "shop_getItem", {"id": "a b/c", "fields": "name,price"})
    assert [r["path"] for r in api.requests] == ["/v1/items/a%20b%2Fc?fields=name%2Cprice"]


@pytest.mark.parametrize(
    "path",
    [
        "../admin/users",
        "/../admin",
        "items/../../admin",
        "%2e%2e/admin",
        "items/%2E%2E/%2e%2e/admin",
        "..\\admin",
        "items\\..\\..\\admin",
        "..%5cadmin",
        "..",
        "/..",
        "//evil.example/v1",
        "https://evil.example/v1/x",
        "\\\\evil.example/v1",
    ],
)
def test_the_generic_tool_cannot_leave_bases_path(fake_provider, api, path):
    answer = one_call(fake_provider, api, "plain", {"path": path}, tools="[plain]")
    assert answer.startswith("plain: the path must "), answer
    assert api.requests == []


def test_the_generic_tool_may_move_about_under_base(fake_provider, api):
    files = {"agents/worker/agent.md": agent_md("worker", fake_provider, tools="[plain]"), **tool_files(api.url)}
    fake_provider.reply_tool_uses(
        [("plain", {"path": "items/../orders/3?x=1"}), ("plain", {"path": "./items/"}), ("plain", {"path": ""})]
    )
    fake_provider.reply_text("GOOD")
    run_step(
        desk(files),
        StepRequest(run_id="run_t", label="1", agent="worker", task="Do it.", allow_private_urls=True),
        LocalHost(SECRETS),
    )
    assert [r["path"] for r in api.requests] == ["/v1/orders/3?x=1", "/v1/items/", "/v1"]


def test_resolve_keeps_a_base_at_the_root_and_refuses_what_climbs_above_it():
    assert resolve("https://api.example.com", "a/../b")[0] == "https://api.example.com/b"
    with pytest.raises(OutsideBase):
        resolve("https://api.example.com", "../b")
    assert resolve("https://api.example.com/v1/", "x?q=1&r=")[1] == [("q", "1"), ("r", "")]


@pytest.mark.e2e
def test_on_a_real_worker_the_escapes_reach_nothing_outside_base_and_the_run_completes(
    celery_worker_process, workspace, alice, fake_provider, api
):
    push(
        workspace,
        {
            "agents/worker/agent.md": agent_file("worker", fake_provider, tools="[shop, plain, web]"),
            "flows/escape.md": "---\nname: escape\n---\n1. [[worker]] — Call the API.\n",
            **tool_files(api.url),
        },
    )
    port = api.url.rsplit(":", 1)[1]
    fake_provider.reply_tool_uses(
        [
            ("shop_getItem", {"id": "../../admin/users?all=1#"}),
            ("shop_getItem", {"id": "1", "admin": True}),
            ("plain", {"path": "../../admin/users"}),
            ("web", {"action": "fetch", "url": f"http://0177.0.0.1:{port}/v1/items/1"}),
            ("web", {"action": "fetch", "url": f"http://127.000.000.001:{port}/admin"}),
        ]
    )
    fake_provider.reply_text("GOOD — nothing escaped")
    run = check_start_run(workspace=workspace, user=alice, flow="escape")
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=90)
    assert done.status == "completed", done.error
    assert [r["path"] for r in api.requests] == ["/v1/items/..%2F..%2Fadmin%2Fusers%3Fall%3D1%23"]
    said = [e.data["content"] for e in TraceEvent.objects.filter(run=done, kind="tool_result").order_by("id")]
    assert said[1] == "shop: GET /items/{id} does not take admin; it takes fields, id — nothing was sent"
    assert said[2].startswith("plain: the path must stay under ")
    # the worker allows private addresses here (its model is on loopback): the address is named, never a crash
    assert all("write it as 127.0.0.1" in text for text in said[3:5]), said
