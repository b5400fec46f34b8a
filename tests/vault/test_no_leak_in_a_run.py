"""A whole run with secrets at the boundary: an http tool (host-side fill) and a
`secrets: proxied` script (egress proxy). The planted values reach the far side
and nowhere else — not the model, a file, an argument, an output, the trace,
a record or an API answer."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.core import serializers

from library.services import files_at
from runs.models import Run
from tests.runs.helpers import drive, push
from vault.actions import do_set_secret

CRM = "crm-planted-leakcheck-5150"
MODEL = "model-planted-leakcheck-8080"

SYNC = (
    r'''import hashlib, json, os, sys, urllib.request
args = json.load(sys.stdin)
request = urllib.request.Request(os.environ["FOLDRUN_EGRESS"] + args["url"],
                                 headers={"Authorization": "Bearer ${CRM_KEY}"})
with urllib.request.urlopen(request) as answer:
    print(answer.status, answer.read().decode())
print("env has the value:", any(hashlib.sha256(v.encode()).hexdigest() == "'''
    + hashlib.sha256(CRM.encode()).hexdigest()
    + r""""
                                 for v in os.environ.values()))
"""
)


@pytest.fixture
def ran(transactional_db, alice_api, account, workspace, fake_provider, echo_server):
    # transactional_db: the egress proxy writes its trace lines from its own thread.
    agent = (
        "---\nname: worker\ndescription: syncs\ntools: [crm, crm_sync]\nsecrets: [CRM_KEY]\n"
        f"provider: {{name: anthropic, base_url: '{fake_provider.base_url}', key: '${{MODEL_KEY}}', model: claude-x}}\n"
        "---\nSync the CRM.\n"
    )
    push(
        workspace,
        {
            "agents/worker/agent.md": agent,
            "tools/crm.md": (
                f"---\ntransport: http\nname: crm\nbase: {echo_server.url}\nmethods: [GET]\n"
                "headers: {Authorization: 'Bearer ${CRM_KEY}'}\n---\n"
            ),
            "tools/crm_sync/tool.md": "---\ntransport: script\nname: crm_sync\nrun: run.py\nargs: {url: what to fetch}\n"
            "secrets: proxied\n---\n",
            "tools/crm_sync/run.py": SYNC,
        },
    )
    do_set_secret(account, workspace, "CRM_KEY", value=CRM, hosts=["127.0.0.1"])
    do_set_secret(account, None, "MODEL_KEY", value=MODEL)
    fake_provider.reply_tool_use("crm_sync", {"url": echo_server.url + "/v1/contacts"})
    fake_provider.reply_tool_use("crm", {"method": "GET", "path": "/v1/deals"})
    fake_provider.reply_text("GOOD synced")
    started = alice_api.post("/api/workspaces/rank-desk/runs", {"agent": "worker", "task": "Sync."}, format="json")
    run = drive(Run.objects.get(public_id=started.json()["id"]))
    return run


def test_the_values_went_out_to_the_far_side_only(ran, fake_provider, echo_server):
    assert ran.status == "completed", ran.error if hasattr(ran, "error") else ran.status
    assert [r["headers"]["authorization"] for r in echo_server.seen] == [f"Bearer {CRM}", f"Bearer {CRM}"]
    assert all(r.headers["x-api-key"] == MODEL for r in fake_provider.requests)


def test_the_model_never_saw_a_value_and_the_script_had_none_in_its_environment(ran, fake_provider):
    bodies = json.dumps([r.body for r in fake_provider.requests])
    assert CRM not in bodies and MODEL not in bodies
    assert "env has the value: False" in bodies


def test_no_record_file_or_api_answer_carries_a_value(ran, alice_api, account, workspace):
    from runs import models as run_models

    rows = []
    for model in (run_models.Run, run_models.Step, run_models.TraceEvent, run_models.Artifact):
        rows.append(serializers.serialize("json", model.objects.all()))
    files = {path: rev.content for path, rev in files_at(account, workspace).items()}
    base = f"/api/workspaces/rank-desk/runs/{ran.public_id}"
    answers = [
        alice_api.get(path).content.decode()
        for path in (
            base,
            f"{base}/trace",  # the run's trace, paged apart from the run since issue 31
            f"{base}/status",
            f"{base}/artifacts",
            "/api/workspaces/rank-desk/runs",
            "/api/secrets",
            "/api/workspaces/rank-desk/secrets",
            "/api/account/providers",
        )
    ]
    for place in rows + [json.dumps(files)] + answers:
        assert CRM not in place and MODEL not in place


def test_the_trace_says_which_store_each_secret_came_from(ran):
    from runs.models import TraceEvent

    text = json.dumps(list(TraceEvent.objects.filter(step__run=ran).values("kind", "data")), ensure_ascii=False)
    assert "egress: GET 127.0.0.1/v1/contacts → 200 [CRM_KEY]" in text
    assert "CRM_KEY" in text and "workspace" in text
