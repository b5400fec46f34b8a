"""Where the CLI keeps its sign-in: `~/.foldrun/config.json`.

`$FOLDRUN_HOME` names another folder (tests, several servers on one laptop).
`$FOLDRUN_URL` and `$FOLDRUN_TOKEN` override what the file says, so a script
or CI job can act without ever writing a token to disk. The file is written
with mode 0600 in a folder with mode 0700: it holds a bearer token.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

CONFIG_NAME = "config.json"


def config_dir() -> Path:
    """The CLI's own folder: `$FOLDRUN_HOME`, else `~/.foldrun`."""
    home = os.environ.get("FOLDRUN_HOME")
    return Path(home).expanduser() if home else Path.home() / ".foldrun"


class Config:
    """The server URL and token the CLI acts with, and where each came from. A plain class, not a dataclass:
    every `foldrun` call reads it, and dataclasses (with inspect and ast beneath it) is a tenth of --help's
    budget on a busy machine."""

    def __init__(self) -> None:
        self.url: str | None = None
        self.token: str | None = None
        self.token_id: str | None = None
        self.url_source = "none"  # "env" | "file" | "none"
        self.token_source = "none"

    @property
    def signed_in(self) -> bool:
        return bool(self.url and self.token)

    def __repr__(self) -> str:  # never show the token, even in a debugger
        return f"Config(url={self.url!r}, token={'set' if self.token else None}, token_id={self.token_id!r})"


def read_file(folder: Path | None = None) -> dict:
    """The stored config, or {} when there is none or it cannot be read."""
    path = (folder or config_dir()) / CONFIG_NAME
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_file(data: dict, folder: Path | None = None) -> Path:
    """Replace the stored config; the file is never readable by others."""
    folder = folder or config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    try:
        os.chmod(folder, 0o700)
    except OSError:  # a folder we do not own (a shared $FOLDRUN_HOME): the file mode still holds
        pass
    path = folder / CONFIG_NAME
    temporary = folder / (CONFIG_NAME + ".tmp")
    # Created 0600 from the start, so the token is never briefly world-readable.
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, sort_keys=True)
        handle.write("\n")
    os.chmod(temporary, 0o600)
    os.replace(temporary, path)
    return path


def load(folder: Path | None = None) -> Config:
    """The effective config: environment first, then the file."""
    stored = read_file(folder)
    config = Config()
    if os.environ.get("FOLDRUN_URL"):
        config.url, config.url_source = os.environ["FOLDRUN_URL"], "env"
    elif stored.get("url"):
        config.url, config.url_source = str(stored["url"]), "file"
    if os.environ.get("FOLDRUN_TOKEN"):
        config.token, config.token_source = os.environ["FOLDRUN_TOKEN"], "env"
    elif stored.get("token"):
        config.token, config.token_source = str(stored["token"]), "file"
        config.token_id = stored.get("token_id")
    if config.url:
        config.url = normalise_url(config.url)
    return config


def normalise_url(url: str) -> str:
    """`example.com` → `https://example.com`; no trailing slash."""
    url = url.strip()
    if "://" not in url:
        url = "https://" + url
    return url.rstrip("/")
