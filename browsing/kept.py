"""The record of what seeded a vendor's kept profile (`vendor_session.keep`), for the web tool's browse calls.

A step's host hands `KeptSeeds(workspace)` to the web tool (runs/host.py); the tool asks it, from the step's
own thread, which secrets signed a kept profile in and tells it when a call's secret does. Nothing here is in
the workspace's files, so no program of the workspace can rub a login's mark out.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts.models import Workspace

from .models import KeptSeed, SeedKind

ID_LENGTH = KeptSeed._meta.get_field("kept_id").max_length


class KeptSeeds:
    """The seeded records of one workspace's kept vendor profiles: never another workspace's or account's."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def _rows(self, vendor: str, keep: str):  # noqa: ANN202 - a queryset
        return KeptSeed.objects.filter(
            account_id=self.workspace.account_id, workspace=self.workspace, vendor=vendor, keep=keep
        )

    def seeds(self, vendor: str, keep: str) -> list[dict]:
        """Every record for the keep, whatever id it names: {"kept": id, "seeded": cookies|storage, "secrets"}."""
        return [
            {"kept": row.kept_id, "seeded": row.seeded, "secrets": list(row.secrets or [])}
            for row in self._rows(vendor, keep)
        ]

    def note(self, vendor: str, keep: str, kept: str, seeded: str, secrets: list[str]) -> None:
        """A secret seeded the profile `kept`: its record gains the secrets, and storage once it was storage."""
        kind = SeedKind.STORAGE if seeded == SeedKind.STORAGE else SeedKind.COOKIES
        kept = str(kept)[:ID_LENGTH]
        for _ in range(2):  # a step beside this one may make the row first: then it is updated
            try:
                with transaction.atomic():
                    row = self._rows(vendor, keep).select_for_update().filter(kept_id=kept).first()
                    if row is None:
                        KeptSeed.objects.create(
                            account_id=self.workspace.account_id,
                            workspace=self.workspace,
                            vendor=vendor,
                            keep=keep,
                            kept_id=kept,
                            seeded=kind,
                            secrets=sorted(set(secrets)),
                        )
                        return
                    row.seeded = SeedKind.STORAGE if SeedKind.STORAGE in (row.seeded, kind) else kind
                    row.secrets = sorted(set(row.secrets or []) | set(secrets))
                    row.updated_at = timezone.now()
                    row.save(update_fields=["seeded", "secrets", "updated_at"])
                    return
            except IntegrityError:
                continue
