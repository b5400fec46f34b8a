"""Sandboxes that hold as root: in the program's mount namespace knowledge/ is read-only (the workspace's,
each agent's, the library's) for a program running as root too, and it cannot remount it; on a test run
everything outside the sandbox is read-only and /tmp is the program's own. Memory and state writes as ever."""

from __future__ import annotations

import os
import uuid

import pytest

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.runs.engine_helpers import SECRETS, agent_md, desk
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="proves what holds against a program running as root")

KNOWLEDGE = "---\ntype: Reference\ntitle: Targets\ndescription: d\n---\ngeelong\n"
# Tries every way a root program has to change a knowledge file, then writes memory/ as it may.
TAMPER = (
    "#!/bin/sh\nfor f in knowledge/targets.md agents/worker/knowledge/own.md library/knowledge/shared.md; do\n"
    '  chmod 0666 "$f" 2>/dev/null; echo tampered > "$f" 2>/dev/null && echo "wrote $f" || echo "refused $f"\n'
    "done\n"
    'mount -o remount,rw knowledge 2>/dev/null && echo remounted || echo "no remount"\n'
    'umount knowledge 2>/dev/null && echo unmounted || echo "no umount"\n'
    'echo learned > memory/fact.md && echo "memory ok"\n'
)


def _files(fake, tools: str) -> dict[str, str]:
    return {
        "agents/worker/agent.md": agent_md("worker", fake, tools=tools),
        "agents/worker/knowledge/own.md": KNOWLEDGE,
        "knowledge/targets.md": KNOWLEDGE,
        "tools/tamper/tool.md": "---\ntransport: script\nname: tamper\nrun: run.sh\ninterpreter: sh\n---\n",
        "tools/tamper/run.sh": TAMPER,
    }


def _step(files, **kw):
    request = StepRequest(run_id="run_s", label="1", agent="worker", task="Do it.", **kw)
    return run_step(desk(files, {"knowledge/shared.md": KNOWLEDGE}), request, LocalHost(SECRETS))


def test_a_root_script_cannot_change_knowledge_for_the_rest_of_its_step_and_memory_is_kept(fake_provider):
    fake_provider.reply_tool_use("tamper", {})
    fake_provider.reply_tool_use("Read", {"path": "knowledge/targets.md"})
    fake_provider.reply_text("GOOD")
    result = _step(_files(fake_provider, "[read, tamper]"))
    printed = fake_provider.requests[1].body["messages"][-1]["content"][0]["content"]
    assert "refused knowledge/targets.md" in printed
    assert "refused agents/worker/knowledge/own.md" in printed
    assert "refused library/knowledge/shared.md" in printed
    assert "no remount" in printed and "no umount" in printed and "memory ok" in printed
    assert "geelong" in fake_provider.requests[2].body["messages"][-1]["content"][0]["content"]
    assert result.refused_writes == []  # nothing changed to discard: it never changed
    assert result.writes == {"agents/worker/memory/fact.md": "learned\n"}  # its own memory


def test_on_a_test_run_a_program_writes_only_its_sandbox_and_a_private_tmp(fake_provider, tmp_path):
    marker = f"foldrun-probe-{uuid.uuid4().hex[:8]}"
    outside = tmp_path.parent / marker  # a folder the worker can write, outside the sandbox
    command = (
        f"echo x > /tmp/{marker} && echo 'tmp ok'; cat /tmp/{marker}; "
        f"echo x > {outside} 2>/dev/null && echo 'outside written' || echo 'outside refused'; "
        f"echo x > /var/tmp/{marker} 2>/dev/null && echo 'var written' || echo 'var refused'; "
        "echo out > outputs/report.txt && echo 'outputs ok'; echo a > state/ledger.md && echo 'state ok'"
    )
    fake_provider.reply_tool_use("Bash", {"command": command})
    fake_provider.reply_text("GOOD")
    result = _step({"agents/worker/agent.md": agent_md("worker", fake_provider, tools="[code]")}, is_test=True)
    printed = fake_provider.requests[1].body["messages"][-1]["content"][0]["content"]
    assert "tmp ok" in printed and "outside refused" in printed and "var refused" in printed
    assert "outputs ok" in printed and "state ok" in printed
    assert not (outside.exists() or os.path.exists(f"/tmp/{marker}") or os.path.exists(f"/var/tmp/{marker}"))
    assert result.outputs == {"outputs/report.txt": b"out\n"}
    assert result.writes == {"state/ledger.md": "a\n"}


def test_on_a_test_run_a_runtime_folder_under_tmp_is_kept_with_its_contents_and_read_only(fake_provider, tmp_path):
    # The venv cache (a per-tool environment) lives under /tmp wherever the data folder does — a CI clone, the
    # test suite's own — and the private /tmp must put it back whole, not as an empty folder of the same name.
    cache = tmp_path / "venvs"
    (cache / "env").mkdir(parents=True)
    (cache / "env" / "marker.txt").write_text("kept whole\n")
    command = (
        f"cat {cache}/env/marker.txt; echo x > {cache}/env/marker.txt 2>/dev/null && echo 'cache written' "
        "|| echo 'cache refused'"
    )
    fake_provider.reply_tool_use("Bash", {"command": command})
    fake_provider.reply_text("GOOD")
    _step({"agents/worker/agent.md": agent_md("worker", fake_provider, tools="[code]")}, is_test=True, venv_cache=cache)
    printed = fake_provider.requests[1].body["messages"][-1]["content"][0]["content"]
    assert "kept whole" in printed and "cache refused" in printed
    assert (cache / "env" / "marker.txt").read_text() == "kept whole\n"


@pytest.mark.e2e
def test_on_a_real_worker_a_root_script_leaves_knowledge_as_given(
    celery_worker_process, workspace, alice, fake_provider
):
    files = _files(fake_provider, "[read, tamper]")
    files["agents/worker/agent.md"] = agent_file("worker", fake_provider, tools="[read, tamper]")
    files["flows/tamper.md"] = "---\nname: tamper\n---\n1. [[worker]] — Change what you were given.\n"
    push(workspace, files)
    fake_provider.reply_tool_use("tamper", {})
    fake_provider.reply_tool_use("Read", {"path": "knowledge/targets.md"})
    fake_provider.reply_text("GOOD it held")
    run = check_start_run(workspace=workspace, user=alice, flow="tamper")
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=60)
    assert done.status == "completed", done.error
    tamper, read = TraceEvent.objects.filter(run=done, kind="tool_result").order_by("pk")
    assert "refused knowledge/targets.md" in tamper.data["content"]
    assert "refused agents/worker/knowledge/own.md" in tamper.data["content"]
    assert "no remount" in tamper.data["content"]
    assert "geelong" in read.data["content"] and "tampered" not in read.data["content"]
