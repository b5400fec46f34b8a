"""Issue 3, "Proven by" (audit3): end to end through a real Celery worker on
the configured broker, with the loopback Anthropic fake — each tool kind
(http, script, MCP) under limits, `ask:` answered through the API, `verify:`
failing a try and `retry:` running it again, `budget:`, and a test run."""

from __future__ import annotations

import json
import sys

import pytest

from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from tests.runs.test_tool_files import SERVERS, api  # noqa: F401 - the loopback API fixture
from vault.actions import do_set_secret

pytestmark = pytest.mark.e2e

ECHO = (
    "import json, os, sys\nargs = json.load(sys.stdin)\n"
    "print(json.dumps({'argv': sys.argv[1:], 'key': os.environ.get('SEND_KEY'),"
    " 'test': os.environ.get('FOLDRUN_TEST_MODE')}))\n"
)
NETWORK = (
    "import urllib.request, os\ntry:\n    urllib.request.urlopen(os.environ['API'] + '/x', timeout=2)\n"
    "    print('network: yes')\nexcept Exception:\n    print('network: no')\n"
)


def finished(run) -> Run:
    return wait_for(
        lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed", "cancelled"]).first(), timeout=90
    )


def tool_results(run) -> list[str]:
    return [e.data["content"] for e in TraceEvent.objects.filter(run=run, kind="tool_result").order_by("pk")]


def test_one_step_calls_an_http_a_script_and_an_mcp_tool_on_a_real_worker_under_its_limits(
    celery_worker_process, workspace, alice, fake_provider, api
):
    push(
        workspace,
        {
            "agents/worker/agent.md": agent_file(
                "worker", fake_provider, tools="[crm, mailer, notes]", extra="limits: {crm: 1}\n"
            ),
            "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}\n---\n",
            "tools/mailer/tool.md": "---\ntransport: script\nname: mailer\nrun: run.py\nargs: {to: who}\n---\n",
            "tools/mailer/run.py": ECHO,
            "tools/notes.md": f"---\ntransport: mcp\nname: notes\ncommand: {sys.executable}\n"
            f"args: ['{SERVERS / 'mcp_notes.py'}']\n---\n",
        },
    )
    fake_provider.reply_tool_uses(
        [
            ("crm", {"method": "GET", "path": "/a"}),
            ("crm", {"method": "GET", "path": "/b"}),
            ("mailer", {"to": "ann"}),
            ("notes__add", {"a": 2, "b": 3}),
        ]
    )
    fake_provider.reply_text("GOOD — all three tools answered")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="worker", task="Use every tool."))
    results = tool_results(done)
    refused = [e.data["refused"] for e in TraceEvent.objects.filter(run=done, kind="limit", data__has_key="refused")]
    step = done.steps.get()
    assert done.status == "completed", done.error
    assert [r["path"] for r in api.requests] == ["/a"]
    assert '"path": "/a"' in results[0]
    assert refused == [
        "limit reached: crm 1 of 1 in this step — work with what you have, or say what more you would need"
    ]
    assert json.loads(results[1])["argv"] == ["--to", "ann"]
    assert results[2] == "5"
    assert step.limits_line.startswith("limits: crm 1/1") and step.limits_line.endswith("— 1 call refused")


def test_ask_then_verify_fails_a_try_and_retry_passes_on_a_real_worker(
    celery_worker_process, workspace, alice, alice_api, fake_provider
):
    push(
        workspace,
        {
            "agents/writer/agent.md": agent_file("writer", fake_provider),
            "agents/publisher/agent.md": agent_file("publisher", fake_provider, tools="[write]"),
            "flows/weekly.md": (
                "---\nname: weekly\n---\n1. [[writer]] — Write the post.\n   ask: Which tone?\n"
                "2. [[publisher]] — Publish: {{steps.1.output}}\n   verify: file outputs/receipt.json\n"
                "   retry: 1\n"
            ),
        },
    )
    run = check_start_run(workspace=workspace, user=alice, flow="weekly")
    wait_for(lambda: Run.objects.filter(pk=run.pk, status="awaiting-approval").exists(), timeout=30)
    fake_provider.reply_text("a cheerful post")
    fake_provider.reply_text("GOOD published, I think")
    fake_provider.reply_tool_use("Write", {"path": "outputs/receipt.json", "content": '{"id": 7}'})
    fake_provider.reply_text("GOOD published with a receipt")
    answered = alice_api.post(
        f"/api/workspaces/rank-desk/runs/{run.public_id}/steps/1/approve", {"answer": "cheerful"}, format="json"
    )
    done = finished(run)
    publisher = done.steps.get(index=2)
    assert answered.status_code == 200
    assert done.status == "completed", done.error
    assert "their answer: cheerful" in fake_provider.requests[0].body["messages"][0]["content"]
    assert [(t.n, t.status) for t in publisher.tries.all()] == [(1, "failed"), (2, "completed")]
    assert publisher.tries.get(n=1).error == (
        "verify: file outputs/receipt.json — the step left no such file, or it is empty"
    )
    assert done.headline == "GOOD published with a receipt"


def test_a_budget_stops_the_run_on_a_real_worker_and_no_further_call_is_made(
    celery_worker_process, workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/spender/agent.md": agent_file("spender", fake_provider),
            "flows/weekly.md": (
                "---\nname: weekly\nbudget: 0.01\n---\n1. [[spender]] — Spend.\n2. [[spender]] — Spend more.\n"
            ),
        },
    )
    fake_provider.reply_text("spent", usage=(100, 400))  # $0.0063 of $0.01: too little left for step 2
    fake_provider.reply_text("never asked")
    done = finished(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert done.status == "failed"
    assert done.error.startswith("step 2 (spender) failed: budget reached: the run spent $")
    assert len(fake_provider.requests) == 1


def test_a_test_run_on_a_real_worker_withholds_the_secret_and_its_programs_have_no_network(
    celery_worker_process, account, workspace, alice, fake_provider, api
):
    push(
        workspace,
        {
            "agents/worker/agent.md": agent_file("worker", fake_provider, tools="[mailer, crm]"),
            "tools/mailer/tool.md": (
                "---\ntransport: script\nname: mailer\nrun: run.py\nsecrets: [SEND_KEY]\n"
                "outward: true\nargs: {to: who}\n---\n"
            ),
            "tools/mailer/run.py": ECHO.replace(
                "import json", f"import os\nos.environ['API'] = '{api.url}'\nimport json"
            )
            + NETWORK,
            "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}\nmethods: [POST]\n---\n",
        },
    )
    do_set_secret(account, workspace, "SEND_KEY", value="real-send-key-4242")
    fake_provider.reply_tool_uses([("mailer", {"to": "ann"}), ("crm", {"method": "POST", "path": "/send"})])
    fake_provider.reply_text("QUIET — test run")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="worker", task="Send.", is_test=True))
    results = tool_results(done)
    printed = json.loads(results[0].splitlines()[0])
    logs = [e.data.get("message", "") for e in TraceEvent.objects.filter(run=done, kind="log")]
    assert done.status == "completed", done.error
    assert (printed["key"], printed["test"]) == ("TEST_MODE_WITHHELD", "1")
    assert "network: no" in results[0]
    assert results[1] == "test run: POST /send was not sent — a test run makes no outward calls"
    assert api.requests == []
    assert (
        "test run: send-capable secrets read TEST_MODE_WITHHELD, FOLDRUN_TEST_MODE=1, programs have no network, "
        "outward calls fail closed"
    ) in logs


def test_wait_event_parks_on_a_real_worker_and_the_api_event_resumes_it_with_its_payload(
    celery_worker_process, workspace, alice, alice_api, fake_provider
):
    push(
        workspace,
        {
            "agents/signer/agent.md": agent_file("signer", fake_provider),
            "flows/weekly.md": (
                "---\nname: weekly\n---\n1. [[signer]] — Continue after sign-off.\n   wait: event signed-off\n"
            ),
        },
    )
    run = check_start_run(workspace=workspace, user=alice, flow="weekly")
    wait_for(lambda: Run.objects.filter(pk=run.pk, status="waiting").exists(), timeout=30)
    fake_provider.reply_text("GOOD — signed off by legal")
    sent = alice_api.post(
        f"/api/workspaces/rank-desk/runs/{run.public_id}/events/signed-off", {"by": "legal"}, format="json"
    )
    again = alice_api.post(
        f"/api/workspaces/rank-desk/runs/{run.public_id}/events/signed-off", {"by": "legal"}, format="json"
    )
    done = finished(run)
    assert sent.status_code in (200, 202)
    assert again.status_code == 409
    assert (done.status, done.verdict) == ("completed", "GOOD")
    assert '"by": "legal"' in fake_provider.requests[0].body["messages"][0]["content"]
