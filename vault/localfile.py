"""The laptop vault's file, `vault.json` under `~/.foldrun/` (or `$FOLDRUN_HOME`): where it is and how it
reads. Apart from vault.local (the sealing, the keys, an OAuth credential's refresh) so that `foldrun check`
can say which names the laptop vault holds without loading cryptography, httpx and the OAuth client.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FILE = "vault.json"


def read(home: Path) -> dict[str, Any]:
    """The vault file's content: `{"version": 1, "secrets": {name: entry}}` (empty when there is no file)."""
    path = Path(home) / FILE
    if not path.exists():
        return {"version": 1, "secrets": {}}
    data = json.loads(path.read_text())
    data.setdefault("secrets", {})
    return data


def held_names(home: Path) -> set[str]:
    """The names the laptop vault holds — never a value."""
    return set(read(home)["secrets"])
