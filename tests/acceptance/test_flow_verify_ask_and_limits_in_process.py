"""Issue 3 (audit3), in-process: what the builder's tests left unproven —
`verify: grows` and `verify: reply`, the `ask` tool's restart (said on the
trace) and its refusal once a step has written, an `ask` inside a fan-out
instance, limits counted per instance, the prompt (skills, language,
region), secret values kept out of memory/ writes and the trace, and the
runs list filtered by flow."""

from __future__ import annotations

import json

import pytest

from library.services import files_at
from runs.actions import check_start_run, decide
from runs.models import Approval, Run, TraceEvent, Try
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, drive, push
from tests.runs.test_tool_files import api  # noqa: F401 - the loopback API fixture
from vault.actions import do_set_secret


def flow(body: str, meta: str = "") -> str:
    return f"---\nname: weekly\n{meta}---\n{body}\n"


@pytest.fixture
def desk(workspace, fake_provider):
    def make(flow_body: str, meta: str = "", extra_files: dict | None = None, **agents):
        files = {
            f"agents/{name}/agent.md": agent_file(name, fake_provider, **(opts or {})) for name, opts in agents.items()
        }
        files["flows/weekly.md"] = flow(flow_body, meta)
        files.update(extra_files or {})
        push(workspace, files)

    return make


def logs(run) -> list[str]:
    return [e.data.get("message", "") for e in TraceEvent.objects.filter(run=run, kind="log").order_by("pk")]


LEDGER = "state/ledger.md"


def test_verify_grows_passes_when_the_ledger_gains_a_line(workspace, alice, desk, fake_provider):
    desk(
        "1. [[clerk]] — Record the week.\n   verify: grows state/ledger.md",
        clerk={"tools": "[write]"},
        extra_files={LEDGER: "week 1\n"},
    )
    fake_provider.reply_tool_use("Write", {"path": LEDGER, "content": "week 1\nweek 2\n"})
    fake_provider.reply_text("GOOD recorded")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "completed", run.error


def test_verify_grows_fails_the_step_when_the_ledger_did_not_gain_a_line(workspace, alice, desk, fake_provider):
    desk(
        "1. [[clerk]] — Record the week.\n   verify: grows state/ledger.md",
        clerk={"tools": "[write]"},
        extra_files={LEDGER: "week 1\n"},
    )
    fake_provider.reply_text("GOOD recorded, honestly")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    step = run.steps.get()
    assert run.status == "failed"
    assert step.error == "verify: grows state/ledger.md — the ledger did not gain a line (1 before, 1 after)"
    assert [(t.n, t.status) for t in step.tries.all()] == [(1, "failed")]


def test_verify_reply_fails_the_step_quoting_the_verdict_line(workspace, alice, desk, fake_provider):
    desk("1. [[publisher]] — Publish.\n   verify: reply ^GOOD", publisher={})
    fake_provider.reply_text("BAD — the page would not load\nmore")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.error == (
        "step 1 (publisher) failed: verify: reply ^GOOD — the reply's verdict line does not "
        "match: 'BAD — the page would not load'"
    )


def test_the_ask_tool_says_on_the_trace_that_the_step_runs_again_from_the_start(workspace, alice, desk, fake_provider):
    desk("1. [[writer]] — Write the post.", writer={"tools": "[ask, write]"})
    fake_provider.reply_tool_use("Write", {"path": "outputs/draft.md", "content": "a first draft"})
    fake_provider.reply_tool_use("ask", {"question": "Formal or casual?"})
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    offered = next(t for t in fake_provider.requests[0].body["tools"] if t["name"] == "ask")
    assert run.status == "awaiting-approval"
    assert "this step starts again from the beginning with their answer" in offered["description"]
    assert (
        "step 1 (writer) asked a person; when they answer, the step runs again from the start with their "
        "answer — what it did in its sandbox before asking is not kept"
    ) in logs(run)
    assert not run.artifacts.exists()
    decide(run=run, index=1, decision="approve", user=alice, label=alice.email, answer="casual")
    fake_provider.reply_text("GOOD a casual post")
    run = drive(run)
    assert run.status == "completed"
    assert "their answer: casual" in fake_provider.requests[2].body["messages"][0]["content"]
    assert [(t.n, t.status) for t in run.steps.get().tries.all()] == [(1, "parked"), (2, "completed")]


def test_the_ask_tool_is_refused_once_the_step_has_changed_something_outside(
    workspace, alice, desk, fake_provider, api
):
    desk(
        "1. [[sender]] — Send it.\n   verify: reply ^GOOD",
        sender={"tools": "[ask, mail]"},
        extra_files={
            "tools/mail.md": f"---\ntransport: http\nname: mail\nbase: {api.url}\nmethods: [POST]\noutward: true\n---\n"
        },
    )
    fake_provider.reply_tool_use("mail", {"method": "POST", "path": "/send", "body": {"to": "ann"}})
    fake_provider.reply_tool_use("ask", {"question": "Send another?"})
    fake_provider.reply_text("GOOD sent once")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    refused = fake_provider.requests[2].body["messages"][-1]["content"][0]
    assert run.status == "completed"
    assert refused["is_error"] is True
    assert refused["content"] == (
        'ask: this step has already changed something outside (mail {"method": "POST", "path": "/send", "body": '
        '{"to": "ann"}}); a question now would run the step again from the start and do it twice — finish without '
        "asking, or ask before you change anything"
    )
    assert len(api.requests) == 1
    assert not Approval.objects.filter(run=run).exists()


def test_an_instance_that_asks_runs_again_with_its_own_answer_and_the_run_joins(workspace, alice, desk, fake_provider):
    desk(
        "1. [[lister]] — List.\n2. [[reader]] — Read {{item}}.\n   each: lines\n3. [[reporter]] — Report.",
        lister={},
        reader={"tools": "[ask]"},
        reporter={},
    )
    fake_provider.reply_text("a\nb")
    fake_provider.reply_tool_use("ask", {"question": "Which a?"})
    fake_provider.reply_text("read b")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    asked = Approval.objects.get(run=run)
    assert run.status == "awaiting-approval"
    assert (asked.step.instance, asked.question) == (0, "Which a?")
    decide(run=run, index=2, decision="approve", user=alice, label=alice.email, answer="the first a")
    fake_provider.reply_text("read a")
    fake_provider.reply_text("GOOD both read")
    run = drive(run)
    assert run.status == "completed", run.error
    assert run.steps.get(index=2, instance__isnull=True).output == "read a\nread b"
    assert "their answer: the first a" in fake_provider.requests[3].body["messages"][0]["content"]


def test_limits_are_counted_per_fan_out_instance(workspace, alice, desk, fake_provider):
    desk(
        "1. [[lister]] — List.\n2. [[reader]] — Read {{item}}.\n   each: lines\n   max: 1\n   limits: {read: 1}",
        lister={},
        reader={"tools": "[read]"},
        extra_files={"knowledge/a.md": "---\ntype: Reference\ntitle: a\ndescription: d\n---\nA\n"},
    )
    fake_provider.reply_text("x\ny")
    for _ in range(2):
        fake_provider.reply_tool_uses([("Read", {"path": "knowledge/a.md"}), ("Read", {"path": "knowledge/a.md"})])
        fake_provider.reply_text("read")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    instances = run.steps.filter(index=2, instance__isnull=False).order_by("instance")
    assert run.status == "completed", run.error
    assert [s.limits_line for s in instances] == ["limits: read 1/1 — 1 call refused"] * 2


def test_the_prompt_names_the_skills_the_language_and_the_region(workspace, alice, desk, fake_provider):
    desk(
        "1. [[writer]] — Write.",
        writer={"extra": "language: en-AU\nregion: au\n"},
        extra_files={
            "skills/pacing-check/SKILL.md": (
                "---\nname: pacing-check\ndescription: Check whether spend is on track.\n---\nRun the script.\n"
            )
        },
    )
    fake_provider.reply_text("GOOD")
    drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    system = json.dumps(fake_provider.requests[0].body["system"])
    assert "pacing-check: Check whether spend is on track." in system
    assert "Write in en-AU." in system
    assert "Your region is au." in system


PLANTED = "planted-audit3-value-9f9f9f"
KEEPER = r"""import os
open("memory/key.md", "w").write("---\ntype: Note\ntitle: k\ndescription: d\n---\nthe key is " + os.environ["KEEP_KEY"] + "\n")
print("kept it: " + os.environ["KEEP_KEY"])
"""


def test_a_value_a_script_writes_into_memory_or_prints_is_kept_nowhere(account, workspace, alice, desk, fake_provider):
    desk(
        "1. [[keeper]] — Keep.",
        keeper={"tools": "[keep]"},
        extra_files={
            "tools/keep/tool.md": "---\ntransport: script\nname: keep\nrun: run.py\nsecrets: [KEEP_KEY]\n---\n",
            "tools/keep/run.py": KEEPER,
        },
    )
    do_set_secret(account, workspace, "KEEP_KEY", value=PLANTED)
    fake_provider.reply_tool_use("keep", {})
    fake_provider.reply_text("GOOD kept")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    memory = files_at(account, workspace)["agents/keeper/memory/key.md"].content
    trace = json.dumps(list(TraceEvent.objects.filter(run=run).values_list("data", flat=True)))
    assert run.status == "completed", run.error
    assert "the key is [secret KEEP_KEY]" in memory
    assert PLANTED not in memory and PLANTED not in trace
    assert "kept it: [secret KEEP_KEY]" in trace


def test_the_runs_list_filters_by_flow(workspace, alice, alice_api, desk, fake_provider):
    desk(
        "1. [[writer]] — Write.",
        writer={},
        extra_files={"flows/other.md": "---\nname: other\n---\n1. [[writer]] — Other.\n"},
    )
    fake_provider.reply_text("GOOD one")
    fake_provider.reply_text("GOOD two")
    weekly = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    drive(check_start_run(workspace=workspace, user=alice, flow="other"))
    listed = alice_api.get("/api/workspaces/rank-desk/runs?flow=weekly").json()
    ids = [r["id"] for r in listed["runs"]]
    assert ids == [weekly.public_id]
    assert Run.objects.count() == 2
