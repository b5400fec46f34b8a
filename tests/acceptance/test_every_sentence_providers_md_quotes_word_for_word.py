"""Issue 4 (audit4): every sentence providers.md quotes, read from the spec at
test time and asserted word for word against what the code says — on the
wire, through the model client, the key check and the CLI.

Checklist (providers.md):
  - the refusal line for a spent window (fenced block)          → test_the_spent_window_line_*
  - the refused-credential line (fenced block)                   → test_the_refused_credential_line_*
  - `and asked us to wait 30s`, and the no-promise wording       → test_a_wait_is_a_number_*
  - the three endings `trying the second supply`, `the second supply refused it too`,
    `no second supply is configured`                             → test_each_of_the_three_endings_*
  - the key check's verdict table (ok … provider-error)          → test_each_verdict_of_the_table_*
  - the stop reason table's left column                          → test_the_stop_reasons_are_the_tables
  - "Today that is **3 of 29**: only `anthropic`, `openrouter` and `openai` …" → test_the_count_sentence_*
  - ✓, ✗ with the verdict, or ·                                  → test_probe_and_the_daily_key_probe_say_what_each_key_does.py
"""

from __future__ import annotations

import datetime as dt
import re
import zoneinfo

import pytest

from foldrun.providers.client import ModelClient, ProviderRefusal, Supply
from foldrun.providers.presets import PRESETS
from foldrun.providers.refusal import refusal_line
from tests.conftest import spec_file
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401

TEXT = spec_file("providers.md").read_text(encoding="utf-8")
ASK = [{"role": "user", "content": "hi"}]


def fenced_blocks() -> list[str]:
    """Every fenced block of the spec, its lines joined the way the prose wraps them."""
    return [" ".join(block.split()) for block in re.findall(r"```\n(.*?)```", TEXT, re.S)]


def table_after(heading: str) -> list[list[str]]:
    """The rows of the first table after `heading` (cells stripped)."""
    rest = TEXT[TEXT.index(heading) :]
    lines = [line for line in rest.splitlines() if line.startswith("|")]
    rows = []
    start = rest.splitlines().index(lines[0])
    for line in rest.splitlines()[start:]:
        if not line.startswith("|"):
            break
        rows.append([cell.strip() for cell in line.strip().strip("|").split("|")])
    return rows[2:]


SPENT_WINDOW = next(b for b in fenced_blocks() if b.startswith("the subscription refused this burst"))
CREDENTIAL = next(b for b in fenced_blocks() if b.startswith("the credential was refused"))
ENDINGS = re.findall(r"ends with one of three states: `([^`]+)`, `([^`]+)`, or `([^`]+)`", " ".join(TEXT.split()))[0]


def supply(fake, fallback=None) -> Supply:
    return Supply(
        name="anthropic", format="anthropic", base_url=fake.base_url, model="m", key="sk-sentences-1", fallback=fallback
    )


def window_headers(at: dt.datetime) -> dict[str, str]:
    return {
        "anthropic-ratelimit-unified-status": "rejected",
        "anthropic-ratelimit-unified-representative-claim": "five_hour",
        "anthropic-ratelimit-unified-5h-utilization": "0.35",
        "anthropic-ratelimit-unified-5h-reset": str(int(at.timestamp())),
        "anthropic-ratelimit-unified-overage-status": "rejected",
        "anthropic-ratelimit-unified-overage-disabled-reason": "out_of_credits",
    }


def two_pm_in_sydney_today() -> dt.datetime:
    sydney = zoneinfo.ZoneInfo("Australia/Sydney")
    today = dt.datetime.now(sydney).date()
    return dt.datetime(today.year, today.month, today.day, 14, 0, tzinfo=sydney)


def test_the_checklist_found_every_quoted_sentence_in_the_spec():
    assert SPENT_WINDOW == (
        "the subscription refused this burst — the 5-hour window is 35% used but overage is off "
        "(out of credits); it resets at 14:00 Sydney — no second supply is configured"
    )
    assert CREDENTIAL.endswith("not a spent window")
    assert ENDINGS == ("trying the second supply", "the second supply refused it too", "no second supply is configured")


def test_the_spent_window_line_is_the_specs_word_for_word_on_the_wire(fake_provider):
    fake_provider.reply_status(402, headers=window_headers(two_pm_in_sydney_today()))
    with pytest.raises(ProviderRefusal) as info:
        ModelClient(supply(fake_provider), timezone="Australia/Sydney").create(None, ASK, [], 5)
    assert info.value.line == SPENT_WINDOW


@pytest.mark.parametrize("status", [401, 403])
def test_the_refused_credential_line_is_the_specs_word_for_word_on_the_wire(fake_provider, status):
    fake_provider.reply_status(status)
    with pytest.raises(ProviderRefusal) as info:
        ModelClient(supply(fake_provider)).create(None, ASK, [], 5)
    assert info.value.line == CREDENTIAL.replace("(HTTP 401)", f"(HTTP {status})") + " — " + ENDINGS[2]


def test_a_wait_is_a_number_when_retry_after_names_one(fake_provider):
    fake_provider.reply_status(429, headers={"retry-after": "30"})
    with pytest.raises(ProviderRefusal) as info:
        ModelClient(supply(fake_provider)).create(None, ASK, [], 5)
    assert "`and asked us to wait 30s`" in " ".join(TEXT.split())
    assert " and asked us to wait 30s — " in info.value.line


def test_a_wait_nobody_promised_is_said_to_be_none(fake_provider):
    fake_provider.reply_status(429)
    with pytest.raises(ProviderRefusal) as info:
        ModelClient(supply(fake_provider)).create(None, ASK, [], 5)
    assert info.value.line == (
        "the provider rate-limited this request (HTTP 429) and named no wait, so none is "
        "promised — no second supply is configured"
    )
    assert "wait" not in info.value.line.replace("named no wait", "")


def test_each_of_the_three_endings_is_said_where_it_happens(fake_provider):
    lines: list[str] = []
    # 1. refused, a second supply configured and it answers: the trace says we are trying it.
    fake_provider.reply_status(401)
    fake_provider.reply_text("fine")
    ModelClient(supply(fake_provider, supply(fake_provider)), on_line=lines.append).create(None, ASK, [], 5)
    # 2. refused, and the second supply refuses too.
    fake_provider.reply_status(401)
    fake_provider.reply_status(401)
    with pytest.raises(ProviderRefusal) as both:
        ModelClient(supply(fake_provider, supply(fake_provider))).create(None, ASK, [], 5)
    # 3. refused, nothing configured after it.
    fake_provider.reply_status(401)
    with pytest.raises(ProviderRefusal) as alone:
        ModelClient(supply(fake_provider)).create(None, ASK, [], 5)
    assert lines == [CREDENTIAL + " — " + ENDINGS[0]]
    assert both.value.line == CREDENTIAL + " — " + ENDINGS[1]
    assert alone.value.line == CREDENTIAL + " — " + ENDINGS[2]


def test_nothing_but_the_allow_listed_headers_reach_the_line(fake_provider):
    fake_provider.reply_status(
        429,
        headers={
            "anthropic-ratelimit-requests-remaining": "0",
            "x-request-id": "req_9",
            "set-cookie": "a=b",
            "retry-after": "5",
        },
    )
    with pytest.raises(ProviderRefusal) as info:
        ModelClient(supply(fake_provider)).create(None, ASK, [], 5)
    assert info.value.headers == {"retry-after": "5"}
    assert "req_9" not in info.value.line and "a=b" not in info.value.line


# ---------------------------------------------------------------- the key check's verdicts


def test_each_verdict_of_the_table_is_one_the_check_gives():
    from vault.models import Verdict

    spec_verdicts = [row[0] for row in table_after("| verdict | what it means |")]
    assert spec_verdicts == ["ok", "busy", "credential", "not-found", "unreachable", "provider-error"]
    assert [v.value for v in Verdict] == spec_verdicts


VERDICT_CASES = [
    ("ok", lambda fake: fake.reply_text("ok")),
    ("busy", lambda fake: fake.reply_status(429)),
    ("credential", lambda fake: fake.reply_status(401)),
    ("credential", lambda fake: fake.reply_status(402)),
    ("credential", lambda fake: fake.reply_status(403)),
    ("not-found", lambda fake: fake.reply_status(404)),
    ("provider-error", lambda fake: fake.reply_status(500)),
    ("provider-error", lambda fake: fake.reply_status(503)),
]


@pytest.mark.parametrize("verdict,answer", VERDICT_CASES, ids=[f"{v}-{i}" for i, (v, _) in enumerate(VERDICT_CASES)])
def test_each_verdict_of_the_table_is_reached_by_its_answer(account, workspace, fake_provider, verdict, answer):
    from library.actions.writes import FileWrite, do_write_files
    from vault.actions import do_set_secret
    from vault.probe import check_account_providers

    block = f'{{name: anthropic, base_url: "{fake_provider.base_url}", key: "${{MODEL_KEY}}", model: m}}'
    do_write_files(
        account=account,
        workspace=workspace,
        kind="push",
        writes=[FileWrite("AGENTS.md", f"---\nprovider: {block}\n---\nx\n")],
    )
    do_set_secret(account, workspace, "MODEL_KEY", value="sk-verdict-1")
    answer(fake_provider)
    rows = check_account_providers(account.pk, report=False)
    assert [r.verdict for r in rows] == [verdict]


def test_a_base_url_that_is_not_a_url_and_no_answer_are_unreachable(account, workspace):
    from library.actions.writes import FileWrite, do_write_files
    from vault.actions import do_set_secret
    from vault.probe import check_account_providers

    import socket

    with socket.socket() as sock:  # a port nobody listens on: no answer
        sock.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{sock.getsockname()[1]}"
    do_write_files(
        account=account,
        workspace=workspace,
        kind="push",
        writes=[
            FileWrite(
                "AGENTS.md", '---\nprovider: {name: anthropic, base_url: "not a url", key: "${K}", model: m}\n---\n'
            ),
            FileWrite(
                "agents/x.md",
                f'---\nname: x\ndescription: d\nprovider: {{name: anthropic, base_url: "{dead}", '
                'key: "${K}", model: m}\n---\nx\n',
            ),
        ],
    )
    do_set_secret(account, workspace, "K", value="v-unreachable")
    rows = check_account_providers(account.pk, report=False)
    assert sorted(r.verdict for r in rows) == ["unreachable", "unreachable"]


# ---------------------------------------------------------------- stop reasons and the count


def test_the_stop_reasons_are_the_tables():
    rows = table_after("| stop reason | Chat Completions")
    assert [row[0].strip("`") for row in rows] == [
        "end_turn",
        "max_tokens",
        "tool_use",
        "stop_sequence",
        "refusal",
        "model_context_window_exceeded",
        "pause_turn",
    ]


def test_the_count_sentence_matches_the_code():
    sentence = " ".join(TEXT.split())
    match = re.search(
        r"Today that is \*\*(\d+) of (\d+)\*\*: only `(\w+)`, `(\w+)` and `(\w+)` have ever run", sentence
    )
    assert match is not None
    verified, total = int(match.group(1)), int(match.group(2))
    assert (verified, total) == (sum(p.verified for p in PRESETS), len(PRESETS))
    assert sorted(match.group(3, 4, 5)) == sorted(p.name for p in PRESETS if p.verified)


def test_the_spec_table_has_29_rows_and_the_code_has_each_cell():
    rows = table_after("| name | provider | format | base URL | key header | verified | note |")
    assert len(rows) == 29
    code = [
        [f"`{p.name}`", p.provider, p.format, f"`{p.base_url}`", p.key_header, "yes" if p.verified else "", p.note]
        for p in PRESETS
    ]
    assert code == rows


def test_refusal_line_takes_no_request_headers_at_all():
    import inspect

    assert list(inspect.signature(refusal_line).parameters) == ["status", "kept", "timezone", "ending", "now"]
