"""The one line a refused model call leaves: the spec's sentences, word for word."""

from __future__ import annotations

import datetime as dt
import zoneinfo

import pytest
from django.test import override_settings

from foldrun.providers.client import ModelClient, ProviderRefusal, Supply
from foldrun.providers.refusal import keep_rate_limit_headers, refusal_line, step_timezone

SYDNEY = zoneinfo.ZoneInfo("Australia/Sydney")
NOW = dt.datetime(2026, 11, 30, 1, 0, tzinfo=dt.timezone.utc)  # 12:00 in Sydney
RESET = dt.datetime(2026, 11, 30, 14, 0, tzinfo=SYDNEY).timestamp()  # 14:00 in Sydney, the same day
WINDOW = {
    "anthropic-ratelimit-unified-status": "rejected",
    "anthropic-ratelimit-unified-representative-claim": "five_hour",
    "anthropic-ratelimit-unified-5h-utilization": "0.35",
    "anthropic-ratelimit-unified-5h-reset": str(int(RESET)),
    "anthropic-ratelimit-unified-overage-status": "rejected",
    "anthropic-ratelimit-unified-overage-disabled-reason": "out_of_credits",
}


def test_a_spent_window_says_how_used_why_and_when_it_resets_in_the_steps_zone():
    line = refusal_line(402, WINDOW, timezone="Australia/Sydney", now=NOW)
    assert line == (
        "the subscription refused this burst — the 5-hour window is 35% used but overage is off "
        "(out of credits); it resets at 14:00 Sydney — no second supply is configured"
    )


def test_the_same_window_read_in_utc_says_utc():
    line = refusal_line(429, WINDOW, timezone="UTC", now=NOW)
    assert "; it resets at 03:00 UTC — " in line


def test_a_reset_on_another_day_names_the_day():
    tomorrow = dict(WINDOW, **{"anthropic-ratelimit-unified-5h-reset": str(int(RESET + 86400))})
    assert "; it resets at 14:00 Sydney on Tue 1 Dec — " in refusal_line(
        429, tomorrow, timezone="Australia/Sydney", now=NOW
    )


@pytest.mark.parametrize("status", [401, 403])
def test_a_refused_credential_without_rate_limit_headers_is_the_key_itself(status):
    assert refusal_line(status, {}, now=NOW) == (
        f"the credential was refused (HTTP {status}) and the response carried no rate-limit headers, so this is "
        "the key itself — invalid, revoked, or wrong for this endpoint — not a spent window — no second supply is "
        "configured"
    )


def test_a_429_with_retry_after_says_how_long():
    assert refusal_line(429, {"retry-after": "30"}, now=NOW) == (
        "the provider rate-limited this request (HTTP 429) and asked us to wait 30s — no second supply is configured"
    )


def test_a_429_that_names_no_wait_says_none_is_promised():
    assert refusal_line(429, {}, now=NOW) == (
        "the provider rate-limited this request (HTTP 429) and named no wait, so none is promised — no second "
        "supply is configured"
    )


def test_a_retry_after_given_as_a_date_is_still_a_number():
    assert "and asked us to wait 2m — " in refusal_line(429, {"retry-after": "Mon, 30 Nov 2026 01:02:00 GMT"}, now=NOW)


def test_a_402_without_headers_says_out_of_credit():
    assert refusal_line(402, {}, now=NOW) == (
        "the provider refused payment for this request (HTTP 402): out of credit or over a spending limit, and it "
        "named no wait, so none is promised — no second supply is configured"
    )


def test_the_headers_kept_are_an_allow_list_not_a_prefix():
    kept = keep_rate_limit_headers(
        {
            "Anthropic-Ratelimit-Unified-5h-Utilization": "0.5",
            "anthropic-ratelimit-unified-made-up": "x",
            "anthropic-ratelimit-requests-limit": "50",
            "Retry-After": "3",
            "set-cookie": "s=1",
            "x-api-key": "sk-no",
        }
    )
    assert kept == {"anthropic-ratelimit-unified-5h-utilization": "0.5", "retry-after": "3"}


def test_the_timezone_cascade_takes_the_first_valid_zone():
    assert step_timezone(None, "", "Not/AZone", "Australia/Sydney", "Europe/Paris") == "Australia/Sydney"


def test_the_cascade_falls_back_to_foldrun_timezone_then_utc():
    with override_settings(FOLDRUN_TIMEZONE="America/New_York"):
        assert step_timezone(None, None, None, None) == "America/New_York"
    with override_settings(FOLDRUN_TIMEZONE=""):
        assert step_timezone(None) == "UTC"


# ---------------------------------------------------------------- the three endings, on the wire


def supply(fake, fallback=None):
    return Supply(
        name="anthropic", format="anthropic", base_url=fake.base_url, model="m", key="sk-planted-999", fallback=fallback
    )


ASK = [{"role": "user", "content": "hi"}]


def test_no_second_supply_is_said_out_loud(fake_provider):
    fake_provider.reply_status(401)
    with pytest.raises(ProviderRefusal) as info:
        ModelClient(supply(fake_provider)).create(None, ASK, [], 5)
    assert info.value.line.endswith(" — no second supply is configured")


def test_trying_the_second_supply_goes_on_the_trace(fake_provider):
    fake_provider.reply_status(429, headers=WINDOW)
    fake_provider.reply_text("fine")
    lines: list[str] = []
    ModelClient(supply(fake_provider, supply(fake_provider)), on_line=lines.append, timezone="Australia/Sydney").create(
        None, ASK, [], 5
    )
    assert len(lines) == 1
    assert lines[0].startswith(
        "the subscription refused this burst — the 5-hour window is 35% used but overage is off (out of credits)"
    )
    assert lines[0].endswith(" — trying the second supply")


def test_the_second_supply_refusing_too_ends_the_line(fake_provider):
    fake_provider.reply_status(429, headers={"retry-after": "30"})
    fake_provider.reply_status(401)
    with pytest.raises(ProviderRefusal) as info:
        ModelClient(supply(fake_provider, supply(fake_provider))).create(None, ASK, [], 5)
    assert info.value.line == (
        "the provider rate-limited this request (HTTP 429) and asked us to wait 30s — the second supply refused it too"
    )


def test_no_credential_reaches_the_line_or_the_kept_headers(fake_provider):
    fake_provider.reply_status(403, headers={"x-echo-key": "sk-planted-999"})
    with pytest.raises(ProviderRefusal) as info:
        ModelClient(supply(fake_provider)).create(None, ASK, [], 5)
    assert "sk-planted-999" not in info.value.line and "sk-planted-999" not in str(info.value.headers)


def test_a_client_without_a_step_zone_tells_reset_times_in_foldrun_timezone(fake_provider):
    fake_provider.reply_status(429, headers=WINDOW)
    with override_settings(FOLDRUN_TIMEZONE="Australia/Sydney"):
        client = ModelClient(supply(fake_provider))
    with pytest.raises(ProviderRefusal) as info:
        client.create(None, ASK, [], 5)
    assert " Sydney" in info.value.line and info.value.line.endswith(" — no second supply is configured")
