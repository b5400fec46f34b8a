"""Logins kept between calls: `session=` within the run, `state=` across runs (optionally sealed)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import TYPE_CHECKING

from foldrun import sealing

from ..errors import WebToolError
from .util import safe_name

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import BrowserContext


class StorageMixin:
    """Where a call's login lives, and reading and writing it."""

    def storage_file(self) -> Path | None:
        """Where this call's login lives between calls: `state=` across runs, `session=` within the run."""
        if self.args.get("state"):
            return self.tool.sandbox / "state" / "browser" / f"{safe_name(self.args['state'], 'state')}.json"
        if self.args.get("session"):
            return (
                self.tool.sandbox / "outputs" / ".browser" / safe_name(self.args["session"], "session") / "state.json"
            )
        return None

    def state_key(self) -> bytes | None:
        """`state_key`: the NAME of a secret whose value encrypts the `state=` login at rest (AES-256-GCM)."""
        name = self.args.get("state_key") or self.block.get("state_key")
        if not name or not self.args.get("state"):
            return None
        import hashlib

        return hashlib.sha256(self.secret_value(str(name)).encode()).digest()

    def load_storage(self) -> dict | None:
        source = self.storage_file()
        if source is None or not source.is_file():
            return None
        try:
            data = json.loads(source.read_text(encoding="utf-8"))
        except ValueError:
            raise WebToolError(
                f"browse: {self.tool.relative(source)} is not a saved login; delete it to start signed out"
            ) from None
        if isinstance(data, dict) and data.get("alg") == "AES-256-GCM":
            key = self.state_key()
            if key is None:
                raise WebToolError(
                    f"browse: the state {self.args.get('state')} is encrypted; name its state_key — "
                    f"an encrypted login is never started signed out"
                )
            try:
                sealed = base64.b64decode(data["nonce"]) + base64.b64decode(data["data"])
                plain = sealing.open_sealed([key], sealed, b"foldrun-state")
            except (sealing.Unopened, KeyError, ValueError):
                raise WebToolError(
                    f"browse: the state {self.args.get('state')} does not open with its state_key; "
                    f"the key changed, or the file did"
                ) from None
            data = json.loads(plain)
        return data if isinstance(data, dict) else None

    def save_storage(self, context: "BrowserContext") -> None:
        target = self.storage_file()
        if target is None:
            return
        if self.seeded:  # state= refused it already; a session's file is in the workspace every step can read too
            if target.is_file():
                target.unlink()
            self.tool.log(
                f"browse: session={self.args.get('session')} was signed in from a secret, so its login "
                f"is held in this step's browser only and never written to outputs/.browser/ — a later "
                f"step names the secret again"
            )
            return
        target.parent.mkdir(parents=True, exist_ok=True)
        data = json.dumps(context.storage_state(), indent=1).encode()
        key = self.state_key()
        if key is not None:
            sealed = sealing.seal(key, data, b"foldrun-state")
            nonce, body = sealed[: sealing.NONCE_BYTES], sealed[sealing.NONCE_BYTES :]
            data = json.dumps(
                {
                    "alg": "AES-256-GCM",
                    "nonce": base64.b64encode(nonce).decode(),
                    "data": base64.b64encode(body).decode(),
                }
            ).encode()
        self.tool.write_file(target, data)
