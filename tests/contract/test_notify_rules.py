"""`check` on `notify:` in AGENTS.md: a bad destination or an unknown event is refused."""

from foldrun.contract import Desk, check
from foldrun.contract.rules.notify import parse_notify


def _findings(agents_md: str):
    return [f for f in check(Desk(files={"AGENTS.md": agents_md})) if f.code == "notify.invalid"]


def test_a_good_email_block_passes():
    assert (
        _findings("---\nnotify:\n  email: ops@example.com\n  events: [failed, awaiting-approval, completed]\n---\n")
        == []
    )


def test_a_webhook_block_with_a_secret_name_and_signing_secret_passes():
    text = "---\nnotify:\n  url: ${OPS_WEBHOOK_URL}\n  signing_secret: OPS_WEBHOOK_SIGNING_KEY\n---\n"
    assert _findings(text) == []


def test_an_unknown_event_is_refused_on_the_notify_line():
    findings = _findings("---\ntimezone: UTC\nnotify:\n  email: ops@example.com\n  events: [failed, finished]\n---\n")
    assert [(f.file, f.line, f.level) for f in findings] == [("AGENTS.md", 3, "error")]
    assert findings[0].message == (
        "notify: unknown event 'finished'; the events are failed, completed, blocked, awaiting-approval, "
        "quarantined, sla, budget."
    )


def test_a_bare_string_that_is_neither_address_nor_url_is_refused():
    findings = _findings("---\nnotify: ops at example dot com\n---\n")
    assert findings[0].message.startswith(
        "notify: 'ops at example dot com' is neither an email address nor a webhook URL"
    )


def test_a_bad_email_address_is_refused():
    findings = _findings("---\nnotify:\n  email: not-an-address\n---\n")
    assert findings[0].message == "notify: email 'not-an-address' is not an email address."


def test_a_url_that_is_not_http_is_refused():
    findings = _findings("---\nnotify:\n  url: ftp://example.com/hook\n---\n")
    assert "is neither a secret name" in findings[0].message


def test_a_url_that_does_not_parse_is_refused_with_the_parsers_reason():
    unclosed = _findings('---\nnotify:\n  url: "http://[::1/hook"\n---\n')
    far_port = _findings('---\nnotify:\n  url: "http://127.0.0.1:99999/hook"\n---\n')
    assert [f.message for f in unclosed + far_port] == [
        "notify: url 'http://[::1/hook' cannot be read as a URL (Invalid IPv6 URL); fix its host or port.",
        "notify: url 'http://127.0.0.1:99999/hook' cannot be read as a URL (Port out of range 0-65535); fix its host "
        "or port.",
    ]


def test_a_url_whose_host_has_an_over_long_label_is_refused():
    url = "http://" + "a" * 64 + ".example.com/hook"
    assert [f.message for f in _findings(f"---\nnotify:\n  url: {url}\n---\n")] == [
        f"notify: url {url[:80]!r} names a host no request can reach; a name's labels are 1 to 63 characters and the "
        "whole name at most 253."
    ]


def test_an_ip_literal_url_with_a_port_passes():
    assert _findings('---\nnotify:\n  url: "http://[::1]:8080/hook"\n---\n') == []


def test_a_signing_secret_value_instead_of_a_name_is_refused():
    findings = _findings("---\nnotify:\n  url: https://hooks.example.com/x\n  signing_secret: s3cr3t-value\n---\n")
    assert findings[0].message == (
        "notify: signing_secret must be the NAME of a secret (like OPS_WEBHOOK_SIGNING_KEY), never its value."
    )


def test_a_bare_string_is_whichever_destination_it_looks_like():
    assert parse_notify("ops@example.com").config.email == "ops@example.com"
    assert parse_notify("${SLACK_WEBHOOK_URL}").config.url_secret == "SLACK_WEBHOOK_URL"
    assert parse_notify("https://ntfy.sh/desk").config.url == "https://ntfy.sh/desk"


def test_the_default_events_are_failed_and_awaiting_approval_and_completed_is_opt_in():
    config = parse_notify("ops@example.com").config
    assert config.effective_events == ("failed", "awaiting-approval")
    assert config.wants("failed") and config.wants("awaiting-approval")
    assert not config.wants("completed")


def test_blocked_quarantined_sla_and_budget_follow_failed():
    config = parse_notify({"email": "ops@example.com", "events": ["failed"]}).config
    assert [config.wants(e) for e in ("blocked", "quarantined", "sla", "budget")] == [True, True, True, True]
    completed_only = parse_notify({"email": "ops@example.com", "events": ["completed"]}).config
    assert [completed_only.wants(e) for e in ("blocked", "quarantined", "sla", "budget")] == [False] * 4


def test_naming_blocked_alone_hears_only_blocked():
    config = parse_notify({"email": "ops@example.com", "events": ["blocked"]}).config
    assert config.wants("blocked") and not config.wants("failed") and not config.wants("sla")
