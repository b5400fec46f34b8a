"""docs/writing/first-desk.md, done as a reader does it: every command block run in order and every file the page
shows written into the desk where the page shows it, against a fresh server (live_server, a real Celery worker)
and the loopback model stub — to a run that parks at its gate, is approved, and ends GOOD."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

from django.core.management import call_command

from runs.models import Run

PAGE = Path(__file__).resolve().parents[2] / "docs" / "writing" / "first-desk.md"
FOLDRUN = str(Path(sys.executable).parent / "foldrun")
STDIN = {"login": "demo@foldrun.dev\ndemo-password-123\n", "secrets": "sk-ant-not-a-real-key\n"}
BLOCK = re.compile(r"(?:^<!-- desk: my-desk/(?P<path>\S+) -->\n)?^```(?P<lang>\w*)\n(?P<body>.*?)^```$", re.M | re.S)
ANTHROPIC = (
    "provider:\n  name: anthropic\n  base_url: https://api.anthropic.com\n  key: ${ANTHROPIC_API_KEY}\n"
    "  model: claude-sonnet-4-5\n"
)


def steps() -> list[tuple[str, str | list[str]]]:
    """("file", path, body) and ("command", argv) in the page's order."""
    out: list = []
    for block in BLOCK.finditer(PAGE.read_text()):
        if block.group("path"):
            out.append(("file", block.group("path"), block.group("body")))
        elif block.group("lang") == "sh":
            out += [
                ("command", shlex.split(line, comments=True))
                for line in block.group("body").splitlines()
                if shlex.split(line, comments=True)
            ]
    return out


def wait_for(run_id: str, statuses: set[str]) -> Run:
    for _ in range(600):
        run = Run.objects.get(public_id=run_id)
        if run.status in statuses:
            return run
        time.sleep(0.2)
    raise AssertionError(f"{run_id} is still {run.status}")


def test_the_first_desk_tutorial_runs_in_order_to_an_approved_good_brief(
    live_server, celery_worker_process, fake_provider, tmp_path
):
    call_command("seed_demo")  # what ./scripts/start does before it prints the demo sign-in
    env = {k: v for k, v in os.environ.items() if not k.startswith("FOLDRUN_URL") and k != "FOLDRUN_TOKEN"}
    env["FOLDRUN_HOME"] = str(tmp_path / "home")
    local = (
        "provider:\n  name: stub\n  base_url: "
        + fake_provider.openai_base_url
        + "\n  format: openai\n  model: stub-model\n"
    )
    for text in (
        "GOOD — three sentences, twenty words.",
        "Inspections rose 4 % this week.",
        "GOOD — Inspections rose 4 % this week.",
    ):
        fake_provider.reply_text(text)
    desk = tmp_path / "my-desk"
    verbs, run_id = [], ""
    for step in steps():
        if step[0] == "file":
            _, path, body = step
            (desk / path).parent.mkdir(parents=True, exist_ok=True)
            (desk / path).write_text(body.replace(ANTHROPIC, local))  # the model: the stub, as the README test does
            continue
        argv = [a.replace("http://127.0.0.1:8000", live_server.url) for a in step[1]]
        assert argv[0] in ("foldrun", ".venv/bin/foldrun"), argv
        if argv[1] in ("approve", "report"):
            argv = [run_id if a == "run_…" else a for a in argv]
            wait_for(run_id, {"awaiting-approval"} if argv[1] == "approve" else {"completed", "failed"})
        done = subprocess.run(
            [FOLDRUN, *argv[1:]],
            cwd=tmp_path,
            env=env,
            input=STDIN.get(argv[1], ""),
            capture_output=True,
            text=True,
            timeout=120,
            start_new_session=True,
        )
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        assert "Traceback" not in done.stderr, (argv, done.stderr)
        if argv[1] == "init":
            agents_md = (desk / "AGENTS.md").read_text()
            assert ANTHROPIC in agents_md
            (desk / "AGENTS.md").write_text(agents_md.replace(ANTHROPIC, local))
        if argv[1] == "run" and argv[2] == "morning-brief":
            run_id = re.search(r"\brun_\w+", done.stdout).group(0)
        if argv[1] == "check":  # (the stub's provider block draws a warning; the page's own files check clean)
            assert done.stdout.splitlines()[-1].startswith("0 errors"), done.stdout
        verbs.append(argv[1])
    assert verbs == [
        "login",
        "init",
        "check",
        "workspaces",
        "secrets",
        "deploy",
        "run",
        "check",
        "deploy",
        "run",
        "runs",
        "approve",
        "report",
        "check",
        "deploy",
    ]
    run = Run.objects.get(public_id=run_id)
    assert (run.status, run.verdict) == ("completed", "GOOD")
    assert run.steps.get(index=2).approvals.get().state == "approved"
    gated = next(r for r in fake_provider.requests if "Check this draft" in str(r.body["messages"]))
    assert "Inspections rose 4 % this week." in str(gated.body["messages"][-1]["content"])  # {{steps.1.output}}
