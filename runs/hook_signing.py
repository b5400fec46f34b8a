"""Checking an inbound webhook's signature, by the scheme its flow's `webhook: {signature: …}` names.

Pure functions (no database): `verify` answers what the request proved, or a Refusal with the sentence.

- `hmac` — foldrun's own. `X-Foldrun-Timestamp` with `X-Foldrun-Signature: sha256=<hex HMAC of
  "<timestamp>.<body>">` (what a foldrun notification carries), or the spec's `x-signature`, the hex
  HMAC of the body alone.
- `standard` — Standard Webhooks: `webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64>`
  (space-separated, any may match) over `"<id>.<timestamp>.<body>"`; a `whsec_` secret is base64.
- `github` — `X-Hub-Signature-256: sha256=<hex HMAC of the body>`.
- `stripe` — `Stripe-Signature: t=<timestamp>,v1=<hex HMAC of "<t>.<body>">` (any v1 may match).

A signed timestamp must be within WINDOW seconds of this server's clock, so a captured request cannot
be sent again later. Every accepted request yields replay keys (`Verified.keys`): the first is checked
and kept, so the same signed request again starts nothing. A signature over the body alone has no
time in it: its key is kept with the run it started — and, for `hmac`, beside every timestamped
delivery too, so stripping a notification's timestamp headers does not make its body new — and
refuses the same signed body however late it comes.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from dataclasses import dataclass, field
from typing import Mapping


WINDOW = 300  # seconds either side of this server's clock

# The spec's sentence for the body-only scheme, kept word for word.
HMAC_SENTENCE = "The x-signature header is missing or wrong; nothing was started."


class Refusal(Exception):
    """The request is refused; `message` is the sentence, `code` the error code (401)."""

    def __init__(self, message: str, code: str = "bad_signature") -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class Verified:
    scheme: str
    keys: list[str] = field(default_factory=list)  # replay keys: [the one checked, others only kept]
    signed_id: str = ""  # an id the signature covers (Standard Webhooks' webhook-id)


def secret_not_set(name: str) -> str:
    """What a signed request hears while the flow's `secret:` is not in the vault: the signature may be right,
    so saying it is "missing or wrong" would send the sender to the wrong fix."""
    named = f" {name}" if name else ""
    fix = f" (foldrun secrets set {name})" if name else ""
    return (
        f"This flow's webhook secret{named} is not set in the workspace's vault, so no signature can be "
        f"checked; set it{fix} and send again. Nothing was started."
    )


def _mac(secret: bytes, message: bytes) -> bytes:
    return hmac.new(secret, message, hashlib.sha256).digest()


def _same(given: str, want: str) -> bool:
    return hmac.compare_digest(given.strip().lower().encode(), want.encode())


def _body_key(secret: bytes, body: bytes) -> str:
    # a key from the MAC, not the MAC itself: nothing stored would verify a forged body
    return "body:" + hashlib.sha256(_mac(secret, body)).hexdigest()


def _timed_key(material: bytes) -> str:
    return "signed:" + hashlib.sha256(material).hexdigest()


def _fresh(stamp: str | None, header: str, now: float) -> int:
    """The timestamp as an int, or a Refusal: missing, not a number, or outside the window."""
    if not stamp or not stamp.strip():
        raise Refusal(
            f"The {header} header is missing; this flow's webhook wants a signed timestamp; nothing was started."
        )
    try:
        value = int(stamp.strip())
    except ValueError:
        raise Refusal(
            f"The {header} header must be Unix seconds, not {stamp.strip()[:40]!r}; nothing was started."
        ) from None
    off = abs(now - value)
    if off > WINDOW:
        raise Refusal(
            f"The {header} is {off:,.0f} s from this server's clock, more than the {WINDOW} s a signed "
            f"webhook may be old: a replay, or a sender whose clock is wrong; nothing was started.",
            code="stale_signature",
        )
    return value


def verify(
    scheme: str, secret: str, body: bytes, headers: Mapping[str, str], now: float | None = None, secret_name: str = ""
) -> Verified:
    """What a request proved under `scheme` (one of SCHEMES), or Refusal. `headers` reads names case-blind."""
    now = time.time() if now is None else now
    if scheme == "none":
        return Verified("none")
    if not secret:
        raise Refusal(secret_not_set(secret_name), code="secret_not_set")
    key = secret.encode()
    if scheme == "hmac":
        return _hmac(key, body, headers, now)
    if scheme == "standard":
        return _standard(secret, body, headers, now)
    if scheme == "github":
        given = (headers.get("X-Hub-Signature-256") or "").strip()
        if not given.lower().startswith("sha256=") or not _same(given[7:], _mac(key, body).hex()):
            raise Refusal("The X-Hub-Signature-256 header is missing or wrong; nothing was started.")
        return Verified("github", [_body_key(key, body)])
    if scheme == "stripe":
        return _stripe(key, body, headers, now)
    raise Refusal(f"signature: {scheme} is not a scheme this platform checks; nothing was started.")


def _hmac(key: bytes, body: bytes, headers: Mapping[str, str], now: float) -> Verified:
    timed = headers.get("X-Foldrun-Signature")
    if timed is not None:
        stamp = _fresh(headers.get("X-Foldrun-Timestamp"), "X-Foldrun-Timestamp", now)
        want = _mac(key, f"{stamp}.".encode() + body).hex()
        if not _same(timed.strip().removeprefix("sha256="), want):
            raise Refusal(
                "The X-Foldrun-Signature header is wrong for this body and X-Foldrun-Timestamp; nothing was started."
            )
        return Verified("hmac", [_timed_key(f"hmac.{want}".encode()), _body_key(key, body)])
    plain = headers.get("x-signature")
    if not plain or not _same(plain.strip().removeprefix("sha256="), _mac(key, body).hex()):
        raise Refusal(HMAC_SENTENCE)
    return Verified("hmac", [_body_key(key, body)])


def _standard(secret: str, body: bytes, headers: Mapping[str, str], now: float) -> Verified:
    msg_id = (headers.get("webhook-id") or "").strip()
    if not msg_id:
        raise Refusal("The webhook-id header is missing; nothing was started.")
    stamp = _fresh(headers.get("webhook-timestamp"), "webhook-timestamp", now)
    try:  # a `whsec_` secret is base64 of the key's bytes, as every Standard Webhooks library reads it
        key = base64.b64decode(secret[6:], validate=True) if secret.startswith("whsec_") else secret.encode()
    except (binascii.Error, ValueError):
        key = secret.encode()
    want = base64.b64encode(_mac(key, f"{msg_id}.{stamp}.".encode() + body)).decode()
    given = [part.partition(",") for part in (headers.get("webhook-signature") or "").split()]
    if not any(version == "v1" and hmac.compare_digest(value.encode(), want.encode()) for version, _, value in given):
        raise Refusal(
            "The webhook-signature header is missing or wrong for this webhook-id, webhook-timestamp "
            "and body; nothing was started."
        )
    return Verified("standard", [_timed_key(f"standard.{want}".encode())], signed_id=msg_id)


def _stripe(key: bytes, body: bytes, headers: Mapping[str, str], now: float) -> Verified:
    fields: dict[str, list[str]] = {}
    for part in (headers.get("Stripe-Signature") or "").split(","):
        name, _, value = part.strip().partition("=")
        fields.setdefault(name, []).append(value)
    if "t" not in fields or "v1" not in fields:
        raise Refusal("The Stripe-Signature header is missing or has no t= and v1=; nothing was started.")
    stamp = _fresh(fields["t"][0], "Stripe-Signature timestamp (t=)", now)
    want = _mac(key, f"{stamp}.".encode() + body).hex()
    if not any(_same(value, want) for value in fields["v1"]):
        raise Refusal("The Stripe-Signature header is wrong for this body and its t=; nothing was started.")
    return Verified("stripe", [_timed_key(f"stripe.{want}".encode())])


def scheme_of(config: dict) -> str:
    """The scheme a flow's `webhook:` names (`none` when it names none); the contract refuses any other word."""
    return str(config.get("signature") or "none").strip().lower()
