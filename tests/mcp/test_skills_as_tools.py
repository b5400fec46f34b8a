"""Skills as tools through /mcp: list_skills, run_skill, get_skill_run and skill_<name>, on a real worker and
real Chromium. A skill is a SKILL.md pushed to the account's library; the browser agent that follows its
procedure is the gallery's, on the account's provider (the loopback stand-in of tests/fakes/providers.py)."""

from __future__ import annotations

import httpx
import pytest

from browsing.models import BrowserSession, SkillRun
from foldrun.contract import Desk
from foldrun.contract.check import check
from library.actions.writes import FileWrite, do_write_files
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.mcp_site import arena
from tests.mcp.conftest import token_for
from tests.mcp.test_tasks_and_reports import browse, provider_desk, text_of  # noqa: F401

pytestmark = pytest.mark.e2e

PRICE_CHECK = """---
name: price-check
description: Read a plan's price on a pricing page.
inputs:
  - {name: url, type: url, required: true, description: The pricing page}
  - {name: plan, type: string, enum: [Free, Pro], default: Pro}
  - {name: pages, type: 'string[]'}
  - {name: login, type: secret, description: The staging gate's password}
grants: [network_capture]
---
Open url, find the plan's price and say it.
"""
NO_INPUTS = "---\nname: just-notes\ndescription: Notes on writing release notes.\n---\nWrite them short.\n"
PROBE = """---
name: header-probe
description: Send active probes for missing security headers.
inputs:
  - {name: url, type: url, required: true}
grants: [active_scan]
---
Probe url.
"""


def push_skills(account, files: dict[str, str]) -> None:
    do_write_files(
        account=account,
        workspace=None,
        kind="push",
        message="skills",
        writes=[FileWrite(f"skills/{name}/SKILL.md", text) for name, text in files.items()],
    )


@pytest.fixture
def site():
    with arena() as server:
        yield server


@pytest.fixture
def skilled(mcp_platform, settings, account, alice, provider_desk, mcp_client):  # noqa: F811
    settings.FOLDRUN_PUBLIC_URL = mcp_platform.base
    push_skills(account, {"price-check": PRICE_CHECK, "just-notes": NO_INPUTS, "header-probe": PROBE})
    with mcp_client(token_for(alice)) as client:
        yield client


def test_a_pushed_skill_with_inputs_is_a_typed_tool_and_one_without_is_not(skilled):
    tools = {t.name: t for t in skilled.list_tools()}
    assert "skill_just_notes" not in tools
    schema = tools["skill_price_check"].input_schema
    props = schema["properties"]
    assert props["url"]["type"] == "string" and props["plan"]["enum"] == ["Free", "Pro"]
    assert props["pages"] == {"type": "array", "items": {"type": "string"}}
    assert props["login"]["type"] == "string" and "vault reference" in props["login"]["description"]
    assert props["options"]["properties"]["waitSeconds"]["maximum"] == 120
    assert schema["required"] == ["url"] and "confirm" not in props
    assert tools["skill_header_probe"].input_schema["required"] == ["url", "confirm"]
    listed = {s["name"]: s for s in skilled.call_tool("list_skills", {}).structured_content["skills"]}
    assert listed["price-check"]["grants"] == ["network_capture"] and listed["just-notes"]["tool"] is None


def test_another_accounts_skill_is_not_listed(skilled, mcp_client, charlie):
    with mcp_client(token_for(charlie)) as other:
        assert not [t.name for t in other.list_tools() if t.name.startswith("skill_price")]
        names = [s["name"] for s in other.call_tool("list_skills", {}).structured_content["skills"]]
        assert "price-check" not in names
        result = other.call_tool("run_skill", {"name": "price-check", "inputs": {"url": "https://example.com"}})
        assert result.is_error and result.structured_content["error"]["code"] == "not_found"


def test_a_secret_input_rejects_a_raw_value_and_starts_nothing(skilled, site):
    result = skilled.call_tool("skill_price_check", {"url": f"{site.url}/pricing/", "login": "hunter2"})
    assert result.is_error is True
    error = result.structured_content["error"]
    assert error["code"] == "invalid_input" and error["details"]["issues"][0]["path"] == "login"
    assert "hunter2" not in text_of(result)
    assert not SkillRun.objects.exists() and not BrowserSession.objects.exists()


def test_signed_in_skill_runs_are_refused_with_the_specs_sentence(skilled, site):
    result = skilled.call_tool(
        "skill_price_check", {"url": f"{site.url}/pricing/", "options": {"session": {"credentials": True}}}
    )
    assert result.is_error is True
    assert text_of(result) == ("[invalid_input] Signed-in skill runs are not available yet: remove session.credentials")
    assert not SkillRun.objects.exists()


def test_run_skill_returns_at_once_and_get_skill_run_reaches_passed(skilled, provider_desk, site):  # noqa: F811
    provider_desk.reply_tool_use("web", browse(f"{site.url}/pricing/"))
    provider_desk.reply_text("DONE: The Pro plan costs $12 a month.")
    started = skilled.call_tool(
        "run_skill", {"name": "price-check", "inputs": {"url": f"{site.url}/pricing/"}, "grant": ["network_capture"]}
    )
    data = started.structured_content
    assert started.is_error is False
    assert (data["status"], data["placement"]) == ("running", "pool")  # a browser was free: started at once
    assert data["runId"].startswith("run_") and data["sessionId"].startswith("sess_us_")
    read = skilled.call_tool("get_skill_run", {"runId": data["runId"], "waitSeconds": 120})
    record = read.structured_content
    assert read.is_error is False and record["status"] == "passed", text_of(read)
    assert set(record) >= {
        "runId",
        "skill",
        "sessionId",
        "status",
        "startedAt",
        "ms",
        "summary",
        "counts",
        "result",
        "hasReport",
        "reportUrl",
    }
    assert record["summary"] == "The Pro plan costs $12 a month." and record["hasReport"] is True
    lines = text_of(read).splitlines()
    assert lines[0].startswith("Skill price-check ") and lines[0].endswith(f"run {data['runId']}: passed.")
    assert lines[-1] == f"Report (short-lived link): {record['reportUrl']}"
    page = httpx.get(record["reportUrl"])
    assert page.status_code == 200 and f"Skill price-check ({data['runId']})" in page.text
    report = skilled.call_tool("get_report", {"id": data["runId"], "waitSeconds": 0})
    assert report.is_error is False and text_of(report).startswith("Skill price-check PASSED in ")
    assert SkillRun.objects.get(public_id=data["runId"]).inputs["plan"] == "Pro"  # the declared default
    assert "/pricing/" in site.seen


def test_a_skill_that_fails_is_a_normal_result_of_its_tool(skilled, provider_desk, site):  # noqa: F811
    provider_desk.reply_tool_use("web", browse(f"{site.url}/pricing/"))
    provider_desk.reply_text("STUCK: there is no Enterprise plan on this page")
    result = skilled.call_tool(
        "skill_price_check", {"url": f"{site.url}/pricing/", "plan": "Free", "options": {"waitSeconds": 120}}
    )
    record = result.structured_content
    assert result.is_error is False and record["status"] == "failed", text_of(result)
    failed = [s for s in record["result"]["steps"] if s["status"] == "failed"]
    assert failed[-1]["error"] == "stuck: there is no Enterprise plan on this page"
    assert "failed: stuck: there is no Enterprise plan on this page" in text_of(result)


def test_a_skill_needing_a_grant_not_given_is_denied_and_is_an_error(skilled, site):
    started = skilled.call_tool("run_skill", {"name": "header-probe", "inputs": {"url": f"{site.url}/"}})
    assert started.is_error is True and started.structured_content["status"] == "denied"
    assert started.structured_content["sessionId"] is None
    read = skilled.call_tool("get_skill_run", {"runId": started.structured_content["runId"]})
    assert read.is_error is True and read.structured_content["status"] == "denied"
    assert (
        "The skill header-probe needs the grant active_scan, which was not given; ask the user before granting it."
    ) in text_of(read)
    refused = skilled.call_tool("skill_header_probe", {"url": f"{site.url}/", "confirm": False})
    assert refused.is_error and refused.structured_content["error"]["code"] == "invalid_input"
    assert not BrowserSession.objects.exists()


def test_a_running_skill_run_is_not_an_error(skilled, provider_desk, site):  # noqa: F811
    provider_desk.reply_tool_use("web", browse(f"{site.url}/pricing/"))
    provider_desk.reply_text("DONE: $12")
    result = skilled.call_tool("skill_price_check", {"url": f"{site.url}/pricing/", "options": {"waitSeconds": 0}})
    assert result.is_error is False and result.structured_content["status"] == "running"
    assert f"Call get_skill_run with runId {result.structured_content['runId']}" in text_of(result)
    done = skilled.call_tool("get_skill_run", {"runId": result.structured_content["runId"], "waitSeconds": 120})
    assert done.structured_content["status"] == "passed"


def test_foldrun_check_names_the_file_and_field_of_a_bad_input_declaration():
    bad = (
        "---\nname: broken\ndescription: x\ninputs:\n  - {name: pw, type: secret, default: hunter2}\n"
        "  - {name: n, type: decimal}\ngrants: [root]\n---\nbody\n"
    )
    findings = [f for f in check(Desk(files={"skills/broken/SKILL.md": bad})) if f.code.startswith("skill.")]
    messages = {f.code: (f.file, f.message) for f in findings}
    assert messages["skill.inputs.default"] == (
        "skills/broken/SKILL.md",
        "inputs[0].default: a secret input takes no default (it would be a secret in the file).",
    )
    assert messages["skill.inputs.type"][1].startswith("inputs[1].type: decimal is not an input type")
    assert messages["skill.grants"][1].startswith("grants: root is not a grant")


def test_smoke_uat_is_a_platform_skill_with_its_own_typed_tool(skilled, site):
    tools = {t.name: t for t in skilled.list_tools()}
    props = tools["skill_smoke_uat"].input_schema["properties"]
    assert tools["skill_smoke_uat"].input_schema["required"] == ["url"]
    assert props["steps"]["type"] == "array" and props["maxLinks"]["default"] == 50
    result = skilled.call_tool(
        "skill_smoke_uat",
        {"url": f"{site.url}/pricing/", "maxLinks": 0, "expectText": "Pricing", "options": {"waitSeconds": 120}},
    )
    record = result.structured_content
    assert result.is_error is False and record["status"] == "passed", text_of(result)
    assert (record["skill"], record["version"], record["hasReport"]) == ("smoke-uat", "gallery", True)
    assert record["summary"].startswith(f"Smoke test of {site.url}/pricing/ passed:")
    assert "screenshot" not in str(record["result"]["steps"])
