"""Where a delivery goes and how it is signed, read at each attempt: the URL
from `notify:` (a literal or a secret), the signing keys (the current value,
and the previous one for a day after it changed), and the one POST."""

from __future__ import annotations

import logging
import time
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import Q

from accounts.models import Workspace
from foldrun.contract.rules.notify import NotifyConfig
from vault.models import Secret

from .config import notify_config_for, webhook_url
from .models import Delivery, SigningKeyState
from .secrets import fingerprint, read_secret, seal, unseal
from .signing import delivery_headers
from .webhook import Outcome, post_once

log = logging.getLogger(__name__)

# After a signing secret changes, deliveries are signed under both for a day.
ROTATION_OVERLAP = timedelta(hours=24)


class MissingSecret(Exception):
    """A secret `notify:` names is in neither vault; the message says which."""


def signing_secrets(workspace: Workspace, config: NotifyConfig | None, now: datetime) -> list[bytes]:
    """The keys to sign with, newest first: the current value of
    `signing_secret:`, plus the previous one for a day after it changed."""
    if config is None or not config.signing_secret:
        return []
    value = read_secret(workspace.account, workspace, config.signing_secret)
    if not value:
        raise MissingSecret(
            f"the signing secret {config.signing_secret} is in neither the workspace's vault nor the account's, "
            "so nothing was sent unsigned"
        )
    print_ = fingerprint(value)
    with transaction.atomic():
        state = (
            SigningKeyState.objects.select_for_update().filter(workspace=workspace, name=config.signing_secret).first()
        )
        if state is None:
            SigningKeyState.objects.create(
                workspace=workspace, name=config.signing_secret, fingerprint=print_, current_ciphertext=seal(value)
            )
            return [value.encode()]
        if state.fingerprint != print_:
            state.previous_ciphertext = state.current_ciphertext
            state.current_ciphertext = seal(value)
            state.fingerprint = print_
            # The day counts from when the vault took the new value, not from
            # the first delivery to notice it.
            state.rotated_at = min(now, secret_changed_at(workspace, config.signing_secret) or now)
            state.save(update_fields=["previous_ciphertext", "current_ciphertext", "fingerprint", "rotated_at"])
    keys = [value.encode()]
    if state.rotated_at and now - state.rotated_at < ROTATION_OVERLAP:
        previous = unseal(state.previous_ciphertext)
        if previous and previous != value:
            keys.append(previous.encode())
    return keys


def secret_changed_at(workspace: Workspace, name: str) -> datetime | None:
    """When the secret `name` (nearest wins) last took a value in the vault."""
    rows = Secret.objects.filter(account=workspace.account, name=name).filter(
        Q(workspace=workspace) | Q(workspace__isnull=True)
    )
    nearest = sorted(rows, key=lambda r: r.workspace_id is None)  # the workspace's own first
    return nearest[0].updated_at if nearest else None


def destination(workspace: Workspace, now: datetime) -> tuple[str | None, list[bytes], Outcome | None]:
    """(URL, signing keys, None) for a workspace's webhook now, or an
    Outcome saying why nothing can be sent."""
    try:
        config = notify_config_for(workspace)
        url = webhook_url(workspace, config) if config is not None and config.is_webhook else None
        secrets = signing_secrets(workspace, config, now) if url else []
    except MissingSecret as exc:
        return None, [], Outcome(False, None, 0, "", str(exc))
    except Exception as exc:  # noqa: BLE001 — recorded as this attempt's error, so it is retried, not looped on
        log.exception("reading notify: of workspace %s failed", workspace.public_id)
        return (
            None,
            [],
            Outcome(False, None, 0, "", f"could not read notify: or its secrets now ({type(exc).__name__})"),
        )
    if not url:
        if config is not None and config.url_secret:
            return (
                None,
                [],
                Outcome(
                    False,
                    None,
                    0,
                    "",
                    f"the webhook URL secret {config.url_secret} is in neither the workspace's vault nor the account's",
                ),
            )
        return None, [], Outcome(False, None, 0, "", "the workspace's notify: names no webhook URL now")
    return url, secrets, None


def post(delivery: Delivery, number: int, url: str, secrets: list[bytes]) -> Outcome:
    body = delivery.body.encode()
    headers = delivery_headers(
        delivery_id=delivery.public_id,
        event=delivery.event,
        attempt=number,
        body=body,
        timestamp=int(time.time()),
        secrets=secrets,
    )
    return post_once(url, body, headers)


def send_attempt(delivery: Delivery, number: int, now: datetime) -> tuple[Outcome, str | None]:
    """POST the delivery's body as attempt `number`, reading the URL and the
    signing secret now. Returns the outcome and the URL it went to."""
    url, secrets, refused = destination(delivery.workspace, now)
    if refused is not None:
        return refused, None
    return post(delivery, number, url, secrets), url
