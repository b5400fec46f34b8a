"""Tool files: http (secrets host-side, methods, rate, openapi, operations), script (args, stdin, timeout,
exit codes, secrets, test runs), MCP (a local process through the SDK) — against loopback servers."""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path

import pytest

from foldrun.engine import StepRequest, run_step
from foldrun.engine.local import LocalHost
from tests.fakes.json_api import JsonApi
from tests.runs.engine_helpers import SECRETS, agent_md, desk

SERVERS = Path(__file__).parent / "servers"


@pytest.fixture
def api():
    receiver = JsonApi()
    yield receiver
    receiver.stop()


def step(files, host, **kw):
    kw.setdefault("allow_private_urls", True)
    return run_step(desk(files), StepRequest(run_id="run_t", label="1", agent="worker", task="Do it.", **kw), host)


def results(fake, n=1):
    return fake.requests[n].body["messages"][-1]["content"]


# ------------------------------------------------------------------ http


def test_an_http_tool_fills_the_secret_host_side_and_the_model_never_sees_it(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[crm]"),
        "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}/v1\n"
        "headers: {Authorization: 'Bearer ${CRM_TOKEN}'}\nquery: {key: '${CRM_TOKEN}'}\n---\n",
    }
    fake_provider.reply_tool_use("crm", {"path": "/contacts", "query": {"q": "ann"}})
    fake_provider.reply_text("GOOD")
    host = LocalHost({**SECRETS, "CRM_TOKEN": "crm-secret-value"}, store="workspace vault")
    step(files, host)
    sent = api.requests[0]
    assert sent["headers"]["Authorization"] == "Bearer crm-secret-value"
    assert sent["path"] == "/v1/contacts?key=crm-secret-value&q=ann"
    assert "crm-secret-value" not in json.dumps([r.body for r in fake_provider.requests])
    assert ("secret", {"name": "CRM_TOKEN", "store": "workspace vault", "withheld": False}) in host.events
    assert "crm-secret-value" not in json.dumps(host.events)


def test_a_query_string_the_model_writes_in_the_path_reaches_the_api(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[crm]"),
        "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}/v1\nquery: {{key: fixed}}\n---\n",
    }
    fake_provider.reply_tool_use("crm", {"path": "/contacts?page=2&sort=name", "query": {"q": "ann"}})
    fake_provider.reply_text("GOOD")
    step(files, LocalHost(SECRETS))
    assert api.requests[0]["path"] == "/v1/contacts?page=2&sort=name&key=fixed&q=ann"


def test_an_http_tool_with_no_methods_is_read_only(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[crm]"),
        "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}\n---\n",
    }
    fake_provider.reply_tool_use("crm", {"method": "POST", "path": "/contacts", "body": {"a": 1}})
    fake_provider.reply_text("BAD")
    step(files, LocalHost(SECRETS))
    assert api.requests == []
    assert results(fake_provider)[0]["is_error"] is True


def test_an_http_tool_over_its_rate_waits_rather_than_fails(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[crm]"),
        "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}\nrate: 5/s\n---\n",
    }
    fake_provider.reply_tool_uses([("crm", {"path": "/a"}), ("crm", {"path": "/b"}), ("crm", {"path": "/c"})])
    fake_provider.reply_text("GOOD")
    step(files, LocalHost(SECRETS))
    assert len(api.requests) == 3
    assert api.requests[2]["at"] - api.requests[0]["at"] >= 0.35
    assert not any(r.get("is_error") for r in results(fake_provider))


def test_an_http_call_that_times_out_is_an_error_the_model_sees(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[crm]"),
        "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}\ntimeout: 0.3\n---\n",
    }
    fake_provider.reply_tool_use("crm", {"path": "/slow"})
    fake_provider.reply_text("BAD")
    result = step(files, LocalHost(SECRETS))
    assert results(fake_provider)[0]["content"] == "crm: GET /slow timed out after 0.3s"
    assert result.status == "completed"


OPENAPI = {
    "openapi": "3.0.0",
    "info": {"title": "t", "version": "1"},
    "paths": {
        "/contacts": {
            "get": {"operationId": "listContacts", "parameters": [{"name": "q", "in": "query"}]},
            "post": {"operationId": "createContact", "requestBody": {"required": True}},
        },
        "/contacts/{id}": {"delete": {"operationId": "deleteContact", "parameters": [{"name": "id", "in": "path"}]}},
    },
}


def test_openapi_turns_one_tool_into_one_typed_tool_per_allowed_operation(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[crm]"),
        "tools/crm/tool.md": f"---\ntransport: http\nname: crm\nbase: {api.url}\nmethods: [GET, POST]\n"
        "openapi: openapi.json\noperations: [listContacts, POST /contacts]\n---\n",
        "tools/crm/openapi.json": json.dumps(OPENAPI),
    }
    fake_provider.reply_tool_use("crm_listContacts", {"q": "ann"})
    fake_provider.reply_text("GOOD")
    step(files, LocalHost(SECRETS))
    offered = sorted(t["name"] for t in fake_provider.requests[0].body["tools"])
    assert [n for n in offered if n.startswith("crm")] == ["crm_createContact", "crm_listContacts"]
    assert api.requests[0]["path"] == "/contacts?q=ann"


def test_operations_fail_closed_when_the_document_does_not_load(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[crm]"),
        "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}\nopenapi: {api.url}/missing.json\n"
        "operations: [listContacts]\n---\n",
    }
    fake_provider.reply_text("QUIET")
    host = LocalHost(SECRETS)
    step(files, host)
    offered = [t["name"] for t in fake_provider.requests[0].body.get("tools", [])]
    assert not any(n.startswith(("crm", "call_crm")) for n in offered)
    assert any("the API has no tools that run" in d.get("message", "") for k, d in host.events if k == "log")


def test_an_outward_http_call_is_refused_on_a_test_run(fake_provider, api):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[crm]"),
        "tools/crm.md": f"---\ntransport: http\nname: crm\nbase: {api.url}\nmethods: [GET, POST]\n---\n",
    }
    fake_provider.reply_tool_use("crm", {"method": "POST", "path": "/send", "body": {"to": "x"}})
    fake_provider.reply_text("QUIET")
    host = LocalHost(SECRETS)
    step(files, host, is_test=True)
    assert api.requests == []
    assert (
        results(fake_provider)[0]["content"] == "test run: POST /send was not sent — a test run makes no outward calls"
    )


# ------------------------------------------------------------------ script

ECHO = (
    "import json, os, sys\nargs = json.load(sys.stdin)\n"
    "print(json.dumps({'argv': sys.argv[1:], 'stdin': args, 'key': os.environ.get('SEND_KEY'),"
    " 'test': os.environ.get('FOLDRUN_TEST_MODE')}))\n"
)


def script_tool(extra: str = "", program: str = ECHO) -> dict:
    return {
        "tools/mailer/tool.md": f"---\ntransport: script\nname: mailer\nrun: run.py\n"
        f"args: {{to: who, n: how many}}\n{extra}---\n",
        "tools/mailer/run.py": program,
    }


def test_a_script_gets_its_arguments_as_flags_and_json_on_stdin_and_its_secret(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[mailer]"),
        **script_tool("secrets: [SEND_KEY]\n"),
    }
    fake_provider.reply_tool_use("mailer", {"to": "ann", "n": 2})
    fake_provider.reply_text("GOOD")
    host = LocalHost({**SECRETS, "SEND_KEY": "real-send-key"})
    step(files, host)
    printed = json.loads(results(fake_provider)[0]["content"].replace("[secret SEND_KEY]", "real-send-key"))
    assert printed["argv"] == ["--to", "ann", "--n", "2"]
    assert printed["stdin"] == {"to": "ann", "n": 2}
    assert printed["key"] == "real-send-key"
    assert "real-send-key" not in json.dumps(fake_provider.requests[1].body)


def test_on_a_test_run_an_outward_script_reads_TEST_MODE_WITHHELD_and_has_no_network(fake_provider, api):
    program = ECHO + (
        f"import urllib.request\ntry:\n    urllib.request.urlopen('{api.url}/x', timeout=2)\n"
        "    print('network: yes')\nexcept Exception as exc:\n    print('network: no')\n"
    )
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[mailer]"),
        **script_tool("secrets: [SEND_KEY]\noutward: true\ntest_mode: allow\n", program),
    }
    fake_provider.reply_tool_use("mailer", {"to": "ann"})
    fake_provider.reply_text("QUIET")
    host = LocalHost({**SECRETS, "SEND_KEY": "real-send-key"})
    step(files, host, is_test=True)
    out = results(fake_provider)[0]["content"]
    first = json.loads(out.splitlines()[0])
    assert (first["key"], first["test"]) == ("TEST_MODE_WITHHELD", "1")
    assert "network: no" in out
    assert api.requests == []
    assert any("no network" in d.get("message", "") for k, d in host.events if k == "log")


def test_test_mode_allow_gives_a_reader_the_real_value_on_a_test_run(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[mailer]"),
        **script_tool("secrets: [SEND_KEY]\ntest_mode: allow\n"),
    }
    fake_provider.reply_tool_use("mailer", {"to": "ann"})
    fake_provider.reply_text("QUIET")
    step(files, LocalHost({**SECRETS, "SEND_KEY": "real-send-key"}), is_test=True)
    printed = json.loads(results(fake_provider)[0]["content"].replace("[secret SEND_KEY]", "real-send-key"))
    assert (printed["key"], printed["test"]) == ("real-send-key", "1")


def test_a_script_that_exits_non_zero_shows_the_tail_of_its_stderr(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[mailer]"),
        **script_tool(program="import sys\nsys.stderr.write('boom: bad input\\n')\nsys.exit(3)\n"),
    }
    fake_provider.reply_tool_use("mailer", {})
    fake_provider.reply_text("BAD")
    host = LocalHost(SECRETS)
    step(files, host)
    assert results(fake_provider)[0]["content"] == "mailer exited with status 3\nboom: bad input"
    assert ("log", {"program": "mailer", "stderr": "boom: bad input\n"}) in host.events


def test_a_script_that_runs_past_its_timeout_is_stopped(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[mailer]"),
        **script_tool("timeout: 1\n", "import time\ntime.sleep(30)\n"),
    }
    fake_provider.reply_tool_use("mailer", {})
    fake_provider.reply_text("BAD")
    started = time.monotonic()
    step(files, LocalHost(SECRETS))
    assert time.monotonic() - started < 15
    assert results(fake_provider)[0]["content"] == "mailer: timed out after 1s and was stopped"


def test_a_missing_secret_fails_the_step_naming_it(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[mailer]"),
        **script_tool("secrets: [SEND_KEY]\n"),
    }
    result = step(files, LocalHost(SECRETS))
    assert result.status == "failed"
    assert result.error == "secret SEND_KEY is not in the vault (neither the workspace's nor the account's)"


def test_a_script_cannot_change_knowledge(fake_provider):
    program = (
        "try:\n    open('knowledge/prices.md', 'w').write('changed')\n    print('done')\n"
        "except OSError as exc:\n    print('refused:', exc.strerror)\n"
    )
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[mailer]"),
        **script_tool(program=program),
        "knowledge/prices.md": "---\ntype: Reference\ntitle: p\ndescription: d\n---\noriginal\n",
    }
    fake_provider.reply_tool_use("mailer", {})
    fake_provider.reply_text("GOOD")
    result = step(files, LocalHost(SECRETS))
    # knowledge/ is mounted read-only in the program's namespace: even as root the write never happens.
    assert "refused: Read-only file system" in results(fake_provider)[0]["content"]
    assert result.writes == {}
    assert result.refused_writes == []


# ------------------------------------------------------------------ mcp


def test_an_mcp_tool_file_starts_a_local_server_and_exposes_its_tools(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[notes]", extra="limits: {notes: 1}\n"),
        "tools/notes.md": f"---\ntransport: mcp\nname: notes\ncommand: {sys.executable}\n"
        f"args: ['{SERVERS / 'mcp_notes.py'}']\nenv: {{NOTES_TOKEN: '${{NOTES_TOKEN}}'}}\n---\n",
    }
    fake_provider.reply_tool_uses([("notes__whoami", {}), ("notes__add", {"a": 2, "b": 3})])
    fake_provider.reply_text("GOOD")
    result = step(files, LocalHost({**SECRETS, "NOTES_TOKEN": "tok-123456"}))
    offered = sorted(t["name"] for t in fake_provider.requests[0].body["tools"] if t["name"].startswith("notes"))
    assert offered == ["notes__add", "notes__whoami"]
    replies = results(fake_provider)
    assert replies[0]["content"] == "token [secret NOTES_TOKEN]"
    assert replies[1]["content"].startswith("limit reached: notes 1 of 1 in this step")
    assert result.limits_line == "limits: notes 1/1 — 1 call refused"


def test_mcp_servers_inline_in_an_agent_are_granted_too(fake_provider):
    extra = f"mcpServers:\n  calc:\n    command: {sys.executable}\n    args: ['{SERVERS / 'mcp_notes.py'}']\n"
    files = {"agents/worker/agent.md": agent_md("worker", fake_provider, tools="[]", extra=extra)}
    fake_provider.reply_tool_use("calc__add", {"a": 40, "b": 2})
    fake_provider.reply_text("GOOD")
    step(files, LocalHost(SECRETS))
    assert results(fake_provider)[0]["content"] == "42"


def test_a_local_mcp_server_that_exits_at_once_fails_the_step_with_its_own_last_words(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[notes]"),
        "tools/notes.md": "---\ntransport: mcp\nname: notes\ncommand: /bin/sh\n"
        "args: ['-c', 'echo starting >&2; echo the notes file is locked >&2; exit 3']\n---\n",
    }
    result = step(files, LocalHost(SECRETS))
    assert result.status == "failed"
    assert result.error == "notes: the MCP server could not be reached: the notes file is locked"
    assert fake_provider.requests == []  # no model call is paid for a step whose tools could not be made


def test_a_remote_mcp_server_that_is_not_listening_says_so_not_how_the_sdk_groups_errors(fake_provider):
    with socket.socket() as probe:  # a loopback port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[remote]"),
        "tools/remote.md": f"---\ntransport: mcp\nname: remote\nurl: http://127.0.0.1:{port}/mcp\n---\n",
    }
    result = step(files, LocalHost(SECRETS))
    assert result.status == "failed"
    assert result.error.startswith("remote: the MCP server could not be reached: ")
    assert "TaskGroup" not in result.error and "sub-exception" not in result.error
    assert result.error != "remote: the MCP server could not be reached: "


def test_on_a_test_run_a_local_mcp_server_runs_with_no_network_and_a_remote_one_is_not_reached(fake_provider):
    files = {
        "agents/worker/agent.md": agent_md("worker", fake_provider, tools="[notes, remote]"),
        "tools/notes.md": f"---\ntransport: mcp\nname: notes\ncommand: {sys.executable}\n"
        f"args: ['{SERVERS / 'mcp_notes.py'}']\n---\n",
        "tools/remote.md": "---\ntransport: mcp\nname: remote\nurl: http://127.0.0.1:9/mcp\n---\n",
    }
    fake_provider.reply_tool_use("notes__add", {"a": 1, "b": 1})
    fake_provider.reply_text("QUIET")
    host = LocalHost(SECRETS)
    # The server's script lives in this checkout, which a test run's private /tmp hides when the checkout is under
    # /tmp (a CI clone): kept visible, as the platform's runtime folders are.
    result = step(files, host, is_test=True, keep_visible=[str(SERVERS)])
    assert len(fake_provider.requests) == 2, (result.status, result.error)
    assert results(fake_provider)[0]["content"] == "2"
    logs = [d.get("message", "") for k, d in host.events if k == "log"]
    assert "test run: the MCP server notes runs with no network (outward calls fail closed)" in logs
    assert "test run: the remote MCP server remote is not reached — outward calls fail closed" in logs


def test_a_program_cannot_see_the_workers_processes_or_their_environment(fake_provider):
    files = {"agents/worker/agent.md": agent_md("worker", fake_provider, tools="[code]")}
    fake_provider.reply_tool_use(
        "Bash", {"command": f"test -e /proc/{os.getpid()}/environ && echo visible || echo hidden"}
    )
    fake_provider.reply_text("QUIET")
    step(files, LocalHost(SECRETS))
    assert results(fake_provider)[0]["content"].startswith("hidden")
