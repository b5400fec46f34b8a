"""Arguments before tools: a call whose arguments do not parse or do not fit the tool's schema never
reaches the tool; the model gets one sentence naming the argument, the loop goes on, no limit counts."""

from __future__ import annotations

import pytest

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.runs.engine_helpers import SECRETS, agent_md, desk
from tests.runs.helpers import agent_file, push
from tests.fakes.json_api import JsonApi


def _step(files, **kw):
    host = LocalHost(SECRETS)
    kw.setdefault("allow_private_urls", True)
    result = run_step(desk(files), StepRequest(run_id="run_a", label="1", agent="worker", task="Do it.", **kw), host)
    return result, host


def _answer(fake, n=1) -> dict:
    return fake.requests[n].body["messages"][-1]["content"][0]


def _sender(receiver_url: str) -> dict[str, str]:
    """An outward script tool that POSTs its arguments to the receiver."""
    program = (
        "import json, sys, urllib.request\nargs = json.load(sys.stdin)\n"
        f"urllib.request.urlopen(urllib.request.Request('{receiver_url}/send', data=json.dumps(args).encode(),"
        " method='POST'), timeout=5)\nprint('sent')\n"
    )
    return {
        "tools/mailer/tool.md": "---\ntransport: script\nname: mailer\nrun: run.py\noutward: true\n"
        "description: Send a message.\nargs: {to: who, body: what to say}\n---\n",
        "tools/mailer/run.py": program,
    }


def test_a_read_whose_arguments_break_off_mid_json_is_named_and_not_run_and_counts_toward_no_limit(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, extra="limits: {read: 1}\n"),
        "knowledge/a.md": "---\ntype: Reference\ntitle: A\ndescription: d\n---\nalpha\n",
    }
    fake_provider.reply_cut_tool_use("Read", '{"path": "knowledge/a')
    fake_provider.reply_tool_use("Read", {"path": "knowledge/a.md"})
    fake_provider.reply_text("GOOD read it")
    result, host = _step(files)
    refused = _answer(fake_provider)
    assert refused["is_error"] is True
    assert refused["content"] == (
        "Read: the arguments did not parse as JSON (they break off in the argument `path`), "
        "so the call was not made — send it again with the whole arguments"
    )
    assert "alpha" in _answer(fake_provider, 2)["content"]  # the one allowed read was still there to use
    assert result.status == "completed"
    assert result.limits_line == "limits: read 1/1"


def test_a_built_in_argument_of_the_wrong_type_is_named_with_what_was_wrong(fake_provider):
    files = {"agents/worker/agent.md": agent_md("worker", fake_provider)}
    fake_provider.reply_tool_use("Read", {"path": "state/a.txt", "offset": True})
    fake_provider.reply_text("BAD")
    result, _host = _step(files)
    assert _answer(fake_provider)["content"] == "Read: the argument `offset` must be an integer, not true or false"
    assert result.status == "completed"


def test_a_script_call_with_a_name_its_args_do_not_declare_never_starts_the_program(fake_provider):
    receiver = JsonApi()
    try:
        files = {
            "agents/worker/agent.md": agent_md(
                "worker", fake_provider, tools="[mailer]", extra="limits: {mailer: 1, calls: 5}\n"
            ),
            **_sender(receiver.url),
        }
        fake_provider.reply_tool_use("mailer", {"to": "ann", "subject": "hi"})
        fake_provider.reply_cut_tool_use("mailer", '{"to": "ann", "body": "the quarterly fig')
        fake_provider.reply_text("BAD could not send")
        result, host = _step(files)
        assert _answer(fake_provider)["content"] == "mailer: unknown argument `subject`; it takes to, body"
        assert _answer(fake_provider, 2)["content"] == (
            "mailer: the arguments did not parse as JSON (they break off in the argument `body`), so the call "
            "was not made — send it again with the whole arguments"
        )
        assert receiver.requests == []
        assert result.wrote == []  # nothing went out, so nothing is on the record as written
        assert result.limits_line == "limits: mailer 0/1, calls 0/5"
    finally:
        receiver.server.shutdown()


@pytest.mark.e2e
def test_on_a_real_worker_a_cut_tool_call_reaches_no_outward_sender_and_the_run_goes_on(
    celery_worker_process, workspace, alice, fake_provider
):
    receiver = JsonApi()
    try:
        push(
            workspace,
            {
                "agents/worker/agent.md": agent_file(
                    "worker", fake_provider, tools="[mailer]", extra="limits: {mailer: 1}\n"
                ),
                **_sender(receiver.url),
                "flows/send.md": "---\nname: send\n---\n1. [[worker]] — Send the figures to ann.\n",
            },
        )
        fake_provider.reply_cut_tool_use("mailer", '{"to": "ann", "body": "Q3 revenue was 4')
        fake_provider.reply_text("BLOCKED — the message could not be sent")
        run = check_start_run(workspace=workspace, user=alice, flow="send")
        done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=60)
        assert done.status == "completed", done.error
        assert done.verdict == "BLOCKED"
        result = TraceEvent.objects.get(run=done, kind="tool_result")
        assert result.data["error"] is True
        assert result.data["content"] == (
            "mailer: the arguments did not parse as JSON (they break off in the argument `body`), so the call "
            "was not made — send it again with the whole arguments"
        )
        assert receiver.requests == []
        step = done.steps.get()
        assert (step.wrote, step.limits_line) == ([], "limits: mailer 0/1")
    finally:
        receiver.server.shutdown()
