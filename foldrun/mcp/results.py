"""What a tool call returns: a result or a failure, in the spec's shape.

A failure is not a JSON-RPC error: it comes back as a normal result with
`isError: true`, the text `[code] message` and `structuredContent.error`
`{code, message, details?}` — so a model reads the sentence and a program the
code. Handlers return `ok(...)` / `media(...)` or raise `ToolError`; the server
turns what they give into the SDK's `CallToolResult` (`to_call_result`), which
is where the 100,000-byte reduction happens, so no handler can forget it.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field, replace
from typing import Any

import mcp_types as types

# The spec's limits on what a result carries ("The skill result").
STRING_LIMIT = 2000
RESULT_LIMIT_BYTES = 100_000
# A step reduced to one line keeps only these keys (those it has).
STEP_LINE_KEYS = ("index", "path", "kind", "label", "ok", "ms", "error")

Content = types.TextContent | types.ImageContent | types.EmbeddedResource


@dataclass(frozen=True)
class ToolResult:
    content: list[Content] = field(default_factory=list)
    structured: dict[str, Any] | None = None
    is_error: bool = False
    # When the text is the JSON of `structured` (scrape, crawl…), a reduction re-writes it.
    text_is_json: bool = False


class ToolError(Exception):
    """Raised by a handler for a call that cannot give a result; the server answers `failure(...)`."""

    def __init__(self, code: str, message: str, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"[{code}] {message}")
        self.code = code
        self.message = message
        self.details = details


def cut(text: str, n: int = STRING_LIMIT) -> str:
    """A string of at most `n` characters; a cut one ends with an ellipsis so it reads as cut."""
    if len(text) <= n:
        return text
    return text[: n - 1] + "…"


def cut_strings(value: Any, n: int = STRING_LIMIT, *, keep: frozenset[str] = frozenset()) -> Any:
    """`value` with every string in it cut at `n` characters, except under the keys in `keep`
    (base64 payloads such as scrape's `screenshot` must stay whole)."""
    if isinstance(value, str):
        return cut(value, n)
    if isinstance(value, dict):
        return {k: (v if k in keep else cut_strings(v, n, keep=keep)) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [cut_strings(v, n, keep=keep) for v in value]
    return value


def text(body: str) -> types.TextContent:
    return types.TextContent(type="text", text=body)


def image(data: bytes, mime_type: str) -> types.ImageContent:
    return types.ImageContent(type="image", data=base64.b64encode(data).decode("ascii"), mime_type=mime_type)


def embedded_blob(uri: str, mime_type: str, data: bytes) -> types.EmbeddedResource:
    """A file as an embedded resource with a base64 `blob` (the `pdf` tool's `webagent://quick/pdf`)."""
    return types.EmbeddedResource(
        type="resource",
        resource=types.BlobResourceContents(uri=uri, mime_type=mime_type, blob=base64.b64encode(data).decode("ascii")),
    )


def ok(
    body: str,
    structured: dict[str, Any] | None = None,
    *,
    extra_content: tuple[Content, ...] = (),
    is_error: bool = False,
) -> ToolResult:
    """A result: the text for the model, the same data as JSON, and any image/resource after the text.
    `is_error=True` is for a result that exists but means the tool could not do its job (the spec's
    per-tool table: a task stopped by a CAPTCHA, a report with verdict `error`)."""
    return ToolResult(content=[text(body), *extra_content], structured=structured, is_error=is_error)


def ok_json(structured: dict[str, Any]) -> ToolResult:
    """A result whose text is the JSON itself (scrape, crawl, the session records)."""
    return ToolResult(content=[text(_dumps(structured))], structured=structured, text_is_json=True)


def media(*items: Content) -> ToolResult:
    """A result that is only an image or a resource, with no structuredContent (screenshot, pdf)."""
    return ToolResult(content=list(items))


def failure(code: str, message: str, details: dict[str, Any] | None = None) -> ToolResult:
    message = cut(message)
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = details
    return ToolResult(content=[text(f"[{code}] {message}")], structured={"error": error}, is_error=True)


def from_error(exc: ToolError) -> ToolResult:
    return failure(exc.code, exc.message, exc.details)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


def size_bytes(result: ToolResult) -> int:
    total = len(_dumps(result.structured).encode()) if result.structured is not None else 0
    for item in result.content:
        total += len(item.model_dump_json(by_alias=True, exclude_none=True).encode())
    return total


def _reduce_steps(value: Any) -> Any:
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if key == "steps" and isinstance(item, list):
                out[key] = [_one_line(step) for step in item]
            else:
                out[key] = _reduce_steps(item)
        return out
    if isinstance(value, list):
        return [_reduce_steps(v) for v in value]
    return value


def _one_line(step: Any) -> Any:
    if not isinstance(step, dict):
        return step
    return {k: step[k] for k in STEP_LINE_KEYS if k in step}


def reduce_if_large(result: ToolResult, limit: int = RESULT_LIMIT_BYTES) -> ToolResult:
    """The spec's reduction: a result over `limit` bytes has each of its steps reduced to one line
    (`index`, `path`, `kind`, `label`, `ok`, `ms`, `error`). A JSON text is re-written from the
    reduced data; other texts are summaries already."""
    if result.structured is None or size_bytes(result) <= limit:
        return result
    structured = _reduce_steps(result.structured)
    if structured == result.structured:
        return result
    content = list(result.content)
    if result.text_is_json and content and isinstance(content[0], types.TextContent):
        content[0] = text(_dumps(structured))
    return replace(result, content=content, structured=structured)


def to_call_result(result: ToolResult) -> types.CallToolResult:
    result = reduce_if_large(result)
    return types.CallToolResult(
        content=list(result.content), structured_content=result.structured, is_error=result.is_error
    )
