"""Helpers for contract tests: a desk from a dict, its findings as lines."""

from __future__ import annotations

from foldrun.contract import Desk, check

AGENT_WRITER = "---\nname: writer\ndescription: Writes.\ntools: [read, email]\n---\nWrite.\n"
EMAIL_TOOL = "---\ntransport: script\nname: email\noutward: true\nrun: send.py\nsecrets: [RESEND_API_KEY]\n---\n"
SEND_PY = "import json, sys\nprint(json.load(sys.stdin))\n"


def lines(
    files: dict[str, str], *, code: str | None = None, mode: str = "check", platform: dict | None = None, **desk
) -> list[str]:
    """Every finding of `check` over `files` as its printed line, optionally only one rule's code."""
    found = check(Desk(files=files, **desk), mode=mode, platform=platform)
    return [f.format() for f in found if code is None or f.code == code]
