"""A tool's `idempotencyKey`: what `POST …/runs`'s Idempotency-Key is (runs/idempotency.py), for a tool that
starts something a client may start twice — an MCP client that gave up waiting and calls again.

For 24 hours the same key and the same arguments (the wait aside) answer what the first call started; the key
with other arguments is refused (`idempotency_key_reused`) naming it. The key is the account's: it is kept in the
workspace the account's tasks run in (runs.browser_tasks.workspace_of)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from accounts.models import Workspace
from foldrun.api import ApiError
from runs.idempotency import MAX_KEY, check_idempotency_key, do_start_once, request_hash
from runs.models import IdempotencyKey

from .results import ToolError

ARGUMENT = "idempotencyKey"
SCHEMA: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_KEY,
    "description": "1 to 255 printable ASCII characters. For 24 hours the same key and the same arguments answer the "
    "task the first call started instead of starting another (a retry after a timeout is safe); the same key with "
    "other arguments is refused (idempotency_key_reused)",
}
# What does not change what is started: how long this call waits for it.
NOT_HASHED = frozenset({ARGUMENT, "waitSeconds"})

Started = TypeVar("Started")


def start_once(
    tool: str,
    workspace: Callable[[], Workspace],
    args: dict[str, Any],
    start: Callable[[], Started],
    *,
    kept: Callable[[Started], dict[str, Any]],
    found: Callable[[IdempotencyKey], Started | None],
) -> tuple[Started, bool]:
    """`start()` once per key in `workspace()` (and whether this is a repeat), or at once without a key. The refusals are the
    tool's errors: a bad key `invalid_input` naming the argument, a key used with other arguments
    `idempotency_key_reused`."""
    try:
        key = check_idempotency_key(args.get(ARGUMENT), where=ARGUMENT)
    except ApiError as refused:
        issues = [{"path": ARGUMENT, "message": refused.message}]
        raise ToolError("invalid_input", refused.message, {"issues": issues}) from None
    if key is None:
        return start(), False
    asked = {name: value for name, value in args.items() if name not in NOT_HASHED}
    try:
        return do_start_once(
            workspace(), key, request_hash(f"mcp {tool}", asked), start, kept=kept, found=found, where=ARGUMENT
        )
    except ApiError as refused:  # the key's own refusals (runs.idempotency): the start's are the tool's errors
        raise ToolError(refused.code, refused.message, refused.details or None) from None
