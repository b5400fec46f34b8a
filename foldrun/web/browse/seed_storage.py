"""`storage:` + `storage_origin:` — a login kept in Web Storage or IndexedDB, from a secret.

spec/tools.md, "When the login is not a cookie": the secret holds `{"localStorage": {…}, "sessionStorage":
{…}, "indexedDB": {db: {store: [records]}}}`; it is seeded by a script that runs in the page before any of the
site's own code, on that one origin only, and IndexedDB is filled through its own API. Nothing is read back:
the call is seeded like one carrying cookies, so no script runs beside it and `state=` refuses it. A call that
opens another origin opens without it, with one line saying so.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..errors import WebToolError

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import BrowserContext

    from .call import Call

SHAPE = (
    'a JSON object of "localStorage" and "sessionStorage" (key → text) and "indexedDB" (database → store → '
    'a list of records, or {"keyPath": …, "records": […]})'
)


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


def _shape(name: str, raw: str) -> dict:
    """The secret's storage, checked; a wrong shape is a sentence naming the secret and the part."""
    try:
        data = json.loads(raw)
    except ValueError:
        raise WebToolError(f"browse: web.browse.storage: the secret {name} is not JSON; it holds {SHAPE}") from None
    if not isinstance(data, dict) or not data or set(data) - {"localStorage", "sessionStorage", "indexedDB"}:
        raise WebToolError(f"browse: web.browse.storage: the secret {name} is not the storage shape; it holds {SHAPE}")
    for area in ("localStorage", "sessionStorage"):
        items = data.get(area, {})
        if not isinstance(items, dict) or not all(isinstance(v, str) for v in items.values()):
            raise WebToolError(f"browse: web.browse.storage: {area} in the secret {name} must map each key to text")
    databases = data.get("indexedDB", {})
    if not isinstance(databases, dict) or not all(isinstance(stores, dict) for stores in databases.values()):
        raise WebToolError(
            f"browse: web.browse.storage: indexedDB in the secret {name} must map each database to its stores"
        )
    stores: dict[str, dict[str, dict]] = {}
    for db, by_store in databases.items():
        for store, held in by_store.items():
            records = held.get("records") if isinstance(held, dict) else held
            if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
                raise WebToolError(
                    f"browse: web.browse.storage: indexedDB {db}.{store} in the secret {name} must be "
                    f"a list of records (objects)"
                )
            key_path = (
                held.get("keyPath") if isinstance(held, dict) else (next(iter(records[0]), None) if records else None)
            )
            stores.setdefault(db, {})[store] = {"keyPath": key_path, "records": records}
    return {
        "localStorage": data.get("localStorage", {}),
        "sessionStorage": data.get("sessionStorage", {}),
        "indexedDB": stores,
    }


def _leaves(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [leaf for v in value.values() for leaf in _leaves(v)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(v)]
    return []


# Runs before the site's own code; on any other origin it does nothing. IndexedDB requests are served in the
# order they are made, so the site's own open of the same database waits for this one's writes.
_SEED_JS = """(seed => {
  if (location.origin !== seed.origin) return;
  for (const [k, v] of Object.entries(seed.localStorage)) { try { localStorage.setItem(k, v); } catch (e) {} }
  for (const [k, v] of Object.entries(seed.sessionStorage)) { try { sessionStorage.setItem(k, v); } catch (e) {} }
  for (const [db, stores] of Object.entries(seed.indexedDB)) {
    const open = indexedDB.open(db);
    open.onupgradeneeded = () => {
      for (const [name, s] of Object.entries(stores))
        if (!open.result.objectStoreNames.contains(name))
          open.result.createObjectStore(name, s.keyPath ? {keyPath: s.keyPath} : {autoIncrement: true});
    };
    open.onsuccess = () => {
      const names = Object.keys(stores).filter(n => open.result.objectStoreNames.contains(n));
      if (!names.length) { open.result.close(); return; }
      const tx = open.result.transaction(names, 'readwrite');
      for (const n of names) for (const r of stores[n].records) tx.objectStore(n).put(r);
      tx.oncomplete = tx.onerror = () => open.result.close();
    };
  }
})"""


def redact_leaves(call: "Call", name: str, seed: dict) -> None:
    """Each value of the storage secret `name` is redacted on its own, wherever the page shows it."""
    for number, leaf in enumerate(sorted(set(_leaves(seed)), key=len, reverse=True), 1):
        if len(leaf) >= 8:
            call.secrets[f"{name} ({number})"] = leaf


def storage_of(name: str, raw: str) -> dict | None:
    """The secret's storage when it holds one (a storage secret an earlier call seeded), else None."""
    try:
        return _shape(name, raw)
    except WebToolError:
        return None


def seed_storage(call: "Call", context: "BrowserContext") -> None:
    """Seed the block's storage secret into every page of `storage_origin` before the site's code runs."""
    name = call.block.get("storage")
    if not name:
        return
    origin = str(call.block.get("storage_origin") or "").strip().rstrip("/").lower()
    if not origin or urlsplit(origin).scheme not in ("http", "https") or not urlsplit(origin).netloc:
        raise WebToolError(
            "browse: web.browse.storage needs storage_origin: beside it — the one origin the storage "
            "belongs to, such as https://www.example.com"
        )
    url = str(call.args.get("url") or "")
    against = str(call.args.get("against") or "").strip()  # mode=diff's other page, in this context too
    if url and _origin(url) != origin and not (against and _origin(against) == origin):
        call.tool.log(
            f"browse: {_origin(url)} is not {origin}, so the page opens without web.browse.storage "
            f"(it belongs to {origin})"
        )
        return
    raw = call.secret_value(str(name))
    seed = _shape(str(name), raw)
    redact_leaves(call, str(name), seed)
    context.add_init_script(script=f"{_SEED_JS}({json.dumps({'origin': origin, **seed})});")
    call.seeded = "storage"  # truthy, like a cookie secret's: no script beside it; the sentence names storage
