"""Signed deliveries, checked the way the spec tells a receiver to check them,
and by a Standard Webhooks library handed whsec_ + base64 of the secret."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from datetime import timedelta

import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook

from notify.actions import do_record_delivery, perform_attempt
from notify.models import SigningKeyState
from vault.actions import do_set_secret

from .conftest import write_agents_md

SECRET = "ops-signing-key-0123456789"


def verify_foldrun(raw_body: bytes, headers, secret: str, tolerance=300) -> bool:
    """Copied from spec/notifications.md, "Verifying a delivery" (Python)."""
    ts = headers.get("X-Foldrun-Timestamp")
    sig = (headers.get("X-Foldrun-Signature") or "").removeprefix("sha256=")
    if not ts or not sig or abs(time.time() - int(ts)) > tolerance:
        return False
    want = hmac.new(secret.encode(), f"{ts}.".encode() + raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(sig, want)


@pytest.fixture
def signed(workspace, receiver):
    do_set_secret(workspace.account, None, "OPS_WEBHOOK_URL", value=receiver.url)
    do_set_secret(workspace.account, None, "OPS_WEBHOOK_SIGNING_KEY", value=SECRET)
    write_agents_md(
        workspace,
        "---\nnotify:\n  url: ${OPS_WEBHOOK_URL}\n  signing_secret: OPS_WEBHOOK_SIGNING_KEY\n---\n",
        library=True,
    )
    return workspace


def _deliver(workspace):
    delivery = do_record_delivery(workspace, "failed", '{"text": "BAD \\u2014 signed"}')
    perform_attempt(delivery.pk)
    return delivery


def test_a_signed_delivery_verifies_with_the_spec_s_own_code(signed, receiver):
    _deliver(signed)
    request = receiver.requests[0]
    assert verify_foldrun(request["body"], request["headers"], SECRET) is True
    assert verify_foldrun(request["body"], request["headers"], "another-secret") is False
    assert request["headers"]["X-Foldrun-Signature"].startswith("sha256=")


def test_a_replayed_delivery_with_a_fresh_timestamp_does_not_verify(signed, receiver):
    _deliver(signed)
    request = receiver.requests[0]
    forged = dict(request["headers"], **{"X-Foldrun-Timestamp": str(int(time.time()) + 1)})
    assert verify_foldrun(request["body"], forged, SECRET) is False


def test_x_signature_is_the_plain_hmac_of_the_body(signed, receiver):
    _deliver(signed)
    request = receiver.requests[0]
    assert request["headers"]["x-signature"] == hmac.new(SECRET.encode(), request["body"], hashlib.sha256).hexdigest()


def test_a_standard_webhooks_library_accepts_the_delivery(signed, receiver):
    delivery = _deliver(signed)
    request = receiver.requests[0]
    assert request["headers"]["webhook-id"] == delivery.public_id
    verifier = Webhook("whsec_" + base64.b64encode(SECRET.encode()).decode())
    assert verifier.verify(request["body"], request["headers"]) == {"text": "BAD — signed"}


def test_after_a_rotation_webhook_signature_carries_the_old_and_new_key_for_a_day(signed, receiver):
    _deliver(signed)
    do_set_secret(signed.account, None, "OPS_WEBHOOK_SIGNING_KEY", value="the-new-signing-key")
    _deliver(signed)
    request = receiver.requests[1]
    assert len(request["headers"]["webhook-signature"].split(" ")) == 2
    for key in (SECRET, "the-new-signing-key"):
        Webhook("whsec_" + base64.b64encode(key.encode()).decode()).verify(request["body"], request["headers"])
    assert verify_foldrun(request["body"], request["headers"], "the-new-signing-key") is True
    assert verify_foldrun(request["body"], request["headers"], SECRET) is False
    SigningKeyState.objects.update(rotated_at=timezone.now() - timedelta(hours=25))
    _deliver(signed)
    assert len(receiver.requests[2]["headers"]["webhook-signature"].split(" ")) == 1


def test_the_signing_secret_is_never_kept_in_the_clear(signed, receiver):
    _deliver(signed)
    state = SigningKeyState.objects.get()
    assert SECRET not in state.current_ciphertext and SECRET not in state.fingerprint


def test_another_install_s_inbound_hmac_webhook_flow_accepts_the_delivery(signed, receiver):
    from runs.triggers import signature_ok

    _deliver(signed)
    request = receiver.requests[0]
    assert signature_ok(request["body"], request["headers"]["x-signature"], SECRET) is True


def test_a_missing_signing_secret_sends_nothing_unsigned(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n  signing_secret: NOT_IN_THE_VAULT\n---\n")
    delivery = do_record_delivery(workspace, "failed", "{}")
    attempt = perform_attempt(delivery.pk).attempt
    assert receiver.requests == []
    assert attempt.error == (
        "the signing secret NOT_IN_THE_VAULT is in neither the workspace's vault nor the account's, "
        "so nothing was sent unsigned"
    )


def test_a_missing_url_secret_is_named_in_the_attempt(workspace):
    write_agents_md(workspace, "---\nnotify:\n  url: ${NOWHERE_URL}\n---\n")
    attempt = perform_attempt(do_record_delivery(workspace, "failed", "{}").pk).attempt
    assert attempt.error == "the webhook URL secret NOWHERE_URL is in neither the workspace's vault nor the account's"


def test_a_redelivery_is_signed_afresh_with_the_secret_as_it_is_now(signed, receiver):
    from notify.actions import do_redeliver
    from notify.models import Delivery

    delivery = _deliver(signed)
    do_set_secret(signed.account, None, "OPS_WEBHOOK_SIGNING_KEY", value="rotated-since")
    do_redeliver(Delivery.objects.get(pk=delivery.pk))
    first, second = receiver.requests
    assert first["body"] == second["body"]
    assert verify_foldrun(second["body"], second["headers"], "rotated-since") is True
    assert second["headers"]["X-Foldrun-Delivery"] == delivery.public_id
