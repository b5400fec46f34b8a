"""`vendor_session.keep`: the file under the workspace's state/web-browse/ that names the vendor's kept context or
profile, and the record, outside the workspace, of what secret signed it in.

The vendor keeps the profile's cookies and storage run to run, so a login a secret's cookies (or web.browse.storage)
seeded into it is still there in a later call that names no secret: that call is seeded like the one that signed it
in — no script beside it, the values redacted. What seeded it is not in the file: state/ is the workspace's, and its
programs (a script tool with state writes) can write it, so a mark there could be rubbed out and the next call would
run `js` beside the signed-in profile. The host's seed book (`tool.seeds`: browsing.kept.KeptSeeds on the server, a
database row per vendor, keep and kept id) holds it, where no program reaches; the file holds only the vendor's id.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import WebToolError
from .seed_storage import redact_leaves, storage_of

if TYPE_CHECKING:
    from .call import Call

KEEP_DIR = ("state", "web-browse")
KINDS = ("cookies", "storage")
_LEAF = re.compile(r" \(\d+\)$")  # "SITE_STORAGE (2)": one value of a storage secret, redacted on its own


class SeedBook(Protocol):
    """What seeded a workspace's kept vendor profiles, kept where the workspace's programs cannot write."""

    def seeds(self, vendor: str, keep: str) -> list[dict]:
        """Every record for the keep, whatever id it names: {"kept": id, "seeded": cookies|storage, "secrets"}."""

    def note(self, vendor: str, keep: str, kept: str, seeded: str, secrets: list[str]) -> None:
        """A secret seeded the vendor's profile `kept` (its names, never its values)."""


def _read(call: "Call", keep: str) -> dict:
    try:
        data = json.loads(call.tool.sandbox.joinpath(*KEEP_DIR, f"{keep}.json").read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(call: "Call", keep: str, data: dict) -> None:
    call.tool.write_file(call.tool.sandbox.joinpath(*KEEP_DIR, f"{keep}.json"), json.dumps(data, indent=1).encode())


def _book(call: "Call", what: str) -> Any:
    """The tool's seed book, called in the step's thread (the server's is the ORM's)."""
    book = call.tool.seeds
    return lambda *args: call.tool.hand(lambda: getattr(book, what)(*args))


def kept_id(call: "Call", vendor: str, keep: str, field: str) -> str | None:
    """The vendor's context or profile id (under `field`) a run before this one left under state/web-browse/."""
    data = _read(call, keep)
    value = data.get(field) if data.get("vendor") == vendor else None
    return str(value) if value else None


def remember_id(call: "Call", vendor: str, keep: str, field: str, kept: str) -> None:
    """Write the id down — the vendor's id alone. A `seeded` mark the file still carries from before the seed book
    held it is moved into the book first, for the id the file named, so nothing an older run seeded is unseeded.
    With no book (a laptop) the mark stays in the file, for the server's book to take in when the desk gets there:
    it is never what decides here (carry_seed), and a mark only ever adds a login to the record."""
    data = _read(call, keep)
    marked = data.get("vendor") == vendor and data.get("seeded") in KINDS
    if marked and call.tool.seeds is not None:
        names = [str(n) for n in data.get("secrets") or [] if isinstance(n, (str, int))]
        _book(call, "note")(vendor, keep, str(data.get(field) or kept), str(data["seeded"]), names)
    mark = {k: data[k] for k in ("seeded", "secrets") if k in data} if marked and call.tool.seeds is None else {}
    _write(call, keep, {"vendor": vendor, field: kept, **mark})


def carry_seed(call: "Call", vendor: str, keep: str, kept: str) -> None:
    """After this call's cookies and storage went in: a seeded call records the kept profile seeded; a call on a
    profile an earlier one seeded is seeded too, with those secrets' values to redact.

    Every record for the keep counts, whichever id it names: the id came from the workspace's file, which a program
    may have swapped (for one the book has no record of, or back again), so a disagreement is read the safe way —
    the profile may well be the signed-in one, and the call is seeded by the secrets the book recorded. Without a
    book (a tool given none: nothing outside the workspace to keep the record in), every kept profile is treated as
    signed in, since nothing could say it is not.
    """
    if call.tool.seeds is None:
        data = _read(call, keep) if call.seeded else {}
        if data:  # the laptop's mark, as the file always had it, for a server's book to take in later
            kind = "storage" if "storage" in (call.seeded, data.get("seeded")) else "cookies"
            names = {str(n) for n in data.get("secrets") or []} | {_LEAF.sub("", n) for n in call.secrets}
            _write(call, keep, {**data, "seeded": kind, "secrets": sorted(names)})
        call.seeded = call.seeded or "unrecorded"
        return
    records = _book(call, "seeds")(vendor, keep)
    if call.seeded:
        _book(call, "note")(
            vendor,
            keep,
            kept,
            "storage" if call.seeded == "storage" else "cookies",
            sorted({_LEAF.sub("", name) for name in call.secrets}),
        )
    elif records:
        call.seeded = "storage" if any(r.get("seeded") == "storage" for r in records) else True
    for name in sorted({_LEAF.sub("", str(n)) for r in records for n in r.get("secrets") or []} - set(call.secrets)):
        try:
            value = call.secret_value(name)
        except WebToolError:  # a secret since deleted: nothing of it to redact here
            continue
        seed = storage_of(name, value) if value.lstrip().startswith("{") else None
        if seed is not None:  # a storage secret: the page shows its values, never the whole JSON
            redact_leaves(call, name, seed)
