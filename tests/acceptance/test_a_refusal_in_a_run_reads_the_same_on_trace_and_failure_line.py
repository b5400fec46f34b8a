"""Issue 4, item 6 (audit4), in a real run: the refusal line is written on the
step's trace and on its failure line, identical; reset times are told in the
step's own timezone by the cascade agent → flow → workspace → account →
FOLDRUN_TIMEZONE → UTC; a second supply is said out loud."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest

from library.actions.writes import FileWrite, do_write_files
from runs.actions import check_start_run
from runs.models import TraceEvent
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import drive, push
from vault.actions import do_set_secret

RESET = dt.datetime(2030, 1, 15, 3, 0, tzinfo=dt.timezone.utc)  # a fixed instant, on another day than today


def window(at: dt.datetime) -> dict[str, str]:
    return {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-5h-utilization": "0.9",
        "anthropic-ratelimit-unified-5h-reset": str(int(at.timestamp())),
        "retry-after": "30",
    }


def clock(zone: str) -> str:
    moment = RESET.astimezone(zoneinfo.ZoneInfo(zone))
    return f"{moment:%H:%M} {zone.rsplit('/', 1)[-1].replace('_', ' ')} on {moment:%a} {moment.day} {moment:%b}"


def agent(fake, extra: str = "", fallback: str = "") -> str:
    return (
        "---\nname: worker\ndescription: d\ntools: [read]\n"
        + extra
        + f"provider: {{name: anthropic, base_url: '{fake.base_url}', key: '${{MODEL_KEY}}', model: m{fallback}}}\n"
        "---\nWork.\n"
    )


def refused_run(workspace, alice, files):
    push(workspace, files)
    run = drive(check_start_run(workspace=workspace, user=alice, agent="worker", task="Go."))
    step = run.steps.get()
    lines = [e.data["line"] for e in TraceEvent.objects.filter(step=step, kind="refusal")]
    return run, step, lines


@pytest.fixture
def keyed(account, workspace):
    do_set_secret(account, workspace, "MODEL_KEY", value="sk-tz-planted")


def expected(zone: str) -> str:
    return (
        f"the subscription refused this burst — the 5-hour window is 90% used; it resets at {clock(zone)}, and "
        "the provider asked us to wait 30s — no second supply is configured"
    )


def test_the_agents_zone_wins(keyed, alice, workspace, fake_provider, settings):
    settings.FOLDRUN_TIMEZONE = "Asia/Tokyo"
    fake_provider.reply_status(429, headers=window(RESET))
    run, step, lines = refused_run(
        workspace,
        alice,
        {
            "AGENTS.md": "---\ntimezone: Europe/Paris\n---\nx\n",
            "agents/worker/agent.md": agent(fake_provider, "timezone: Australia/Sydney\n"),
        },
    )
    assert run.status == "failed"
    assert step.error == expected("Australia/Sydney")
    assert lines == [step.error]


def test_the_workspaces_zone_comes_before_the_accounts(keyed, alice, account, workspace, fake_provider, settings):
    settings.FOLDRUN_TIMEZONE = "Asia/Tokyo"
    do_write_files(
        account=account,
        workspace=None,
        kind="push",
        writes=[FileWrite("AGENTS.md", "---\ntimezone: America/New_York\n---\nx\n")],
    )
    fake_provider.reply_status(429, headers=window(RESET))
    _, step, _ = refused_run(
        workspace,
        alice,
        {"AGENTS.md": "---\ntimezone: Europe/Paris\n---\nx\n", "agents/worker/agent.md": agent(fake_provider)},
    )
    assert step.error == expected("Europe/Paris")


def test_the_accounts_zone_comes_before_the_install_default(keyed, alice, account, workspace, fake_provider, settings):
    settings.FOLDRUN_TIMEZONE = "Asia/Tokyo"
    do_write_files(
        account=account,
        workspace=None,
        kind="push",
        writes=[FileWrite("AGENTS.md", "---\ntimezone: America/New_York\n---\nx\n")],
    )
    fake_provider.reply_status(429, headers=window(RESET))
    _, step, _ = refused_run(workspace, alice, {"agents/worker/agent.md": agent(fake_provider)})
    assert step.error == expected("America/New_York")


def test_with_no_zone_anywhere_the_install_default_then_utc(keyed, alice, workspace, fake_provider, settings):
    settings.FOLDRUN_TIMEZONE = "Asia/Tokyo"
    fake_provider.reply_status(429, headers=window(RESET))
    _, tokyo, _ = refused_run(workspace, alice, {"agents/worker/agent.md": agent(fake_provider)})
    settings.FOLDRUN_TIMEZONE = ""
    fake_provider.reply_status(429, headers=window(RESET))
    _, utc, _ = refused_run(workspace, alice, {"agents/worker/agent.md": agent(fake_provider)})
    assert tokyo.error == expected("Asia/Tokyo")
    assert utc.error == expected("UTC")


def test_a_second_supply_is_tried_and_the_trace_says_so(keyed, alice, workspace, fake_provider):
    fallback = f", fallback: {{name: anthropic, base_url: '{fake_provider.base_url}', key: '${{MODEL_KEY}}'}}"
    fake_provider.reply_status(401)
    fake_provider.reply_text("GOOD done by the second")
    run, step, lines = refused_run(workspace, alice, {"agents/worker/agent.md": agent(fake_provider, "", fallback)})
    assert (run.status, step.output) == ("completed", "GOOD done by the second")
    assert lines == [
        "the credential was refused (HTTP 401) and the response carried no rate-limit headers, so this "
        "is the key itself — invalid, revoked, or wrong for this endpoint — not a spent window — trying "
        "the second supply"
    ]


def test_the_flows_zone_comes_before_the_workspaces(keyed, alice, workspace, fake_provider):
    fake_provider.reply_status(429, headers=window(RESET))
    push(
        workspace,
        {
            "AGENTS.md": "---\ntimezone: Europe/Paris\n---\nx\n",
            "agents/worker/agent.md": agent(fake_provider),
            "flows/weekly.md": "---\nname: weekly\ntimezone: Asia/Kolkata\n---\n1. [[worker]] — Go.\n",
        },
    )
    run = drive(check_start_run(workspace=workspace, user=alice, flow="weekly"))
    assert run.steps.get().error == expected("Asia/Kolkata")
