"""Re-seal every vault value under the newest FOLDRUN_VAULT_KEYS key.

Rotation: put the new key first in FOLDRUN_VAULT_KEYS (keep the old one after
it), restart, run this, then drop the old key.
"""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from vault.actions import rotate_keys
from vault.crypto import VaultKeyError


class Command(BaseCommand):
    help = "Re-encrypt every secret under the newest key in FOLDRUN_VAULT_KEYS."

    def handle(self, *args, **options):
        try:
            done, failed = rotate_keys()
        except VaultKeyError as exc:
            raise CommandError(str(exc)) from None
        self.stdout.write(f"Re-encrypted {done} value(s) under the newest key.")
        if failed:
            raise CommandError(
                f"{len(failed)} secret(s) could not be decrypted with any key in FOLDRUN_VAULT_KEYS and were left "
                f"as they are: {', '.join(sorted(set(failed)))}. Put the key that sealed them back in the list."
            )
