"""Key rotation: every value sealed with the vault's keys, re-sealed under the newest key.

The vault's own rows (secrets, OAuth connections under way, site logins) are listed here; an app above the vault
that seals values of its own with the vault's keys (browsing: a session's extra headers and proxy URL) registers
its column from its AppConfig.ready, so rotation reaches it without the vault importing that app.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.db import models, transaction

from .crypto import UndecryptableSecret, open_sealed, seal
from .keys import vault_keys
from .models import OAuthPending, Secret, SiteLogin


@dataclass(frozen=True)
class SealedColumn:
    """One model's sealed value: the key id field, the sealed bytes field, the row's binding, a name for a refusal."""

    model: type[models.Model]
    key_field: str
    value_field: str
    aad: Callable[[Any], bytes]
    label: Callable[[Any], str]


COLUMNS: list[SealedColumn] = [
    SealedColumn(Secret, "key_id", "sealed", lambda row: row.aad(), lambda row: row.name),
    SealedColumn(
        OAuthPending, "key_id", "sealed", lambda row: row.aad(), lambda row: f"the OAuth connection {row.name}"
    ),
    SealedColumn(
        SiteLogin,
        "key_id",
        "sealed_password",
        lambda row: row.aad(),
        lambda row: f"the login for {row.host} ({row.namespace})",
    ),
]


def register(column: SealedColumn) -> None:
    """Another app's sealed column, rotated with the vault's own (once, however often ready() runs)."""
    if not any(c.model is column.model and c.value_field == column.value_field for c in COLUMNS):
        COLUMNS.append(column)


def rotate_keys(batch: int = 200) -> tuple[int, list[str]]:
    """Re-seal every value under the newest key. Returns (re-sealed count, names that no configured key opens —
    left untouched, never blanked)."""
    keys = vault_keys()
    newest = keys[0].id
    done, failed = 0, []
    for column in COLUMNS:
        model = column.model
        # An empty key id is a row with nothing sealed (a session without headers).
        ids = list(
            model.objects.exclude(**{column.key_field: newest})
            .exclude(**{column.key_field: ""})
            .values_list("pk", flat=True)
        )
        for start in range(0, len(ids), batch):
            with transaction.atomic():
                for row in model.objects.select_for_update().filter(pk__in=ids[start : start + batch]):
                    sealed = getattr(row, column.value_field)
                    if not sealed:
                        continue
                    try:
                        plain = open_sealed(
                            keys, getattr(row, column.key_field), bytes(sealed), column.aad(row), name=column.label(row)
                        )
                    except UndecryptableSecret:
                        failed.append(column.label(row))
                        continue
                    kid, value = seal(keys, plain, column.aad(row))
                    setattr(row, column.key_field, kid)
                    setattr(row, column.value_field, value)
                    row.save(update_fields=[column.key_field, column.value_field])
                    done += 1
    return done, failed
