"""Tool files parsed: tool_of, with an http tool's calls, a script tool's program and dependencies, an mcp tool's server."""
from __future__ import annotations

import posixpath
import re

from ..desk import Desk, Document
from ..findings import Finding
from ..programs import EXTENSION_INTERPRETERS, FENCE_INTERPRETERS, parse_package_json, parse_requirements
from .agents import _mcp_problems, parse_mcp_server
from .records import Runtime, Tool
from .values import HTTP_METHODS, TRANSPORTS, _cached, _str, as_list, did_you_mean, parse_rate

_FENCE = re.compile(r"^(```+|~~~+)\s*([^\s`]*)[^\n]*\n(.*?)^\1\s*$", re.S | re.M)


def _infer_transport(meta: dict) -> str | None:
    if meta.get("run") or meta.get("interpreter") or meta.get("args") is not None:
        return "script"
    if meta.get("base") or meta.get("openapi") or meta.get("methods"):
        return "http"
    if meta.get("command") or meta.get("url"):
        return "mcp"
    return None


def _join(folder: str, relative: str) -> str | None:
    joined = posixpath.normpath(posixpath.join(folder, relative)) if folder else posixpath.normpath(relative)
    if joined.startswith("../") or joined == ".." or joined.startswith("/"):
        return None
    return joined


def tool_of(desk: Desk, document: Document) -> Tool:
    """The Tool a tool file describes, with its program and dependencies (cached)."""

    def build() -> Tool:
        meta = document.meta
        path = document.path
        scope = document.scope
        problems: list[Finding] = []
        folder = document.folder if path.endswith("/tool.md") else None
        transport = _str(meta.get("transport")) or None
        tool = Tool(name=document.name, path=path, scope=scope, transport=transport, agent=document.agent,
                    description=_str(meta.get("description")), folder=folder, meta=meta, problems=problems)

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
                    err("transport", "has no transport:; write transport: http (with base:), transport: script (with run: or a fenced code block) or transport: mcp (with command: or url:).", "tool.transport")
        elif transport == "builtin" and meta.get("gallery") is True:
            pass  # a gallery tool (web), or an installed copy of one: the platform runs it
        elif transport not in TRANSPORTS:
            err("transport", f"transport: {transport} is not one foldrun knows; it must be http, script or mcp.", "tool.transport")
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
                setattr(tool, key, {str(k): _str(v) for k, v in value.items()})
            else:
                err(key, f"{key}: must be a mapping of names to values, with ${{NAME}} where a secret goes.", f"tool.{key}")

        if transport == "http":
            base = _str(meta.get("base"))
            if not base and not meta.get("openapi"):
                err("base", "is an http tool with no base:; give the URL every call is relative to, such as base: https://api.example.com/v1.", "tool.base")
            elif base and not re.match(r"^https?://[^\s/]+", base):
                err("base", f"base: {base} is not an http(s) URL.", "tool.base")
            tool.base = base or None
            methods = meta.get("methods")
            if methods is not None:
                listed = [m.upper() for m in as_list(methods)]
                wrong = [m for m in listed if m not in HTTP_METHODS]
                if wrong:
                    err("methods", f"methods: {', '.join(wrong)} {'is not an HTTP method' if len(wrong) == 1 else 'are not HTTP methods'}; use {', '.join(HTTP_METHODS)}.", "tool.methods")
                tool.methods = [m for m in listed if m in HTTP_METHODS]
            rate = meta.get("rate")
            if rate is not None:
                tool.rate = parse_rate(rate)
                if tool.rate is None:
                    err("rate", f"rate: {rate} is not a rate; write calls per second or minute, such as 5/s or 100/m.", "tool.rate")
            if meta.get("openapi") is not None:
                tool.openapi = _str(meta.get("openapi"))
                if not re.match(r"^https?://", tool.openapi):
                    target = _join(document.folder, tool.openapi)
                    if target is None or (target not in desk.texts(scope) and tool.openapi not in desk.texts(scope)):
                        err("openapi", f"openapi: {tool.openapi} is neither a URL nor a file in this desk.", "tool.openapi")
            operations = meta.get("operations")
            if operations is not None:
                if isinstance(operations, (list, str)):
                    tool.operations = as_list(operations) if isinstance(operations, list) else [operations]
                else:
                    err("operations", "operations: must be a list of operationIds or METHOD /path entries.", "tool.operations")

        if transport == "script":
            _parse_script(desk, document, tool, err)

        if transport == "mcp":
            server = parse_mcp_server(tool.name, meta)
            if server is not None:
                problems.extend(_mcp_problems(path, lambda key: (document.line_of(key) if key else None) or 2, server, "this mcp tool"))
                tool.mcp = server
        return tool

    return _cached(desk, document, "tool", build)


def _parse_script(desk: Desk, document: Document, tool: Tool, err) -> None:
    meta = document.meta
    scope = document.scope
    run = meta.get("run")
    if run is not None:
        tool.run = _str(run)
        target = _join(document.folder, tool.run)
        if target is not None and document.folder and not target.startswith(document.folder + "/"):
            target = None
        if target is None:
            err("run", f"run: {tool.run} leaves the tool's folder; name a program beside {document.path.rsplit('/', 1)[-1]}.", "tool.run")
        elif target not in desk.texts(scope):
            beside = [p.rsplit("/", 1)[-1] for p in desk.files_in(scope, document.folder) if p != document.path and not p.endswith(".md")]
            hint = did_you_mean(tool.run, beside)
            err("run", f"run: {tool.run} is not a file beside {document.path.rsplit('/', 1)[-1]} ({target} does not exist){hint or '.'}", "tool.run")
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
            tool.program_line = (document.parsed.body_line if document.parsed else 1) + document.body.count("\n", 0, fence.start(3))
        elif document.parsed:
            err("run", "is a script tool with no program; give run: <file beside it> or put the program in a fenced code block in the body.", "tool.program")
    if meta.get("interpreter") is not None:
        tool.interpreter = _str(meta.get("interpreter"))
    args = meta.get("args")
    if args is not None:
        if isinstance(args, dict):
            tool.args = {str(k): _str(v) for k, v in args.items()}
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
            tool.runtime = Runtime(packages=as_list(runtime.get("packages")), npm=as_list(runtime.get("npm")), raw=runtime)
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
                tool.problems.append(Finding(package_json, None, "error", f"{problem}; its dependencies cannot be read.", "tool.package_json"))
            tool.runtime = Runtime(packages=tool.runtime.packages, npm=list(dict.fromkeys(tool.runtime.npm + names)), raw=tool.runtime.raw)
