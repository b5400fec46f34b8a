"""Small pieces every part of browse uses: timeouts, the steps' JSON, names and domains."""

from __future__ import annotations

import fnmatch
import json
import os
import re
import signal
import subprocess
from typing import Any, Callable
from urllib.parse import urlsplit

from ..errors import WebToolError

ACTION_TIMEOUT_MS = 10_000


def _load_prctl() -> Any:
    try:
        import ctypes

        return ctypes.CDLL("libc.so.6", use_errno=True).prctl
    except OSError:  # not Linux: the starter's own ending stops what it started
        return None


# Looked up once, in the parent: a child between fork and exec must do as little as it can — importing ctypes and
# loading libc there took long enough, on a loaded machine, for a starter killed meanwhile to leave its child running
# on under PID 1 with no parent-death signal (seen as run-server processes outliving a test session).
_PRCTL = _load_prctl()


def dies_with_this_process() -> Callable[[], None]:
    """A `preexec_fn` for a child that must die (SIGKILL) when the thread starting it goes, however it goes — and
    that exits at once, before exec, if its starter is already gone by the time the signal is set (the signal
    then never comes; the child would run on under PID 1). Not SIGTERM: Playwright's server answers SIGTERM by
    closing its browsers and then goes on listening."""
    parent = os.getpid()

    def in_the_child() -> None:
        if _PRCTL is None:
            return
        _PRCTL(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() != parent:
            os._exit(1)

    return in_the_child


def steps_of(raw: Any) -> list:
    if raw in (None, "", []):
        return []
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except ValueError as exc:
            raise WebToolError(
                f"browse: actions= is not a JSON array of steps ({exc.msg} at character {exc.pos})"
            ) from None
    if isinstance(raw, dict):
        raw = [raw]
    if not isinstance(raw, list) or not all(isinstance(s, dict) for s in raw):
        raise WebToolError('browse: actions= must be a JSON array of steps, such as [{"click": "#go"}]')
    return raw


def allow_host_match(host: str, pattern: str) -> bool:
    """A browser session's `allowHosts` entry: `staging.example.com` names that host; `*.example.com` its
    subdomains (the session's guard and its calls read the list by this one rule)."""
    host, pattern = host.lower(), pattern.lower()
    if pattern.startswith("*."):
        return host.endswith(pattern[1:])
    return host == pattern


def domain_match(host: str, pattern: str) -> bool:
    """`*.example.com` covers the subdomains and the bare domain."""
    pattern = pattern.lower().strip()
    if pattern.startswith("*."):
        bare = pattern[2:]
        return host == bare or host.endswith("." + bare)
    return host == pattern or fnmatch.fnmatch(host, pattern)


def safe_name(raw: Any, what: str) -> str:
    name = str(raw).strip()
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", name) or ".." in name:
        raise WebToolError(f"browse: {what}= is a name of letters, digits, - _ and ., such as client-portal")
    return name


def glob_match(url: str, glob: str) -> bool:
    """Playwright's URL globs, near enough: `**` any characters, `*` any but `/`."""
    pattern = re.escape(glob).replace(r"\*\*", "\0").replace(r"\*", "[^/]*").replace("\0", ".*")
    return (
        re.fullmatch(pattern, url) is not None
        or re.fullmatch(pattern, urlsplit(url)._replace(query="").geturl()) is not None
    )


def stop_group(process: subprocess.Popen, grace: float = 3) -> None:
    """Stop a browser (or a browser server) and everything it started: its process group gets SIGTERM, then,
    after `grace` seconds still running, SIGKILL. Safe to call on a process that has already gone."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=grace)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    try:
        process.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        pass
