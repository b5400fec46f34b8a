"""anymail's Resend backend, plus Resend's `Idempotency-Key` HTTP header:
every try of one outbox mail carries the mail's id, so Resend sends it once
however often a lost worker's retry asks (Resend keeps keys 24 hours)."""

from __future__ import annotations

from anymail.backends.resend import EmailBackend as AnymailResendBackend


class EmailBackend(AnymailResendBackend):
    def build_message_payload(self, message, defaults):
        payload = super().build_message_payload(message, defaults)
        key = getattr(message, "idempotency_key", None)
        if key:
            payload.headers["Idempotency-Key"] = str(key)[:256]
        return payload
