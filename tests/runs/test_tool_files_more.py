"""More tool-file fields: runtime packages in a cached per-tool environment, requirements.txt, interpreter,
proxied secrets through the egress proxy, a remote MCP server with headers, and symlinks out of the sandbox."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from foldrun.engine.tools.script import read_requirements
from runs.actions import check_start_run
from tests.runs.engine_helpers import SECRETS, agent_md, desk
from tests.runs.helpers import agent_file, drive, push
from tests.runs.test_tool_files import api  # noqa: F401 - the loopback API fixture
from vault.actions import do_set_secret

SERVERS = Path(__file__).parent / "servers"


def step(files, host, **kw):
    kw.setdefault("allow_private_urls", True)
    return run_step(desk(files), StepRequest(run_id="run_t", label="1", agent="worker", task="Do it.", **kw), host)


def first_result(fake):
    return fake.requests[1].body["messages"][-1]["content"][0]["content"]


def test_requirements_are_read_as_the_spec_says():
    text = (
        "pandas==2.2.0 \\\n    --hash=sha256:abc\n-r other.txt\n-e .\nrequests>=2\n"
        "colorama; python_version < '3.11'\nmylib @ https://example.com/mylib.whl\n# a comment\n"
    )
    packages, log = read_requirements(text)
    assert packages == ["pandas==2.2.0", "requests>=2"]
    assert log == [
        "requirements.txt: pandas==2.2.0 is installed without hash checking",
        "requirements.txt: option -r is not applied",
        "requirements.txt: option -e is not applied",
        "requirements.txt: colorama; python_version < '3.11' has an environment marker; refused",
        "requirements.txt: mylib @ https://example.com/mylib.whl names a URL; refused",
    ]


def test_runtime_packages_install_into_a_per_tool_environment_cached_by_their_hash(fake_provider, tmp_path):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[sixer]"),
        "tools/sixer/tool.md": "---\ntransport: script\nname: sixer\nrun: run.py\nruntime: {packages: [six]}\n---\n",
        "tools/sixer/run.py": "import six, sys\nprint(six.__name__, sys.prefix)\n",
    }
    cache = tmp_path / "venvs"
    fake_provider.reply_tool_use("sixer", {})
    fake_provider.reply_text("GOOD")
    step(files, LocalHost(SECRETS), venv_cache=cache)
    name, prefix = first_result(fake_provider).split()
    assert name == "six"
    assert Path(prefix).parent == cache
    fake_provider.reply_tool_use("sixer", {})
    fake_provider.reply_text("GOOD")
    started = time.monotonic()
    step(files, LocalHost(SECRETS), venv_cache=cache)
    assert time.monotonic() - started < 3
    assert fake_provider.requests[3].body["messages"][-1]["content"][0]["content"].split()[1] == prefix


def test_interpreter_says_what_runs_the_file_when_the_extension_does_not(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[shout]"),
        "tools/shout/tool.md": "---\ntransport: script\nname: shout\nrun: prog.txt\ninterpreter: bash\n"
        "args: {word: what to shout}\n---\n",
        "tools/shout/prog.txt": 'echo "bash says $2"\n',
    }
    fake_provider.reply_tool_use("shout", {"word": "hi"})
    fake_provider.reply_text("GOOD")
    step(files, LocalHost(SECRETS))
    assert first_result(fake_provider).strip() == "bash says hi"


def test_a_proxied_script_sends_through_the_egress_proxy_and_never_holds_the_value(
    workspace, alice, fake_provider, api
):
    program = (
        "import os, urllib.request\n"
        "req = urllib.request.Request(os.environ['FOLDRUN_EGRESS'] + '" + api.url + "/hello',"
        " headers={'Authorization': 'Bearer ${CRM_TOKEN}'})\n"
        "print(urllib.request.urlopen(req).read().decode())\n"
        "print('env has value:', any('crm-proxied-value' in v for v in os.environ.values()))\n"
    )
    push(
        workspace,
        {
            "agents/a/agent.md": agent_file("a", fake_provider, tools="[crm]", extra="secrets: [CRM_TOKEN]\n"),
            "tools/crm/tool.md": "---\ntransport: script\nname: crm\nrun: run.py\nsecrets: proxied\n---\n",
            "tools/crm/run.py": program,
            "flows/f.md": "---\nname: f\n---\n1. [[a]] — Go.\n",
        },
    )
    do_set_secret(workspace.account, workspace, "CRM_TOKEN", value="crm-proxied-value", hosts=["127.0.0.1"])
    fake_provider.reply_tool_use("crm", {})
    fake_provider.reply_text("GOOD")
    run = drive(check_start_run(workspace=workspace, user=alice, flow="f"))
    assert run.status == "completed", run.error
    assert api.requests[0]["headers"]["Authorization"] == "Bearer crm-proxied-value"
    assert "env has value: False" in first_result(fake_provider)


def test_a_remote_mcp_server_is_reached_by_url_with_its_headers_filled_host_side(fake_provider):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, str(SERVERS / "mcp_notes.py"), "--http", str(port), "tok-remote-1"])
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        files = {
            "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[remote]"),
            "tools/remote.md": f"---\ntransport: mcp\nname: remote\nurl: http://127.0.0.1:{port}/mcp\n"
            "headers: {Authorization: 'Bearer ${REMOTE_TOKEN}'}\n---\n",
        }
        fake_provider.reply_tool_use("remote__add", {"a": 1, "b": 2})
        fake_provider.reply_text("GOOD")
        result = step(files, LocalHost({**SECRETS, "REMOTE_TOKEN": "tok-remote-1"}))
        assert result.status == "completed", result.error
        assert first_result(fake_provider) == "3"
    finally:
        server.terminate()
        server.wait(10)


def test_a_symlink_out_of_the_sandbox_is_refused_before_any_work(fake_provider):
    files = {"agents/worker/agent.md": agent_md("worker", fake_provider, tools="[read, code]")}
    fake_provider.reply_tool_use("Bash", {"command": "ln -s /etc state/out"})
    fake_provider.reply_tool_use("Read", {"path": "state/out/hostname"})
    fake_provider.reply_text("BAD")
    step(files, LocalHost(SECRETS))
    refused = fake_provider.requests[2].body["messages"][-1]["content"][0]
    assert refused["is_error"] is True
    assert refused["content"] == "state/out/hostname: it leads outside the workspace (a symlink), refused"
