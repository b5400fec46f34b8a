"""The ledger side of the account's browser pods (foldrun/web/browse/servers.py reaps them)."""

from __future__ import annotations

import logging
import threading
from decimal import Decimal

from django.db import connection

from foldrun.web.browse import servers

from .models import Account, BrowserPodLine

log = logging.getLogger(__name__)


def record_pod_line(account_public_id: str, line: dict) -> None:
    """Write a reaped pod's line. The reaper may be any thread, the browser's own included (whose event loop
    the ORM refuses), so the row is written from a short thread of its own."""

    def write() -> None:
        try:
            account = Account.objects.filter(public_id=account_public_id).first()
            if account is not None:
                BrowserPodLine.objects.create(
                    account=account,
                    pod=str(line["pod"])[:80],
                    seconds=Decimal(str(line["seconds"])),
                    bytes=int(line["bytes"]),
                )
        except Exception as exc:  # noqa: BLE001 - a worker shutting down may have no database left
            log.warning("browser pod %s: its line was not written (%s)", line.get("pod"), exc)
        finally:
            connection.close()

    writer = threading.Thread(target=write, name="foldrun-pod-line")
    writer.start()
    writer.join(timeout=30)


def connect() -> None:
    servers.POOL.on_reap = record_pod_line
