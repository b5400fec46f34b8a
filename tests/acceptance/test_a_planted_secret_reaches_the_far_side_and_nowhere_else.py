"""Issue 4, item 3 (audit4): a planted value reaches the far side and nowhere
else — across a whole run (an http tool, a `secrets: proxied` script, a
script that reads its secret and prints it), the server-side `foldrun probe`
and the daily key check: not a log line (every logger, DEBUG), not the argv
of any subprocess, not a file left or removed, not the trace, a record, an
output, a model request or an API answer."""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from pathlib import Path

import pytest
from django.core import serializers

from runs.models import Run
from tests.fakes.conftest_plugin import echo_server, fake_provider  # noqa: F401
from tests.runs.helpers import drive, push
from vault.actions import do_set_secret

CRM = "crm-audit4-planted-7a7a7a"
MODEL = "model-audit4-planted-5b5b5b"
PEEK = "peek-audit4-planted-3c3c3c"
VALUES = (CRM, MODEL, PEEK)

SYNC = r"""import json, os, sys, urllib.request
args = json.load(sys.stdin)
request = urllib.request.Request(os.environ["FOLDRUN_EGRESS"] + args["url"],
                                 headers={"Authorization": "Bearer ${CRM_KEY}"})
with urllib.request.urlopen(request) as answer:
    print(answer.status, answer.read().decode())
"""
# A script that reads its (materialised) secret and carelessly prints it.
PEEK_SCRIPT = r"""import os
print("my key is", os.environ["PEEK_KEY"])
"""


class Seen:
    def __init__(self) -> None:
        self.argv: list[str] = []
        self.files: dict[str, bytes] = {}


@pytest.fixture
def watched(monkeypatch):
    """Observe the standard library: every subprocess's argv, and every
    directory's files just before something removes it (the step sandboxes)."""
    seen = Seen()
    real_init = subprocess.Popen.__init__
    real_rmtree = shutil.rmtree

    def popen_init(self, args, *a, **kw):
        seen.argv.append(json.dumps(args if isinstance(args, (list, tuple)) else [args], default=str))
        return real_init(self, args, *a, **kw)

    def rmtree(path, *a, **kw):
        root = Path(path)
        if root.is_dir():
            for file in root.rglob("*"):
                if file.is_file():
                    try:
                        seen.files[str(file)] = file.read_bytes()
                    except OSError:
                        pass
        return real_rmtree(path, *a, **kw)

    monkeypatch.setattr(subprocess.Popen, "__init__", popen_init)
    monkeypatch.setattr(shutil, "rmtree", rmtree)
    return seen


@pytest.fixture
def everything(transactional_db, alice_api, account, workspace, fake_provider, echo_server, watched, caplog, settings):
    caplog.set_level(logging.DEBUG)
    for name in ("httpcore", "django", "celery", "runs", "vault", "foldrun", "notify", "library", "accounts"):
        caplog.set_level(logging.DEBUG, logger=name)
    agent = (
        "---\nname: worker\ndescription: syncs\ntools: [crm, crm_sync, peek]\nsecrets: [CRM_KEY]\n"
        f"provider: {{name: anthropic, base_url: '{fake_provider.base_url}', key: '${{MODEL_KEY}}', "
        "model: claude-haiku-4-5}\n---\nSync the CRM.\n"
    )
    files = {
        "AGENTS.md": (
            f"---\nprovider: {{name: anthropic, base_url: '{fake_provider.base_url}', "
            "key: '${MODEL_KEY}', model: claude-haiku-4-5}\n---\nDefaults.\n"
        ),
        "agents/worker/agent.md": agent,
        "tools/crm.md": (
            f"---\ntransport: http\nname: crm\nbase: {echo_server.url}\nmethods: [GET]\n"
            "headers: {Authorization: 'Bearer ${CRM_KEY}'}\nquery: {api_key: '${CRM_KEY}'}\n---\n"
        ),
        "tools/crm_sync/tool.md": (
            "---\ntransport: script\nname: crm_sync\nrun: run.py\nargs: {url: what to fetch}\nsecrets: proxied\n---\n"
        ),
        "tools/crm_sync/run.py": SYNC,
        "tools/peek/tool.md": "---\ntransport: script\nname: peek\nrun: run.py\nsecrets: [PEEK_KEY]\n---\n",
        "tools/peek/run.py": PEEK_SCRIPT,
    }
    push(workspace, files)
    do_set_secret(account, workspace, "CRM_KEY", value=CRM, hosts=["127.0.0.1"])
    do_set_secret(account, workspace, "PEEK_KEY", value=PEEK)
    do_set_secret(account, None, "MODEL_KEY", value=MODEL)
    fake_provider.reply_tool_use("crm_sync", {"url": echo_server.url + "/v1/contacts"})
    fake_provider.reply_tool_use("crm", {"method": "GET", "path": "/v1/deals"})
    fake_provider.reply_tool_use("peek", {})
    fake_provider.reply_text("GOOD synced")
    started = alice_api.post("/api/workspaces/rank-desk/runs", {"agent": "worker", "task": "Sync."}, format="json")
    run = drive(Run.objects.get(public_id=started.json()["id"]))
    # The probe and the daily check, with the same model key.
    fake_provider.reply_tool_use("get_code", {})
    fake_provider.reply_echo_tool_result()
    probe = alice_api.post("/api/workspaces/rank-desk/probe", {"model": "claude-haiku-4-5"}, format="json")
    fake_provider.reply_text("ok")
    checked = alice_api.post("/api/account/providers")
    return {"run": run, "probe": probe, "checked": checked, "files": files}


def test_the_run_the_probe_and_the_check_happened_and_the_values_went_out(everything, fake_provider, echo_server):
    assert everything["run"].status == "completed"
    assert everything["probe"].json()["ok"] is True
    assert everything["checked"].json()["results"][0]["verdict"] == "ok"
    assert [r["headers"]["authorization"] for r in echo_server.seen] == [f"Bearer {CRM}", f"Bearer {CRM}"]
    assert echo_server.seen[1]["query"] == {"api_key": CRM}
    assert {r.headers["x-api-key"] for r in fake_provider.requests} == {MODEL}


def test_no_log_line_carries_a_value(everything, caplog):
    # Everything ran in the fixture: its records are the setup phase's, every logger at DEBUG.
    records = caplog.get_records("setup")
    text = "\n".join(caplog.handler.format(record) for record in records)
    assert len(records) > 10
    for value in VALUES:
        assert value not in text


def test_no_subprocess_was_given_a_value_as_an_argument(everything, watched):
    assert any("run.py" in argv for argv in watched.argv)
    for argv in watched.argv:
        for value in VALUES:
            assert value not in argv


def test_no_file_in_a_step_sandbox_carried_a_value(everything, watched):
    assert any(path.endswith("run.py") for path in watched.files)
    for path, content in watched.files.items():
        for value in VALUES:
            assert value.encode() not in content, path


def test_the_model_never_saw_a_value(everything, fake_provider):
    bodies = json.dumps([r.body for r in fake_provider.requests])
    for value in VALUES:
        assert value not in bodies
    assert "my key is [secret PEEK_KEY]" in bodies


def test_no_record_trace_output_or_api_answer_carries_a_value(everything, alice_api, account, workspace):
    from runs import models as run_models
    from vault.models import ProviderCheck

    run = everything["run"]
    places = [
        serializers.serialize("json", model.objects.all())
        for model in (run_models.Run, run_models.Step, run_models.TraceEvent, run_models.Artifact, ProviderCheck)
    ]
    base = f"/api/workspaces/rank-desk/runs/{run.public_id}"
    for path in (
        base,
        f"{base}/trace",  # the run's trace, paged apart from the run since issue 31
        f"{base}/status",
        f"{base}/artifacts",
        f"{base}/steps/1",
        "/api/workspaces/rank-desk/runs",
        "/api/secrets",
        "/api/workspaces/rank-desk/secrets",
        "/api/account/providers",
    ):
        places.append(alice_api.get(path).content.decode())
    places += [everything["probe"].content.decode(), everything["checked"].content.decode()]
    for place in places:
        for value in VALUES:
            assert value not in place


def test_the_trace_says_which_store_each_secret_came_from(everything):
    from runs.models import TraceEvent

    events = TraceEvent.objects.filter(step__run=everything["run"], kind="secret", data__has_key="store")
    stores = {(e.data["name"], e.data["store"]) for e in events}
    assert stores == {("CRM_KEY", "workspace vault"), ("PEEK_KEY", "workspace vault"), ("MODEL_KEY", "account vault")}


WRITER = r"""import os
with open("outputs/report.txt", "w") as out:
    out.write("key=" + os.environ["PEEK_KEY"] + "\n")
print("wrote outputs/report.txt")
"""


def test_a_value_a_script_writes_into_an_output_file_is_not_kept_as_is(
    transactional_db, alice_api, account, workspace, fake_provider
):
    push(
        workspace,
        {
            "agents/writer/agent.md": (
                "---\nname: writer\ndescription: writes\ntools: [report]\n"
                f"provider: {{name: anthropic, base_url: '{fake_provider.base_url}', "
                "model: claude-haiku-4-5}\n---\nWrite.\n"
            ),
            "tools/report/tool.md": "---\ntransport: script\nname: report\nrun: run.py\nsecrets: [PEEK_KEY]\n---\n",
            "tools/report/run.py": WRITER,
        },
    )
    do_set_secret(account, workspace, "PEEK_KEY", value=PEEK)
    fake_provider.reply_tool_use("report", {})
    fake_provider.reply_text("GOOD written")
    started = alice_api.post("/api/workspaces/rank-desk/runs", {"agent": "writer", "task": "Write."}, format="json")
    run = drive(Run.objects.get(public_id=started.json()["id"]))
    from runs.models import Artifact

    contents = [bytes(a.content) for a in Artifact.objects.filter(run=run)]
    assert run.status == "completed"
    assert contents
    assert all(PEEK.encode() not in content for content in contents)


ECHOED = "sk-audit4-echoed-by-the-provider-99"


@pytest.mark.parametrize("status", [400, 500])
def test_a_provider_that_echoes_the_key_in_its_error_does_not_put_it_on_the_record(
    account, alice, workspace, fake_provider, status
):
    from runs.actions import check_start_run
    from runs.models import TraceEvent

    push(
        workspace,
        {
            "agents/worker/agent.md": (
                "---\nname: worker\ndescription: d\ntools: [read]\n"
                f"provider: {{name: anthropic, base_url: '{fake_provider.base_url}', key: '${{MODEL_KEY}}', model: m}}\n"
                "---\nWork.\n"
            )
        },
    )
    do_set_secret(account, workspace, "MODEL_KEY", value=ECHOED)
    fake_provider.reply_status(status, message=f"invalid request for key {ECHOED}")
    run = drive(check_start_run(workspace=workspace, user=alice, agent="worker", task="Go."))
    step = run.steps.get()
    trace = json.dumps(list(TraceEvent.objects.filter(step=step).values_list("data", flat=True)))
    assert run.status == "failed"
    assert "invalid request for key [MODEL_KEY]" in step.error
    assert ECHOED not in step.error and ECHOED not in trace


def test_a_provider_that_echoes_the_key_in_its_error_is_not_echoed_by_the_key_check(
    alice_api, account, workspace, fake_provider
):
    from vault.probe import check_account_providers

    push(
        workspace,
        {
            "AGENTS.md": (
                f"---\nprovider: {{name: anthropic, base_url: '{fake_provider.base_url}', "
                "key: '${MODEL_KEY}', model: m}\n---\nx\n"
            )
        },
    )
    do_set_secret(account, workspace, "MODEL_KEY", value=ECHOED)
    fake_provider.reply_status(500, message=f"upstream rejected {ECHOED}")
    rows = check_account_providers(account.pk, report=False)
    assert rows[0].verdict == "provider-error"
    assert rows[0].message == "the provider answered HTTP 500: upstream rejected [MODEL_KEY]"
    assert ECHOED not in alice_api.get("/api/account/providers").content.decode()
