"""Issue 32, item 3: tools.md — "`python3` (or `python`) means the tool's own environment when it has a
`runtime:`, not the image's bare python" — whatever the program file is called: `run: prog` or `run: prog.txt`
with `interpreter: python3` imports the runtime's packages, in a step here and in a run on a real worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import wait_for
from tests.runs.engine_helpers import SECRETS, agent_md, desk
from tests.runs.helpers import agent_file, push

PROGRAM = "import six, sys\nprint(six.__name__, sys.prefix)\n"


def tool(run: str, interpreter: str) -> dict[str, str]:
    return {
        "tools/sixer/tool.md": f"---\ntransport: script\nname: sixer\nrun: {run}\ninterpreter: {interpreter}\n"
        "runtime: {packages: [six]}\n---\n",
        f"tools/sixer/{run}": PROGRAM,
    }


@pytest.mark.parametrize("run, interpreter", [("prog", "python3"), ("prog.txt", "python3"), ("prog.sh", "python")])
def test_interpreter_python3_runs_the_runtimes_python_whatever_the_program_is_called(
    fake_provider, tmp_path, run, interpreter
):
    files = {"agents/worker/agent.md": agent_md("worker", fake_provider, tools="[sixer]"), **tool(run, interpreter)}
    cache = tmp_path / "venvs"
    fake_provider.reply_tool_use("sixer", {})
    fake_provider.reply_text("GOOD")
    host = LocalHost(SECRETS)
    run_step(desk(files), StepRequest(run_id="run_t", label="1", agent="worker", task="Do it.", venv_cache=cache), host)
    answer = [d["content"] for kind, d in host.events if kind == "tool_result"][0]
    name, prefix = answer.split()
    assert name == "six"
    assert Path(prefix).parent == cache


@pytest.mark.e2e
def test_on_a_real_worker_interpreter_python3_imports_the_runtimes_package(
    celery_worker_process, workspace, alice, fake_provider
):
    push(
        workspace,
        {
            "agents/worker/agent.md": agent_file("worker", fake_provider, tools="[sixer]"),
            "flows/six.md": "---\nname: six\n---\n1. [[worker]] — Run it.\n",
            **tool("prog", "python3"),
        },
    )
    fake_provider.reply_tool_use("sixer", {})
    fake_provider.reply_text("GOOD")
    run = check_start_run(workspace=workspace, user=alice, flow="six")
    done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=300)
    assert done.status == "completed", done.error
    said = [e.data["content"] for e in TraceEvent.objects.filter(run=done, kind="tool_result").order_by("id")]
    assert said[0].startswith("six "), said
