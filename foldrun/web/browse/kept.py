"""`vendor_session.keep`: the file under the workspace's state/web-browse/ that names the vendor's kept context or
profile, and what a secret signed it in with.

The vendor keeps the profile's cookies and storage run to run, so a login a secret's cookies (or web.browse.storage)
seeded into it is still there in a later call that names no secret: the file says so (the secrets' names, never their
values), and that call is seeded like the one that signed it in — no script beside it, the values redacted.
"""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..errors import WebToolError

if TYPE_CHECKING:
    from .call import Call

KEEP_DIR = ("state", "web-browse")


def _read(call: "Call", keep: str) -> dict:
    try:
        data = json.loads(call.tool.sandbox.joinpath(*KEEP_DIR, f"{keep}.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(call: "Call", keep: str, data: dict) -> None:
    call.tool.write_file(call.tool.sandbox.joinpath(*KEEP_DIR, f"{keep}.json"), json.dumps(data, indent=1).encode())


def kept_id(call: "Call", vendor: str, keep: str, field: str) -> str | None:
    """The vendor's context or profile id (under `field`) a run before this one left under state/web-browse/."""
    data = _read(call, keep)
    value = data.get(field) if data.get("vendor") == vendor else None
    return str(value) if value else None


def remember_id(call: "Call", vendor: str, keep: str, field: str, kept: str) -> None:
    """Write the id down, keeping what the file says a secret seeded (the same vendor's profile)."""
    data = _read(call, keep)
    seeded = {k: data[k] for k in ("seeded", "secrets") if k in data} if data.get("vendor") == vendor else {}
    _write(call, keep, {"vendor": vendor, field: kept, **seeded})


def carry_seed(call: "Call", keep: str) -> None:
    """After this call's cookies and storage went in: a seeded call marks the kept profile seeded; a call on a
    profile an earlier one seeded is seeded too, with those secrets' values to redact."""
    data = _read(call, keep)
    if not data:
        return
    names = [str(n) for n in data.get("secrets") or []]
    if call.seeded:
        kind = "storage" if call.seeded == "storage" or data.get("seeded") == "storage" else "cookies"
        _write(call, keep, {**data, "seeded": kind, "secrets": sorted(set(names) | set(call.secrets))})
    elif data.get("seeded") in ("cookies", "storage"):
        call.seeded = True if data["seeded"] == "cookies" else "storage"
        for name in names:
            try:
                call.secret_value(name)
            except WebToolError:  # a secret since deleted: nothing of it to redact here
                pass
