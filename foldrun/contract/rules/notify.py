"""`notify:` in AGENTS.md: parsing (shared with the server) and its check rules.

Pure Python, no Django: the server's notify app parses the same block with
`parse_notify`, so `foldrun check` on a laptop and a delivery on the server
agree about what a block means.

Forms accepted (spec/notifications.md):

    notify: ops@example.com                     # a bare string: whichever it looks like
    notify: ${SLACK_WEBHOOK_URL}
    notify: {email: ops@example.com, events: [failed, completed]}
    notify: {url: ${OPS_WEBHOOK_URL}, signing_secret: OPS_WEBHOOK_SIGNING_KEY}
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

from ..check import Context, rule
from ..desk import AGENTS_MD, Desk
from ..findings import Finding

EVENTS = ("failed", "completed", "blocked", "awaiting-approval", "quarantined", "sla", "budget")
DEFAULT_EVENTS = ("failed", "awaiting-approval")
FOLLOWS_FAILED = ("blocked", "quarantined", "sla", "budget")
KEYS = ("email", "url", "events", "signing_secret")

EMAIL_RE = re.compile(
    r"^[^@\s<>(),;:\"]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$"
)
SECRET_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]*$")
SECRET_REF_RE = re.compile(r"^\$\{([A-Z][A-Z0-9_]*)\}$")


@dataclass(frozen=True)
class NotifyConfig:
    """One destination and the events that reach it.

    `url` is a literal URL, or None when `url_secret` names the secret that
    holds it. `events` is what the file said (None: the defaults).
    """

    email: str | None = None
    url: str | None = None
    url_secret: str | None = None
    events: tuple[str, ...] | None = None
    signing_secret: str | None = None

    @property
    def is_webhook(self) -> bool:
        return self.url is not None or self.url_secret is not None

    @property
    def effective_events(self) -> tuple[str, ...]:
        return self.events if self.events is not None else DEFAULT_EVENTS

    def wants(self, event: str) -> bool:
        """Whether `event` reaches this destination.

        `blocked`, `quarantined`, `sla` and `budget` follow `failed`; naming
        one explicitly also turns it on. `test` always goes.
        """
        if event == "test":
            return True
        events = self.effective_events
        return event in events or (event in FOLLOWS_FAILED and "failed" in events)


@dataclass
class ParseResult:
    config: NotifyConfig | None
    problems: list[str] = field(default_factory=list)


def _secret_name(value: str) -> str | None:
    match = SECRET_REF_RE.match(value)
    if match:
        return match.group(1)
    return value if SECRET_NAME_RE.match(value) else None


def _parse_url(value: Any, problems: list[str]) -> tuple[str | None, str | None]:
    if not isinstance(value, str) or not value.strip():
        problems.append("notify: url must be a secret name such as ${SLACK_WEBHOOK_URL} or a literal https:// URL.")
        return None, None
    value = value.strip()
    name = _secret_name(value)
    if name:
        return None, name
    try:
        parsed = urlparse(value)
        host, _port = parsed.hostname, parsed.port  # .port raises for one out of range
    except ValueError as exc:  # "Invalid IPv6 URL" (an unclosed bracket), "Port out of range 0-65535"
        problems.append(
            f"notify: url {value[:80]!r} cannot be read as a URL ({str(exc).rstrip('.')}); fix its host or port."
        )
        return None, None
    if parsed.scheme not in ("http", "https") or not host:
        problems.append(
            f"notify: url {value[:80]!r} is neither a secret name (like ${{SLACK_WEBHOOK_URL}}) nor an http:// or https:// URL."
        )
        return None, None
    if not _postable_host(host):
        problems.append(
            f"notify: url {value[:80]!r} names a host no request can reach; a name's labels are 1 to 63 "
            "characters and the whole name at most 253."
        )
        return None, None
    return value, None


def _postable_host(host: str) -> bool:
    """A host name (or IP literal) a request could be sent to: no empty or
    over-long label (the resolver's IDNA codec refuses those)."""
    if ":" in host or host.replace(".", "").isdigit():
        return True  # an IPv6 or IPv4 literal; urlparse already read it
    labels = host.rstrip(".").split(".")
    return len(host) <= 253 and all(0 < len(label) <= 63 for label in labels)


def parse_notify(raw: Any) -> ParseResult:
    """Read a `notify:` value; `problems` holds one sentence per thing wrong."""
    problems: list[str] = []
    if raw is None:
        return ParseResult(None)
    if isinstance(raw, str):
        text = raw.strip()
        if EMAIL_RE.match(text):
            return ParseResult(NotifyConfig(email=text))
        if text.startswith(("http://", "https://", "${")) or SECRET_NAME_RE.match(text):
            url, secret = _parse_url(text, problems)
            return ParseResult(NotifyConfig(url=url, url_secret=secret) if not problems else None, problems)
        problems.append(
            f"notify: {text[:80]!r} is neither an email address nor a webhook URL; write an address, "
            "an https:// URL or a secret name such as ${SLACK_WEBHOOK_URL}."
        )
        return ParseResult(None, problems)
    if not isinstance(raw, dict):
        problems.append("notify: must be an email address, a webhook URL, or a block with email: or url: and events:.")
        return ParseResult(None, problems)
    for key in raw:
        if str(key) not in KEYS:
            problems.append(f"notify: has an unknown key {str(key)!r}; the keys are {', '.join(KEYS)}.")
    email = raw.get("email")
    url_value = raw.get("url")
    if email is not None and url_value is not None:
        problems.append("notify: names both email: and url:; a notify block has one destination — keep one of them.")
    if email is None and url_value is None:
        problems.append("notify: names no destination; add email: or url:.")
    if email is not None and (not isinstance(email, str) or not EMAIL_RE.match(email.strip())):
        problems.append(f"notify: email {str(email)[:80]!r} is not an email address.")
    url = secret = None
    if url_value is not None:
        url, secret = _parse_url(url_value, problems)
    events: tuple[str, ...] | None = None
    if "events" in raw:
        value = raw.get("events")
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(e, str) for e in value):
            problems.append("notify: events must be a list such as [failed, awaiting-approval].")
        else:
            for event in value:
                if event not in EVENTS:
                    problems.append(f"notify: unknown event {event!r}; the events are {', '.join(EVENTS)}.")
            events = tuple(e for e in value if e in EVENTS)
    signing = raw.get("signing_secret")
    signing_name: str | None = None
    if signing is not None:
        signing_name = _secret_name(signing) if isinstance(signing, str) else None
        if signing_name is None:
            problems.append(
                "notify: signing_secret must be the NAME of a secret (like OPS_WEBHOOK_SIGNING_KEY), never its value."
            )
        elif email is not None and url_value is None:
            problems.append(
                "notify: signing_secret signs webhook deliveries; it has no meaning for an email destination."
            )
    if problems:
        return ParseResult(None, problems)
    return ParseResult(
        NotifyConfig(
            email=email.strip() if isinstance(email, str) else None,
            url=url,
            url_secret=secret,
            events=events,
            signing_secret=signing_name,
        )
    )


@rule("notify")
def check_notify(desk: Desk, context: Context):
    """A bad destination or an unknown event in `notify:` is an error."""
    for document in desk.of_kind(AGENTS_MD):
        if document.error is not None or "notify" not in document.meta:
            continue
        line = document.line_of("notify")
        for problem in parse_notify(document.meta["notify"]).problems:
            yield Finding(document.path, line, "error", problem, "notify.invalid")
