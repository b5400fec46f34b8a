"""An http tool's fields parsed, for a tool file (`transport: http`) and for an agent's inline `apis:` block.

Spec (tools.md): "An `apis:` block turns an OpenAPI or a base URL into a tool". Each entry of an agent's
`apis:` is the frontmatter of an http tool, named by its key, and granted to that agent alone.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any, Callable

from ..desk import Desk, Document
from ..findings import Finding
from .records import Tool
from .values import HTTP_METHODS, as_str, as_list, parse_rate

Err = Callable[..., None]  # err(key, message, code, level="error")


def join(folder: str, relative: str) -> str | None:
    """`relative` under `folder`, or None where it climbs out of the desk."""
    joined = posixpath.normpath(posixpath.join(folder, relative)) if folder else posixpath.normpath(relative)
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return joined


def parse_common(meta: dict, tool: Tool, err: Err) -> None:
    """outward:, timeout:, headers: and query: (every transport reads them)."""
    outward = meta.get("outward")
    tool.outward = outward is True or (isinstance(outward, str) and outward.lower() in ("true", "yes"))
    timeout = meta.get("timeout")
    if timeout is not None:
        if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
            tool.timeout = float(timeout)
        else:
            err("timeout", f"timeout: {timeout} must be a number of seconds above zero.", "tool.timeout")
    for key in ("headers", "query"):
        value = meta.get(key)
        if value is None:
            continue
        if isinstance(value, dict):
            setattr(tool, key, {str(k): as_str(v) for k, v in value.items()})
        else:
            err(key, f"{key}: must be a mapping of names to values, with ${{NAME}} where a secret goes.", f"tool.{key}")


def parse_http(desk: Desk, meta: dict, tool: Tool, err: Err, folder: str, scope: str) -> None:
    """base:, methods:, rate:, openapi: and operations: of an http tool; `folder` is where a relative
    openapi: file is looked for first (then the scope's root)."""
    base = as_str(meta.get("base"))
    if not base and not meta.get("openapi"):
        err(
            "base",
            "is an http tool with no base:; give the URL every call is relative to, such as base: https://api.example.com/v1.",
            "tool.base",
        )
    elif base and not re.match(r"^https?://[^\s/]+", base):
        err("base", f"base: {base} is not an http(s) URL.", "tool.base")
    tool.base = base or None
    methods = meta.get("methods")
    if methods is not None:
        listed = [m.upper() for m in as_list(methods)]
        wrong = [m for m in listed if m not in HTTP_METHODS]
        if wrong:
            err(
                "methods",
                f"methods: {', '.join(wrong)} {'is not an HTTP method' if len(wrong) == 1 else 'are not HTTP methods'}; use {', '.join(HTTP_METHODS)}.",
                "tool.methods",
            )
        tool.methods = [m for m in listed if m in HTTP_METHODS]
    rate = meta.get("rate")
    if rate is not None:
        tool.rate = parse_rate(rate)
        if tool.rate is None:
            err(
                "rate",
                f"rate: {rate} is not a rate; write calls per second or minute, such as 5/s or 100/m.",
                "tool.rate",
            )
    if meta.get("openapi") is not None:
        tool.openapi = as_str(meta.get("openapi"))
        if not re.match(r"^https?://", tool.openapi):
            target = join(folder, tool.openapi)
            if target is None or (target not in desk.texts(scope) and tool.openapi not in desk.texts(scope)):
                err("openapi", f"openapi: {tool.openapi} is neither a URL nor a file in this desk.", "tool.openapi")
    operations = meta.get("operations")
    if operations is not None:
        if isinstance(operations, (list, str)):
            tool.operations = as_list(operations) if isinstance(operations, list) else [operations]
        else:
            err("operations", "operations: must be a list of operationIds or METHOD /path entries.", "tool.operations")


def apis_of(desk: Desk, document: Document, raw: Any, problems: list[Finding]) -> dict[str, Tool]:
    """An agent's `apis:` as http tools named by their keys; what is wrong goes to `problems`, by line."""
    if raw is None:
        return {}
    path = document.path
    if not isinstance(raw, dict):
        problems.append(
            Finding(
                path,
                document.line_of("apis"),
                "error",
                "apis: must be a mapping of API names to blocks with base: (and openapi:, "
                "operations:, methods:, headers:).",
                "agent.apis",
            )
        )
        return {}
    folder = document.folder if path.endswith("/agent.md") else ""
    found: dict[str, Tool] = {}
    for key, block in raw.items():
        name = str(key)
        line = document.line_in("apis", name) or document.line_of("apis")
        if not isinstance(block, dict):
            problems.append(
                Finding(
                    path,
                    line,
                    "error",
                    f"apis: {name} must be a mapping with base: (the URL every call is relative to) or openapi:.",
                    "agent.apis",
                )
            )
            continue
        meta = {"transport": "http", "name": name, **block}
        tool = Tool(
            name=name,
            path=path,
            scope=document.scope,
            transport="http",
            agent=document.name,
            description=as_str(block.get("description")),
            folder=folder or None,
            meta=meta,
        )

        def err(
            field: str, message: str, code: str, level: str = "error", name: str = name, line: int | None = line
        ) -> None:
            at = document.line_at("apis", name, field) or line
            problems.append(Finding(path, at, level, f"apis: {name}: {message}", code))

        parse_common(block, tool, err)
        parse_http(desk, block, tool, err, folder, document.scope)
        found[name] = tool
    return found
