"""Tool files parsed: tool_of, with an http tool's calls, a script tool's program and dependencies, an mcp tool's server."""

from __future__ import annotations

import posixpath
import re

from ..desk import Desk, Document
from ..findings import Finding
from ..programs import EXTENSION_INTERPRETERS, FENCE_INTERPRETERS, parse_package_json, parse_requirements
from .agents import mcp_problems, parse_mcp_server
from .apis import join, parse_common, parse_http
from .records import Runtime, Tool
from .values import TRANSPORTS, cached_model, as_str, as_list, did_you_mean

_FENCE = re.compile(r"^(```+|~~~+)\s*([^\s`]*)[^\n]*\n(.*?)^\1\s*$", re.S | re.M)


def _infer_transport(meta: dict) -> str | None:
    if meta.get("run") or meta.get("interpreter") or meta.get("args") is not None:
        return "script"
    if meta.get("base") or meta.get("openapi") or meta.get("methods"):
        return "http"
    if meta.get("command") or meta.get("url"):
        return "mcp"
    return None


_join = join


def tool_of(desk: Desk, document: Document) -> Tool:
    """The Tool a tool file describes, with its program and dependencies (cached)."""

    def build() -> Tool:
        meta = document.meta
        path = document.path
        scope = document.scope
        problems: list[Finding] = []
        folder = document.folder if path.endswith("/tool.md") else None
        transport = as_str(meta.get("transport")) or None
        tool = Tool(
            name=document.name,
            path=path,
            scope=scope,
            transport=transport,
            agent=document.agent,
            description=as_str(meta.get("description")),
            folder=folder,
            meta=meta,
            problems=problems,
        )

        def err(key: str, message: str, code: str, level: str = "error") -> None:
            problems.append(Finding(path, document.line_of(key) or (2 if document.parsed else 1), level, message, code))

        if transport is None:
            transport = _infer_transport(meta)
            tool.transport = transport
            if transport is None and document.parsed:
                body_has_fence = bool(_FENCE.search(document.body))
                if body_has_fence:
                    tool.transport = transport = "script"
                else:
                    err(
                        "transport",
                        "has no transport:; write transport: http (with base:), transport: script (with run: or a fenced code block) or transport: mcp (with command: or url:).",
                        "tool.transport",
                    )
        elif transport == "builtin" and meta.get("gallery") is True:
            pass  # a gallery tool (web), or an installed copy of one: the platform runs it
        elif transport not in TRANSPORTS:
            err(
                "transport",
                f"transport: {transport} is not one foldrun knows; it must be http, script or mcp.",
                "tool.transport",
            )
        parse_common(meta, tool, err)
        if transport == "http":
            parse_http(desk, meta, tool, err, document.folder, scope)

        if transport == "script":
            _parse_script(desk, document, tool, err)

        if transport == "mcp":
            server = parse_mcp_server(tool.name, meta)
            if server is not None:
                problems.extend(
                    mcp_problems(
                        path, lambda key: (document.line_of(key) if key else None) or 2, server, "this mcp tool"
                    )
                )
                tool.mcp = server
        return tool

    return cached_model(desk, document, "tool", build)


def _parse_script(desk: Desk, document: Document, tool: Tool, err) -> None:
    meta = document.meta
    scope = document.scope
    run = meta.get("run")
    if run is not None:
        tool.run = as_str(run)
        target = _join(document.folder, tool.run)
        if target is not None and document.folder and not target.startswith(document.folder + "/"):
            target = None
        if target is None:
            err(
                "run",
                f"run: {tool.run} leaves the tool's folder; name a program beside {document.path.rsplit('/', 1)[-1]}.",
                "tool.run",
            )
        elif target not in desk.texts(scope):
            beside = [
                p.rsplit("/", 1)[-1]
                for p in desk.files_in(scope, document.folder)
                if p != document.path and not p.endswith(".md")
            ]
            hint = did_you_mean(tool.run, beside)
            err(
                "run",
                f"run: {tool.run} is not a file beside {document.path.rsplit('/', 1)[-1]} ({target} does not exist){hint or '.'}",
                "tool.run",
            )
        else:
            tool.program_path = target
            tool.program = desk.text(scope, target)
            extension = posixpath.splitext(target)[1].lower()
            tool.interpreter = EXTENSION_INTERPRETERS.get(extension)
    else:
        fence = _FENCE.search(document.body)
        if fence:
            tool.program = fence.group(3)
            tool.interpreter = FENCE_INTERPRETERS.get(fence.group(2).lower()) or (fence.group(2) or None)
            tool.program_line = (document.parsed.body_line if document.parsed else 1) + document.body.count(
                "\n", 0, fence.start(3)
            )
        elif document.parsed:
            err(
                "run",
                "is a script tool with no program; give run: <file beside it> or put the program in a fenced code block in the body.",
                "tool.program",
            )
    if meta.get("interpreter") is not None:
        tool.interpreter = as_str(meta.get("interpreter"))
    args = meta.get("args")
    if args is not None:
        if isinstance(args, dict):
            tool.args = {str(k): as_str(v) for k, v in args.items()}
        else:
            err("args", "args: must be a mapping of each argument to what it means.", "tool.args")
    secrets = meta.get("secrets")
    if isinstance(secrets, str) and secrets.strip() in ("proxied", "materialised", "materialized"):
        tool.secrets_mode = "proxied" if secrets.strip() == "proxied" else "materialised"
    elif isinstance(secrets, list):
        tool.secrets = [s for s in secrets if isinstance(s, str)]
    elif isinstance(secrets, str):
        tool.secrets = as_list(secrets)
    test_mode = meta.get("test_mode", meta.get("testMode"))
    if test_mode is not None:
        if str(test_mode).strip() == "allow":
            tool.test_mode = "allow"
        else:
            key = "test_mode" if "test_mode" in meta else "testMode"
            err(key, f"{key}: {test_mode} is not a setting; the one value is allow.", "tool.test_mode")
    runtime = meta.get("runtime")
    if runtime is not None:
        if isinstance(runtime, dict):
            tool.runtime = Runtime(
                packages=as_list(runtime.get("packages")), npm=as_list(runtime.get("npm")), raw=runtime
            )
        else:
            err("runtime", "runtime: must be a mapping, such as runtime: {packages: [pandas]}.", "tool.runtime")
    folder = tool.folder
    if folder is not None:
        requirements = f"{folder}/requirements.txt"
        text = desk.text(scope, requirements)
        if text is not None and not text.startswith("\x00"):
            tool.requirements = parse_requirements(text)
            tool.requirements_path = requirements
        package_json = f"{folder}/package.json"
        text = desk.text(scope, package_json)
        if text is not None and not text.startswith("\x00"):
            tool.package_json_path = package_json
            names, problem = parse_package_json(text)
            if problem:
                tool.problems.append(
                    Finding(
                        package_json, None, "error", f"{problem}; its dependencies cannot be read.", "tool.package_json"
                    )
                )
            tool.runtime = Runtime(
                packages=tool.runtime.packages, npm=list(dict.fromkeys(tool.runtime.npm + names)), raw=tool.runtime.raw
            )
