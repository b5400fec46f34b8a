"""Flow control, in-process: steps in order, gates, ask, wait, each, verify, retry, on-fail, budget."""

from __future__ import annotations

import re

import pytest

from runs.actions import check_start_run, decide, do_receive_event
from foldrun.api import ApiError
from runs.models import Approval, Artifact, Run, TraceEvent
from library.models import Changeset
from tests.runs.helpers import agent_file, drive, push


def flow(body: str, meta: str = "") -> str:
    return f"---\nname: weekly\n{meta}---\n{body}\n"


@pytest.fixture
def desk(workspace, fake_provider):
    def make(flow_body: str, meta: str = "", **agents):
        files = {
            f"agents/{name}/agent.md": agent_file(name, fake_provider, **(opts or {})) for name, opts in agents.items()
        }
        files["flows/weekly.md"] = flow(flow_body, meta)
        push(workspace, files)

    return make


def test_two_steps_run_in_order_and_the_run_records_verdict_and_headline(workspace, alice, desk, fake_provider):
    desk(
        "1. [[researcher]] — Find pages about {{topic}}.\n2. [[reporter]] — Summarise {{steps.1.output}}.",
        "inputs: {topic: inspections}\n",
        researcher={},
        reporter={},
    )
    fake_provider.reply_text("three pages found")
    fake_provider.reply_text("GOOD — 3 pages on inspections\nthe rest of the summary")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "completed"
    assert run.verdict == "GOOD"
    assert run.headline == "GOOD — 3 pages on inspections"
    assert run.summary == "the rest of the summary"
    assert "Find pages about inspections." in fake_provider.requests[0].body["messages"][0]["content"]
    assert "Summarise three pages found." in fake_provider.requests[1].body["messages"][0]["content"]
    assert run.changeset_number == Changeset.objects.filter(workspace=workspace).order_by("-number").first().number
    first = run.steps.get(index=1)
    assert (run.tokens_in, run.tokens_out, first.tokens_in, first.tries.get().tokens_in) == (24, 14, 12, 12)
    assert run.cost_usd == first.cost_usd * 2 > 0


def test_a_gate_parks_the_run_until_approved_and_a_second_decision_is_refused(workspace, alice, desk, fake_provider):
    desk("1. [[publisher]] ! — Publish.", publisher={})
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "awaiting-approval"
    assert fake_provider.requests == []
    decide(run=run, index=1, decision="approve", user=alice, label=alice.email)
    fake_provider.reply_text("QUIET published nothing new")
    run = drive(run)
    assert run.status == "completed"
    approval = Approval.objects.get(run=run)
    assert (approval.state, approval.decided_by_label) == ("approved", "alice@example.com")
    from foldrun.api import ApiError

    with pytest.raises(ApiError) as refused:
        decide(run=run, index=1, decision="reject", user=alice, label=alice.email)
    assert refused.value.status_code == 409


def test_a_rejected_gate_cancels_the_run(workspace, alice, desk):
    desk("1. [[publisher]] ! — Publish.", publisher={})
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    decide(run=run, index=1, decision="reject", user=alice, label=alice.email)
    run.refresh_from_db()
    assert run.status == "cancelled"
    assert run.error == "step 1 (publisher) was rejected by alice@example.com"


def test_ask_hands_the_answer_to_the_step(workspace, alice, desk, fake_provider):
    desk("1. [[writer]] — Write the post.\n   ask: Which tone?", writer={})
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "awaiting-approval"
    assert Approval.objects.get(run=run).question == "Which tone?"
    decide(run=run, index=1, decision="approve", user=alice, label=alice.email, answer="cheerful")
    fake_provider.reply_text("GOOD written")
    run = drive(run)
    assert run.status == "completed"
    assert "their answer: cheerful" in fake_provider.requests[0].body["messages"][0]["content"]


def test_the_ask_tool_parks_the_run_mid_step(workspace, alice, desk, fake_provider):
    desk("1. [[writer]] — Write the post.", writer={"tools": "[ask]"})
    fake_provider.reply_tool_use("ask", {"question": "Formal or casual?"})
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "awaiting-approval"
    assert Approval.objects.get(run=run).question == "Formal or casual?"


def test_wait_event_parks_until_the_event_arrives(workspace, alice, desk, fake_provider):
    desk("1. [[signer]] — Continue after sign-off.\n   wait: event signed-off", signer={})
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "waiting"
    do_receive_event(run, "signed-off", {"by": "legal"})
    fake_provider.reply_text("GOOD done")
    run = drive(run)
    assert run.status == "completed"
    assert '"by": "legal"' in fake_provider.requests[0].body["messages"][0]["content"]


def test_each_fans_out_one_instance_per_line_at_most_max_at_a_time(workspace, alice, desk, fake_provider):
    from runs import lifecycle

    desk(
        "1. [[lister]] — List pages.\n2. [[reader]] — Read it.\n   each: lines\n   max: 2\n3. [[reporter]] — Report.",
        lister={},
        reader={},
        reporter={},
    )
    fake_provider.reply_text("a.html\nb.html\nc.html")
    run = check_start_run(workspace=workspace, user=alice, flow="weekly")
    lifecycle.advance(run.pk)
    lifecycle.execute_step(run.steps.get(index=1).pk)
    lifecycle.advance(run.pk)
    instances = run.steps.filter(index=2, instance__isnull=False).order_by("instance")
    assert [(s.item, s.status) for s in instances] == [
        ("a.html", "queued"),
        ("b.html", "queued"),
        ("c.html", "pending"),
    ]
    for reply in ("read one", "read two", "read three", "GOOD three pages"):
        fake_provider.reply_text(reply)
    run = drive(run)
    assert run.status == "completed"
    assert run.steps.get(index=2, instance__isnull=True).output == "read one\nread two\nread three"


def test_each_over_empty_output_completes_with_nothing_to_fan_out(workspace, alice, desk, fake_provider):
    desk(
        "1. [[lister]] — List.\n2. [[reader]] — Read it.\n   each: lines\n3. [[reporter]] — Report.",
        lister={},
        reader={},
        reporter={},
    )
    fake_provider.reply_text("   ")
    fake_provider.reply_text("QUIET nothing")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "completed"
    messages = [e.data.get("message", "") for e in TraceEvent.objects.filter(run=run, kind="log")]
    assert "each: lines — the previous step's output has no items; nothing to fan out" in messages


def test_verify_file_fails_the_step_when_the_file_is_missing(workspace, alice, desk, fake_provider):
    desk("1. [[publisher]] — Publish.\n   verify: file outputs/receipt.json", publisher={})
    fake_provider.reply_text("GOOD published")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "failed"
    assert run.error == (
        "step 1 (publisher) failed: verify: file outputs/receipt.json — the step left no such file, or it is empty"
    )


def test_verify_file_passes_and_the_output_is_kept_as_an_artifact(workspace, alice, desk, fake_provider):
    desk("1. [[publisher]] — Publish.\n   verify: file outputs/receipt.json", publisher={"tools": "[write]"})
    fake_provider.reply_tool_use("Write", {"path": "outputs/receipt.json", "content": '{"ok": true}'})
    fake_provider.reply_text("GOOD published")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "completed"
    assert bytes(Artifact.objects.get(run=run).content) == b'{"ok": true}'


def test_retry_runs_a_failed_step_again_and_on_fail_continue_goes_on(workspace, alice, desk, fake_provider):
    desk(
        "1. [[flaky]] — Try.\n   verify: reply ^GOOD\n   retry: 1\n   on-fail: continue\n2. [[reporter]] — Report.",
        flaky={},
        reporter={},
    )
    fake_provider.reply_text("BAD first")
    fake_provider.reply_text("BAD second")
    fake_provider.reply_text("QUIET went on")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    first = run.steps.get(index=1)
    assert (first.status, first.attempt) == ("failed", 2)
    assert [t.n for t in first.tries.all()] == [1, 2]
    assert run.status == "completed"
    assert run.verdict == "QUIET"


def test_budget_stops_the_run_saying_which_step_hit_the_cap(workspace, alice, desk, fake_provider):
    # $0.01: step 1's call is reserved (max_tokens lowered to what $0.01 pays for) and costs $0.0063;
    # what is left then pays for no useful reply, so step 2's call is never made.
    desk("1. [[spender]] — Spend.\n2. [[spender]] — Spend more.", "budget: 0.01\n", spender={})
    fake_provider.reply_text("spent", usage=(100, 400))
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "failed"
    assert "budget reached" in run.error
    assert "at step 2 (spender)" in run.error
    assert len(fake_provider.requests) == 1


def test_memory_writes_become_a_revision_attributed_to_the_run(workspace, alice, desk, fake_provider):
    desk("1. [[learner]] — Learn.", learner={})
    fake_provider.reply_tool_use(
        "Write", {"path": "memory/fact.md", "content": "---\ntype: Fact\ntitle: t\ndescription: d\n---\nx\n"}
    )
    fake_provider.reply_text("GOOD learned")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "completed"
    assert Changeset.objects.filter(workspace=workspace, kind="run", run_public_id=run.public_id).exists()


def test_a_flow_naming_an_agent_that_does_not_exist_is_refused_before_step_1(workspace, alice, desk):
    desk("1. [[writer]] — Write.\n2. [[ghost]] — Haunt.", writer={})
    with pytest.raises(ApiError) as refused:
        check_start_run(workspace=workspace, user=alice, flow="weekly")
    assert str(refused.value) == (
        "flow: flows/weekly.md step 2 names [[ghost]], and there is no agent ghost in "
        "workspace rank-desk; nothing was started."
    )
    assert Run.objects.count() == 0


def test_a_provider_refusal_fails_the_step_with_the_refusal_line_on_its_trace(workspace, alice, desk, fake_provider):
    desk("1. [[writer]] — Write.", writer={})
    fake_provider.reply_status(429, headers={"retry-after": "30"})
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    step = run.steps.get()
    refusal = TraceEvent.objects.get(run=run, kind="refusal").data["line"]
    assert run.status == "failed"
    assert step.error == refusal
    assert refusal == (
        "the provider rate-limited this request (HTTP 429) and asked us to wait 30s — no second supply is configured"
    )


def test_desks_consults_another_desks_agent_whose_calls_count_toward_this_step(workspace, alice, desk, fake_provider):
    from accounts.models import Workspace

    other = Workspace.objects.create(account=workspace.account, name="pricing-desk")
    push(
        other,
        {
            "agents/expert/agent.md": agent_file("expert", fake_provider, tools="[read]"),
            "knowledge/prices.md": "---\ntype: Reference\ntitle: p\ndescription: d\n---\nwidget: 7\n",
        },
    )
    desk("1. [[lead]] — What does a widget cost?", lead={"tools": "[desks]", "extra": "limits: {calls: 2}\n"})
    fake_provider.reply_tool_use("consult", {"desk": "pricing-desk", "agent": "expert", "question": "Widget price?"})
    fake_provider.reply_tool_use("Read", {"path": "knowledge/prices.md"})
    fake_provider.reply_tool_use("Read", {"path": "knowledge/prices.md"})
    fake_provider.reply_text("seven")
    fake_provider.reply_text("GOOD — a widget costs 7")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.status == "completed", run.error
    assert fake_provider.requests[3].body["messages"][-1]["content"][0]["content"] == (
        "limit reached: calls 2 of 2 in this step — work with what you have, or say what more you would need"
    )
    assert fake_provider.requests[4].body["messages"][-1]["content"][0]["content"] == "seven"
    assert run.steps.get().limits_line == "limits: calls 2/2 — 1 call refused"


def test_a_program_sees_neither_other_sandboxes_nor_the_installs_data(workspace, alice, desk, fake_provider):
    import tempfile
    from pathlib import Path

    from django.conf import settings

    marker = Path(settings.DATA_DIR) / "secret-marker.txt"
    marker.write_text("install secret")
    Path("/dev/shm/foldrun-sandboxes").mkdir(mode=0o700, exist_ok=True)
    other = Path(tempfile.mkdtemp(prefix="foldrun-step-", dir="/dev/shm/foldrun-sandboxes"))
    (other / "theirs.txt").write_text("another tenant")
    try:
        desk("1. [[coder]] — Look around.", coder={"tools": "[code]"})
        fake_provider.reply_tool_use(
            "Bash", {"command": f"cat {marker}; ls {other.parent} | grep -c foldrun-step-; cat {other}/theirs.txt"}
        )
        fake_provider.reply_text("QUIET")
        drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
        seen = fake_provider.requests[1].body["messages"][-1]["content"][0]["content"]
        assert "install secret" not in seen
        assert "another tenant" not in seen
        assert seen.startswith("1\n")  # only its own sandbox in the sandbox folder
    finally:
        marker.unlink()
        (other / "theirs.txt").unlink()
        other.rmdir()


def test_a_program_cannot_put_a_frame_on_any_steps_live_panel(workspace, alice, desk, fake_provider):
    import shutil
    from pathlib import Path

    from runs import live_view

    shutil.rmtree(live_view.root(), ignore_errors=True)  # no step has drawn a frame yet: the folder is not there
    planted = live_view.folder("stp_planted")
    desk("1. [[coder]] — Look around.", coder={"tools": "[code]"})
    fake_provider.reply_tool_use(
        "Bash",
        {
            "command": f"mkdir -p {planted} && printf fake > {planted}/frame.jpg && "
            f'printf \'{{"url": "https://x.test", "at": 9e9}}\' > '
            f"{planted}/frame.json; ls {planted}"
        },
    )
    fake_provider.reply_text("QUIET")
    drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    seen = fake_provider.requests[1].body["messages"][-1]["content"][0]["content"]
    assert "frame.jpg" in seen  # it wrote, inside its own view of the data folder…
    assert not Path(planted).exists() and live_view.read("stp_planted") is None  # …which is not the real one


def test_an_internal_error_fails_the_step_with_a_sentence_rather_than_leaving_it_running(
    workspace, alice, desk, fake_provider, caplog
):
    # A kept plan whose verify: regex no longer compiles (the contract refuses it in a file; here it is forced).
    desk("1. [[writer]] — Write.", writer={})
    fake_provider.reply_text("GOOD")
    run = check_start_run(workspace=workspace, user=alice, flow="weekly")
    from runs import lifecycle

    lifecycle.advance(run.pk)
    run.plan = [{**run.plan[0], "verify": {"kind": "reply", "argument": "("}}]
    run.save(update_fields=["plan"])
    lifecycle.execute_step(run.steps.get().pk)
    run = drive(run)
    step = run.steps.get()
    assert (run.status, step.status) == ("failed", "failed")
    assert re.fullmatch(
        r"the step stopped on an internal error \(incident err_[0-9a-z]{10}; the platform's log has the "
        r"details\)",
        step.error,
    )
    code = re.search(r"err_[0-9a-z]{10}", step.error).group(0)
    assert any(code in r.getMessage() and r.exc_info for r in caplog.records)  # staff find the traceback by its code
