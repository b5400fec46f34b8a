"""The vault's keys, from settings.FOLDRUN_VAULT_KEYS (base64, newest first).

In development (DEBUG) with no keys configured, one is made under DATA_DIR
on first use so the embedded default works with nothing set; anywhere else
an absent or malformed key list is a sentence naming FOLDRUN_VAULT_KEYS.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.conf import settings

from vault.crypto import Key, VaultKeyError, new_key_text, parse_keys

DEV_KEY_FILE = "vault.key"


def _dev_key_path() -> Path:
    return Path(settings.DATA_DIR) / DEV_KEY_FILE


def _dev_key() -> str:
    path = _dev_key_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        # O_EXCL: two processes starting together agree on one key.
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(new_key_text() + "\n")
    return path.read_text().strip()


def vault_keys() -> list[Key]:
    """The keys, newest first; raises VaultKeyError with the fix in the message."""
    entries = [e for e in (getattr(settings, "FOLDRUN_VAULT_KEYS", None) or []) if str(e).strip()]
    if not entries and settings.DEBUG:
        entries = [_dev_key()]
    if not entries:
        raise VaultKeyError(
            "FOLDRUN_VAULT_KEYS is not set; the vault needs at least one base64-encoded 32-byte key "
            "(newest first, comma-separated). Make one with: "
            'python -c "import os,base64;print(base64.b64encode(os.urandom(32)).decode())"'
        )
    return parse_keys(entries)
