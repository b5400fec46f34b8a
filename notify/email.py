"""Sending mail: notification mail through the account's own Resend key,
platform mail (invites, low-balance, the webhook-disabled notice) always
through the platform's connection. Every send asks `may_send` first and,
for an optional category, carries RFC 8058 one-click unsubscribe headers.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

from django.conf import settings
from django.core.mail import EmailMultiAlternatives, get_connection

from .links import unsubscribe_url
from .models import MailSend
from .preferences import LOCKED, PER_WORKSPACE, STOP_WORDS, may_send
from .secrets import read_secret

log = logging.getLogger(__name__)

RESEND_BACKEND = "notify.resend.EmailBackend"


@dataclass
class SendResult:
    """What came back. `message` is in the provider's own words on a failure."""

    sent: bool
    provider: str  # "resend" (the account's key) | "platform"
    message: str
    status_code: int | None = None
    message_id: str | None = None
    skipped: bool = False

    def to_dict(self) -> dict:
        return {
            "sent": self.sent,
            "provider": self.provider,
            "message": self.message,
            "statusCode": self.status_code,
            "messageId": self.message_id,
            "skipped": self.skipped,
        }


def account_sender(account, workspace=None):
    """(connection, from address, provider) for an account's notification mail.

    The account's own Resend key and address when both RESEND_API_KEY and
    EMAIL_FROM are in the vault; else the platform's connection and sender.
    """
    key = read_secret(account, workspace, "RESEND_API_KEY")
    sender = read_secret(account, workspace, "EMAIL_FROM")
    if key and sender:
        connection = get_connection(RESEND_BACKEND, api_key=key, api_url=settings.FOLDRUN_RESEND_API_URL)
        return connection, sender, "resend"
    return get_connection(), settings.DEFAULT_FROM_EMAIL, "platform"


def _provider_words(exc: Exception) -> tuple[str, int | None]:
    """The provider's own sentence from an anymail error, and its status code."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    if response is not None:
        try:
            data = response.json()
        except (ValueError, json.JSONDecodeError):
            data = None
        if isinstance(data, dict) and data.get("message"):
            return str(data["message"]), status
        text = (getattr(response, "text", "") or "").strip()
        if text:
            return text[:500], status
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return first[:500], status


def remember(
    result: "SendResult", *, to: str, subject: str, category: str, account, workspace, outgoing=None
) -> "SendResult":
    """Record one try of a mail and what came back."""
    try:
        MailSend.objects.create(
            account=account,
            workspace=workspace,
            to=to,
            category=category,
            subject=subject[:300],
            provider=result.provider,
            sent=result.sent,
            skipped=result.skipped,
            message=result.message[:500],
            status_code=result.status_code,
            outgoing=outgoing,
        )
    except Exception:  # the record must never stop the mail
        log.exception("could not record a %s mail", category)
    return result


def send_mail(
    *,
    to: str,
    subject: str,
    body: str,
    category: str,
    account=None,
    workspace=None,
    platform: bool = False,
    html: str | None = None,
    headers: dict[str, str] | None = None,
) -> SendResult:
    """Send one mail to one address now, if that address takes `category`, and
    record what came back (see `attempt_mail`). Notification mail goes through
    the outbox instead (notify/outbox.py); this is for a person waiting on the
    answer (the test button)."""
    result = attempt_mail(
        to=to,
        subject=subject,
        body=body,
        category=category,
        account=account,
        workspace=workspace,
        platform=platform,
        html=html,
        headers=headers,
    )
    return remember(result, to=to, subject=subject, category=category, account=account, workspace=workspace)


def attempt_mail(
    *,
    to: str,
    subject: str,
    body: str,
    category: str,
    account=None,
    workspace=None,
    platform: bool = False,
    html: str | None = None,
    headers: dict[str, str] | None = None,
    idempotency_key: str | None = None,
) -> SendResult:
    """Send one mail to one address, if that address takes `category`.

    `platform=True` (or no account) sends through the platform's connection;
    otherwise the account's own key when it has one. Never raises for the
    provider's refusal: the result carries its words.
    """
    provider = "platform"
    if not may_send(to, category, workspace if category in PER_WORKSPACE else None):
        return SendResult(
            False,
            provider,
            f"{to} has turned off {category} mail"
            + (f" for {workspace.name}." if workspace is not None and category in PER_WORKSPACE else "."),
            skipped=True,
        )
    if platform or account is None:
        connection, sender = get_connection(), settings.DEFAULT_FROM_EMAIL
    else:
        connection, sender, provider = account_sender(account, workspace)
    extra = dict(headers or {})
    text = body
    if category not in LOCKED:
        ws_id = workspace.public_id if (workspace is not None and category in PER_WORKSPACE) else ""
        link = unsubscribe_url(to, category, ws_id)
        if link:
            extra["List-Unsubscribe"] = f"<{link}>"
            extra["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
            words = STOP_WORDS.get(category, category)
            where = f" from {workspace.name}" if ws_id else ""
            text = f"{body.rstrip()}\n\n--\nStop {words}{where}: {link}\n"
    message = EmailMultiAlternatives(
        subject=subject, body=text, from_email=sender, to=[to], headers=extra, connection=connection
    )
    if html:
        message.attach_alternative(html, "text/html")
    # Read by notify.resend.EmailBackend (an HTTP header to Resend, not a mail header).
    message.idempotency_key = idempotency_key
    try:
        message.send()
    except Exception as exc:  # anymail raises its own types; SMTP its own: all are the provider's answer
        words, status = _provider_words(exc)
        log.warning("mail to a %s address was refused by %s: %s", category, provider, words)
        return SendResult(False, provider, words, status_code=status)
    status = getattr(message, "anymail_status", None)
    message_id = getattr(status, "message_id", None) if status is not None else None
    if provider == "resend":
        words = f"Resend accepted it (id {message_id})." if message_id else "Resend accepted it."
    else:
        words = f"Sent through the platform's connection from {sender}."
    return SendResult(
        True,
        provider,
        words,
        status_code=200 if provider == "resend" else None,
        message_id=str(message_id) if message_id else None,
    )


def send_platform_mail(
    *, to: str, subject: str, body: str, category: str, html: str | None = None, headers: dict[str, str] | None = None
) -> SendResult:
    """The platform's own mail — invites, low-balance warnings, security,
    billing, the webhook-disabled notice: always from the platform's sender,
    never through an account's key. Asks the address's preferences first."""
    return send_mail(to=to, subject=subject, body=body, category=category, platform=True, html=html, headers=headers)
