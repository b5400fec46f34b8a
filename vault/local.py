"""The laptop vault, for `foldrun run --local`: `~/.foldrun/vault.json`
(or `$FOLDRUN_HOME`), each value sealed with AES-256-GCM under a key kept in
`vault.key` beside it (mode 0600) or given as `FOLDRUN_LOCAL_VAULT_KEY`.
Pure Python (no Django): the CLI and the local engine use it.

    vault = LocalVault(config_dir)
    vault.set("OPENAI_API_KEY", value)
    vault.values()            # {name: value} for a LocalHost
    vault.resolve(["A", "B"]) # ({name: value}, [missing])
"""

from __future__ import annotations

import base64
import datetime as dt
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from vault import localfile, oauth
from vault.crypto import Key, VaultKeyError, new_key_text, open_sealed, parse_keys, seal
from vault.localfile import FILE

KEY_FILE = "vault.key"
SCOPE = "local"


class LocalVault:
    def __init__(self, home: Path | str) -> None:
        self.home = Path(home)
        self.path = self.home / FILE

    # ------------------------------------------------------------ keys

    def _keys(self) -> list[Key]:
        env = os.environ.get("FOLDRUN_LOCAL_VAULT_KEY")
        if env:
            return parse_keys([k for k in env.split(",") if k.strip()], source="FOLDRUN_LOCAL_VAULT_KEY")
        key_path = self.home / KEY_FILE
        if not key_path.exists():
            self.home.mkdir(parents=True, exist_ok=True)
            try:
                fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass
            else:
                with os.fdopen(fd, "w") as handle:
                    handle.write(new_key_text() + "\n")
        try:
            return parse_keys([key_path.read_text().strip()], source=str(key_path))
        except VaultKeyError:
            raise

    def _key_source(self) -> str:
        """Where the laptop vault's key comes from, for a sentence about it."""
        return "FOLDRUN_LOCAL_VAULT_KEY" if os.environ.get("FOLDRUN_LOCAL_VAULT_KEY") else str(self.home / KEY_FILE)

    @staticmethod
    def _aad(name: str) -> bytes:
        return f"foldrun-local-vault/{name}".encode()

    # ------------------------------------------------------------ file

    def _read(self) -> dict[str, Any]:
        return localfile.read(self.home)

    def _write(self, data: dict[str, Any]) -> None:
        self.home.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.home, prefix=".vault-", suffix=".json")
        with os.fdopen(fd, "w") as handle:
            json.dump(data, handle, indent=1, sort_keys=True)
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)

    # ------------------------------------------------------------ use

    def set(self, name: str, value: str, *, kind: str = "value") -> None:
        data = self._read()
        kid, sealed = seal(self._keys(), value.encode(), self._aad(name))
        data["secrets"][name] = {
            "key_id": kid,
            "sealed": base64.b64encode(sealed).decode(),
            "kind": kind,
            "updated_at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        }
        self._write(data)

    def set_oauth(self, name: str, recipe: dict) -> None:
        self.set(name, json.dumps(recipe), kind="oauth2")

    def delete(self, name: str) -> bool:
        data = self._read()
        if name not in data["secrets"]:
            return False
        del data["secrets"][name]
        self._write(data)
        return True

    def list(self) -> list[dict[str, Any]]:
        """Names, scope and when — never values."""
        return [
            {"name": name, "scope": SCOPE, "kind": entry.get("kind", "value"), "updated_at": entry.get("updated_at")}
            for name, entry in sorted(self._read()["secrets"].items())
        ]

    def get(self, name: str) -> str | None:
        """The value (a live access token for an OAuth2 credential), or None."""
        entry = self._read()["secrets"].get(name)
        if entry is None:
            return None
        plain = open_sealed(
            self._keys(),
            entry["key_id"],
            base64.b64decode(entry["sealed"]),
            self._aad(name),
            name=name,
            source=self._key_source(),
        ).decode()
        if entry.get("kind") == "oauth2":
            return self._access_token(name, json.loads(plain))
        return plain

    def _access_token(self, name: str, recipe: dict) -> str:
        expires = recipe.get("expires_at")
        fresh = not expires or dt.datetime.fromisoformat(expires) > dt.datetime.now(dt.timezone.utc) + dt.timedelta(
            minutes=2
        )
        if fresh and recipe.get("access_token"):
            return recipe["access_token"]
        if not recipe.get("refresh_token"):
            raise oauth.OAuthError(
                f"the OAuth credential {name} expired at {expires} and has no refresh token — "
                f"connect it again with `foldrun connect {name} --local`"
            )
        # None: foldrun.net's "oauth" role, the same guarded client the server's refresh uses.
        answer = oauth.refresh(
            None,
            name=name,
            token_url=recipe["token_url"],
            refresh_token=recipe["refresh_token"],
            client_id=recipe.get("client_id"),
            client_secret=recipe.get("client_secret"),
        )
        recipe["access_token"] = answer.access_token
        if answer.refresh_token:
            recipe["refresh_token"] = answer.refresh_token
        recipe["expires_at"] = (
            answer.expires_at or dt.datetime.now(dt.timezone.utc) + dt.timedelta(hours=1)
        ).isoformat()
        self.set_oauth(name, recipe)
        return answer.access_token

    def resolve(self, names: list[str]) -> tuple[dict[str, str], list[str]]:
        found, missing = {}, []
        for name in sorted(set(names)):
            value = self.get(name)
            if value is None:
                missing.append(name)
            else:
                found[name] = value
        return found, missing

    def values(self) -> dict[str, str]:
        return {entry["name"]: self.get(entry["name"]) for entry in self.list()}  # type: ignore[misc]
