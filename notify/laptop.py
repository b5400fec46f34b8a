"""Notifications on a laptop install (`foldrun run --local`): no worker to
retry from and no database, so a webhook is one attempt, with the same
headers a server sends, and no log."""
from __future__ import annotations

import json
import time

from foldrun.ids import new_id

from .signing import delivery_headers
from .webhook import Outcome, post_once


def deliver_once(url: str, event: str, payload: dict, *, signing_secret: str | None = None) -> Outcome:
    """POST `payload` to `url` once, signed when a secret is given."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    headers = delivery_headers(
        delivery_id=new_id("dlv"),
        event=event,
        attempt=1,
        body=body,
        timestamp=int(time.time()),
        secrets=[signing_secret.encode()] if signing_secret else [],
    )
    return post_once(url, body, headers)
