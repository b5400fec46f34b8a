"""Webhook headers and signatures. Pure functions: no database, no Django.

foldrun's own scheme (spec/notifications.md, "Verifying a delivery"):
`X-Foldrun-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`, plus
`x-signature`, the plain hex HMAC of the body (what an inbound
`signature: hmac` flow verifies). Added beside them, Standard Webhooks:
`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>` over
`"<id>.<timestamp>.<body>"` keyed with the secret's bytes — so a receiver
handing `whsec_` + base64(secret) to a Standard Webhooks library verifies it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac


def foldrun_signature(secret: bytes, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret, f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def plain_signature(secret: bytes, body: bytes) -> str:
    return hmac.new(secret, body, hashlib.sha256).hexdigest()


def standard_signature(secret: bytes, msg_id: str, timestamp: int, body: bytes) -> str:
    digest = hmac.new(secret, f"{msg_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def delivery_headers(
    *,
    delivery_id: str,
    event: str,
    attempt: int,
    body: bytes,
    timestamp: int,
    secrets: list[bytes] | tuple[bytes, ...] = (),
) -> dict[str, str]:
    """The headers of one attempt.

    `secrets` is newest first: the foldrun signatures use only the newest,
    `webhook-signature` carries one signature per key (the old key stays in
    it for a day after a rotation). No secret: nothing is signed.
    """
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "foldrun-webhooks",
        "X-Foldrun-Delivery": delivery_id,
        "X-Foldrun-Event": event,
        "X-Foldrun-Attempt": str(attempt),
    }
    if secrets:
        newest = secrets[0]
        headers["X-Foldrun-Timestamp"] = str(timestamp)
        headers["X-Foldrun-Signature"] = foldrun_signature(newest, timestamp, body)
        headers["x-signature"] = plain_signature(newest, body)
        headers["webhook-id"] = delivery_id
        headers["webhook-timestamp"] = str(timestamp)
        headers["webhook-signature"] = " ".join(standard_signature(s, delivery_id, timestamp, body) for s in secrets)
    return headers
