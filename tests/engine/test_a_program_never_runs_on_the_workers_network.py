"""Issue 29, item 1: where the machine cannot make a program's namespaces, a real run's program does not run —
it fails closed with a sentence, never falling back to the worker's own network (only the laptop CLI, on the
user's own machine, runs it there, and says so). And Bash, like a script tool, gets the egress proxy only."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from tests.fakes.conftest_plugin import echo_server  # noqa: F401
from tests.runs.engine_helpers import SECRETS, agent_md, desk

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# The worker's process without `unshare` on its PATH: the probe finds no way to make a namespace.
WITHOUT_UNSHARE = textwrap.dedent("""
    import os, sys, tempfile
    from pathlib import Path
    from foldrun.engine.errors import ToolError
    from foldrun.engine.programs import Programs
    lines = []
    for required in (True, False):
        programs = Programs(Path(tempfile.mkdtemp()), is_test=False, hide_under=[], keep_visible=[],
                            redact=str, trace=lambda kind, data: None, log=lines.append, fence_required=required)
        try:
            print("ran:", programs.run_program([sys.executable, "-c", "print('on the host network')"], timeout=30,
                                               raise_on_error=True).strip())
        except ToolError as exc:
            print("refused:", exc)
    print("log:", lines[0] if lines else "")
""")


def test_without_namespaces_a_real_runs_program_fails_closed_and_only_the_laptop_falls_back():
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_UNSHARE],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO,
        env={"PATH": "/nonexistent", "PYTHONPATH": REPO, "HOME": "/tmp"},
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.splitlines()
    assert out[0] == (
        "refused: programs do not run on this machine: it cannot give a program its own network and "
        "mount namespaces (unshare -n and -m, or -r for a user namespace), and a step's program is "
        "never run on the worker's own network — see docs/operating.md"
    )
    assert out[1] == "ran: on the host network"  # fence_required=False: the laptop CLI only
    assert out[2] == (
        "log: programs run on this machine's own network, without a mount namespace: it cannot make "
        "them (knowledge/ is read-only by file mode only)"
    )


@pytest.mark.skipif(os.geteuid() != 0 and os.system("unshare -rn true") != 0, reason="needs network namespaces")
def test_bash_reaches_a_loopback_listener_only_through_the_proxy_and_is_refused_there(fake_provider, echo_server):
    command = (
        f"python3 -c \"import urllib.request as u\ntry: u.urlopen('{echo_server.url}/bash', timeout=5)\n"
        f"except Exception as e: print('fetch:', e)\" ; env | grep -c '^HTTP_PROXY=http://127.0.0.1:3128$'"
    )
    fake_provider.reply_tool_use("Bash", {"command": command})
    fake_provider.reply_text("GOOD")
    host = LocalHost(SECRETS)
    result = run_step(
        desk({"agents/worker/agent.md": agent_md("worker", fake_provider, tools="[code]")}),
        StepRequest(run_id="run_b", label="1", agent="worker", task="Do it.", allow_private_urls=False),
        host,
    )
    assert result.status == "completed", result.error
    printed = fake_provider.requests[1].body["messages"][-1]["content"][0]["content"]
    assert printed.startswith("fetch: HTTP Error 403: Forbidden\n1\n")  # and its HTTP_PROXY is the way out
    assert echo_server.seen == []
    port = echo_server.url.rsplit(":", 1)[1]
    assert any(
        data.get("message", "").startswith(f"a program's connection to 127.0.0.1:{port} was refused: ")
        for kind, data in host.events
        if kind == "log"
    )


@pytest.mark.skipif(os.geteuid() != 0 and os.system("unshare -rn true") != 0, reason="needs network namespaces")
def test_a_stdio_mcp_server_is_a_program_too_its_only_way_out_is_the_proxy(fake_provider, echo_server):
    server = os.path.join(REPO, "tests", "runs", "servers", "mcp_fetch.py")
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[fetcher]"),
        "tools/fetcher.md": f"---\ntransport: mcp\nname: fetcher\ncommand: {sys.executable}\nargs: ['{server}']\n---\n",
    }
    fake_provider.reply_tool_uses([("fetcher__proxy", {}), ("fetcher__fetch", {"url": echo_server.url + "/mcp"})])
    fake_provider.reply_text("GOOD")
    host = LocalHost(SECRETS)
    result = run_step(
        desk(files),
        StepRequest(run_id="run_m", label="1", agent="worker", task="Do it.", allow_private_urls=False),
        host,
    )
    assert result.status == "completed", result.error
    replies = [block["content"] for block in fake_provider.requests[1].body["messages"][-1]["content"]]
    assert replies[0] == "http://127.0.0.1:3128"
    assert replies[1].startswith("HTTP 403 refused by foldrun: 127.0.0.1 resolves to 127.0.0.1: ")
    assert echo_server.seen == []
    port = echo_server.url.rsplit(":", 1)[1]
    assert any(
        data.get("message", "").startswith(f"a program's connection to 127.0.0.1:{port} was refused: ")
        for kind, data in host.events
        if kind == "log"
    )  # said by the step's end at the latest
