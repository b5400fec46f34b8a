"""The session tools: create_session, list_sessions, get_session, stop_session (browsing does the work)."""

from __future__ import annotations

from typing import Any

from browsing import actions
from browsing.errors import SessionError
from browsing.options import (
    MAX_HEADERS,
    MAX_QUEUE_SECONDS,
    MAX_TIMEOUT_MS,
    MAX_URL,
    MAX_WAIT_FOR_CAPACITY_MS,
    MIN_TIMEOUT_MS,
    VIEWPORT_HEIGHT,
    VIEWPORT_WIDTH,
)
from browsing.records import record, summary

from ..call import McpCall
from ..registry import mcp_tool, register_error_type
from ..results import ToolError, ToolResult, ok_json

# browsing's SessionError is the tool's error, code for code (the server answers it as a failure).
register_error_type(SessionError)

LIST_LIMIT = 200
STOP_WAIT_SECONDS = 15

_HOST_LIST = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 253}}

CREATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "startUrl": {
            "type": "string",
            "maxLength": MAX_URL,
            "description": "http or https, at most 2048 characters; opened before the session is live",
        },
        "device": {"type": "string", "description": "desktop, mobile or a device id from the device list"},
        "viewport": {
            "type": "object",
            "properties": {
                "width": {"type": "integer", "minimum": VIEWPORT_WIDTH[0], "maximum": VIEWPORT_WIDTH[1]},
                "height": {"type": "integer", "minimum": VIEWPORT_HEIGHT[0], "maximum": VIEWPORT_HEIGHT[1]},
                "deviceScaleFactor": {"type": "number"},
                "mobile": {"type": "boolean"},
            },
            "required": ["width", "height"],
            "additionalProperties": False,
        },
        "record": {"type": "boolean", "description": "Record the session as video, kept after it closes"},
        "headers": {
            "type": "array",
            "maxItems": MAX_HEADERS,
            "description": "Extra request headers sent only to the hosts named",
            "items": {
                "type": "object",
                "properties": {"host": {"type": "string"}, "name": {"type": "string"}, "value": {"type": "string"}},
                "required": ["host", "name", "value"],
                "additionalProperties": False,
            },
        },
        "credentials": {
            "description": "Fill login forms from the credential vault: true, or {namespace, autoSubmit}",
            "oneOf": [
                {"type": "boolean"},
                {
                    "type": "object",
                    "properties": {"namespace": {"type": "string"}, "autoSubmit": {"type": "boolean"}},
                    "additionalProperties": False,
                },
            ],
        },
        "proxyUrl": {"type": "string", "description": "Your own proxy, to reach a private host"},
        "allowHosts": {**_HOST_LIST, "description": "Hosts reached through proxyUrl (needs proxyUrl)"},
        "idleTimeoutMs": {
            "type": "integer",
            "minimum": MIN_TIMEOUT_MS,
            "maximum": MAX_TIMEOUT_MS,
            "description": "Close after this long with no actions. Default 5 minutes",
        },
        "maxDurationMs": {
            "type": "integer",
            "minimum": MIN_TIMEOUT_MS,
            "maximum": MAX_TIMEOUT_MS,
            "description": "Hard cap on the session's lifetime. Default 1 hour",
        },
        "engineId": {"type": "string", "description": "The engine to run on (chromium)"},
        "engineVersion": {"type": "integer", "description": "A saved engine's version; needs engineId"},
        "waitForCapacityMs": {
            "type": "integer",
            "minimum": 0,
            "maximum": MAX_WAIT_FOR_CAPACITY_MS,
            "description": "When every browser is busy, wait this long for a free one",
        },
        "queueForCapacity": {
            "type": "object",
            "properties": {"maxWaitSeconds": {"type": "integer", "minimum": 1, "maximum": MAX_QUEUE_SECONDS}},
            "required": ["maxWaitSeconds"],
            "additionalProperties": False,
            "description": "When every browser is busy, keep the session queued instead of failing",
        },
    },
}

_ID_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "sessionId": {"type": "string", "description": "The session id"},
        "id": {"type": "string", "description": "Deprecated alias of sessionId"},
    },
    "required": ["sessionId"],  # or its alias alone (ID_ALIAS): checked as if sessionId had been sent
}
ID_ALIAS = {"id": "sessionId"}


def _session_id(args: dict) -> str:
    """sessionId, or its deprecated alias id; both only when they agree."""
    primary, alias = args.get("sessionId"), args.get("id")
    if primary and alias and primary != alias:
        raise ToolError(
            "invalid_input",
            "sessionId and id name different sessions; send one of them.",
            {"issues": [{"path": "id", "message": "Must be the same as sessionId."}]},
        )
    chosen = primary or alias
    if not chosen:
        raise ToolError(
            "invalid_input",
            "sessionId is required.",
            {"issues": [{"path": "sessionId", "message": "This argument is required."}]},
        )
    return chosen


@mcp_tool(
    name="create_session",
    acts=True,
    input_schema=CREATE_SCHEMA,
    description=(
        "Open a cloud browser session (like POST /v1/sessions) that stays open across calls: pass its id as "
        "sessionId to run_task, and stop it with stop_session. Returns the session record with its id, status, "
        "endpoints and a short-lived session token. Do not send url: use startUrl."
    ),
)
def create_session(call: McpCall, args: dict) -> ToolResult:
    opts = actions.check_create_session(call.account, args)
    session = actions.do_create_session(call.account, opts, user=call.user)
    if session.queued_until is None:
        session = actions.wait_live(session)
    return ok_json(record(session, may_act=True))


@mcp_tool(
    name="list_sessions",
    input_schema={"type": "object", "properties": {}},
    description=("List the project's sessions, newest first (at most 200)."),
)
def list_sessions(call: McpCall, args: dict) -> ToolResult:
    return ok_json({"sessions": [summary(s) for s in actions.list_sessions(call.account, LIST_LIMIT)]})


@mcp_tool(
    name="get_session",
    input_schema=_ID_SCHEMA,
    aliases=ID_ALIAS,
    description=(
        "Read one session: its status and, while it is open, its endpoints (with the session token for a role that "
        "may act; a read-only member gets the status only)."
    ),
)
def get_session(call: McpCall, args: dict) -> ToolResult:
    # The session's key (token, endpoints.cdp) only for a role that may act: a viewer reads its status.
    return ok_json(record(actions.scoped_session(call.account, _session_id(args)), may_act=call.can_write))


@mcp_tool(
    name="stop_session",
    acts=True,
    input_schema=_ID_SCHEMA,
    aliases=ID_ALIAS,
    description=(
        "Stop a session and end its record. Safe to repeat: closed is true when this call stopped a running browser."
    ),
)
def stop_session(call: McpCall, args: dict) -> ToolResult:
    public_id = _session_id(args)
    answer = actions.do_stop_session(call.account, public_id, who="stop_session", cancels_runs=True)
    if answer["closed"]:
        actions.wait_ended(actions.scoped_session(call.account, public_id), timeout=STOP_WAIT_SECONDS)
    return ok_json(answer)
