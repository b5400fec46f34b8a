"""HTTP tool files: calls made by the worker, host-side.

Fields (spec "HTTP — an API as a tool"): `base`, `methods` (none declared =
read-only: GET and HEAD), `headers` and `query` with `${SECRET}` filled in as
the request goes out (the model never sees a value), `timeout`, `rate` (a call
over it waits), `openapi` (one typed tool per operation, plus the generic
`call_<name>`), `operations` (only these; the generic tool withheld; fails
closed).
"""

from __future__ import annotations

import json
import re
import threading
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import httpx
import yaml

from foldrun import net
from foldrun.contract.placeholders import PLACEHOLDER, fill_secrets

from .base import Tool, ToolError, schema
from .http_url import OutsideBase, fill_template, resolve
from .registry import ToolPlan, register_transport

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ToolContext

READ_METHODS = {"GET", "HEAD"}
ALL_METHODS = {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"}
MAX_BODY = 100_000


def secret_names(meta: dict) -> list[str]:
    """Every `${NAME}` in an http tool's headers and query (they travel with the tool)."""
    names: list[str] = []
    for block in (meta.get("headers") or {}, meta.get("query") or {}):
        for value in block.values():
            names += PLACEHOLDER.findall(str(value))
    return list(dict.fromkeys(names))


def fill(text: str, secrets: dict[str, str]) -> str:
    return fill_secrets(text, secrets, ToolError)


def parse_rate(raw: Any) -> float | None:
    """`5/s`, `100/m`, `1000/h` → seconds between calls."""
    if raw in (None, ""):
        return None
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*/\s*(s|m|h|sec|second|min|minute|hour)\s*", str(raw))
    if not match:
        raise ValueError(f"rate: {raw!r} is not calls per second/minute/hour, like 5/s or 100/m")
    count = float(match.group(1))
    per = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}[match.group(2)]
    return per / count if count else None


class RateGate:
    """Spaces calls evenly: a call over the rate sleeps until its slot (it does not fail)."""

    def __init__(self, interval: float | None) -> None:
        self.interval = interval
        self.next_at = 0.0
        self.lock = threading.Lock()
        self.waited = 0.0

    def wait(self) -> float:
        if not self.interval:
            return 0.0
        with self.lock:
            now = time.monotonic()
            slot = max(now, self.next_at)
            self.next_at = slot + self.interval
        delay = slot - now
        if delay > 0:
            time.sleep(delay)
            self.waited += delay
        return delay


def _tool_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", text)[:64]


class HttpToolRuntime:
    """One http tool file, prepared for one step."""

    def __init__(
        self,
        name: str,
        meta: dict,
        *,
        files: dict[str, str],
        log,
        folder_files: dict[str, str] | None = None,
        fail_closed: bool = False,
    ) -> None:
        self.name = name
        # An agent's inline `apis:` entry fails closed like `operations:`: a document that does not load
        # leaves it no tools, never the generic one (it was declared as that document's API).
        self.fail_closed = fail_closed
        self.meta = meta
        self.base = str(meta.get("base") or "")
        declared = [str(m).upper() for m in (meta.get("methods") or [])]
        self.methods = set(declared) if declared else set(READ_METHODS)
        self.timeout = float(meta["timeout"]) if meta.get("timeout") not in (None, "") else None
        self.rate = RateGate(parse_rate(meta.get("rate")))
        self.outward = bool(meta.get("outward"))
        self.files = files
        self.folder_files = folder_files or {}
        self.log = log

    # -- building tools ---------------------------------------------------------
    def tools(self) -> list[Tool]:
        operations = self.meta.get("operations")
        if self.meta.get("openapi"):
            try:
                document = self._load_openapi(str(self.meta["openapi"]))
            except Exception as exc:  # noqa: BLE001 - any failure to load fails closed
                if operations or self.fail_closed:
                    why = "with `operations:` " if operations else ""
                    self.log(
                        f"{self.name}: the openapi document did not load ({exc}); {why}the API has no tools that run"
                    )
                    return []
                self.log(f"{self.name}: the openapi document did not load ({exc}); only the generic call_{self.name}")
                return [self._generic(f"call_{_tool_name(self.name)}")]
            typed = self._operations(document)
            if operations:
                wanted = [str(o).strip() for o in operations]
                chosen = [t for key, t in typed if key[0] in wanted or key[1] in wanted]
                missing = [w for w in wanted if not any(w in key for key, _ in typed)]
                for item in missing:
                    self.log(f"{self.name}: operation {item} is not in the openapi document; it is not offered")
                if not chosen:
                    self.log(f"{self.name}: none of the allowed operations resolved; the API has no tools that run")
                return chosen
            return [t for _, t in typed] + [self._generic(f"call_{_tool_name(self.name)}")]
        if operations:
            self.log(f"{self.name}: `operations:` needs an `openapi:` document; the API has no tools that run")
            return []
        return [self._generic(_tool_name(self.name))]

    def _load_openapi(self, where: str) -> dict:
        if where.startswith(("http://", "https://")):
            # Each redirect hop meets the connect-time guard; the install's policy decides.
            response = net.client("http_tool").get(where, timeout=20, follow_redirects=True)
            response.raise_for_status()
            text = response.text
        else:
            key = where.removeprefix("./")
            if key in self.folder_files:  # beside the tool file
                text = self.folder_files[key]
            elif key.lstrip("/") in self.files:  # a path in the workspace
                text = self.files[key.lstrip("/")]
            else:
                raise FileNotFoundError(f"{where} is not beside the tool nor in the workspace")
        document = json.loads(text) if text.lstrip().startswith("{") else yaml.safe_load(text)
        if not isinstance(document, dict) or not isinstance(document.get("paths"), dict):
            raise ValueError("it has no `paths`")
        return document

    def _operations(self, document: dict) -> list[tuple[tuple[str, str], Tool]]:
        found: list[tuple[tuple[str, str], Tool]] = []
        for path, item in document["paths"].items():
            if not isinstance(item, dict):
                continue
            shared = item.get("parameters") or []
            for method, op in item.items():
                if method.upper() not in ALL_METHODS or not isinstance(op, dict):
                    continue
                verb = method.upper()
                if verb not in self.methods:
                    continue
                op_id = str(op.get("operationId") or f"{verb}_{path}")
                params = [p for p in shared + (op.get("parameters") or []) if isinstance(p, dict) and "name" in p]
                props: dict[str, dict] = {}
                required: list[str] = []
                where: dict[str, str] = {}
                for p in params:
                    props[p["name"]] = {
                        "type": (p.get("schema") or {}).get("type", "string"),
                        "description": p.get("description", ""),
                    }
                    where[p["name"]] = p.get("in", "query")
                    if p.get("required") or p.get("in") == "path":
                        required.append(p["name"])
                if op.get("requestBody"):
                    props["body"] = {"type": "object", "description": "the JSON request body"}
                    if op["requestBody"].get("required"):
                        required.append("body")
                tool = Tool(
                    name=_tool_name(f"{self.name}_{op_id}"),
                    description=op.get("summary") or op.get("description") or f"{verb} {path}",
                    input_schema={"type": "object", "properties": props, "required": required},
                    handler=self._typed_handler(verb, path, where, bool(op.get("requestBody"))),
                    limit_keys=[self.name],
                    writes=verb not in READ_METHODS,
                    outward=self.outward,
                    kind="http",
                )
                found.append(((op_id, f"{verb} {path}"), tool))
        return found

    def _generic(self, tool_name: str) -> Tool:
        methods = sorted(self.methods)
        description = (self.meta.get("description") or f"The {self.name} API.") + (
            f" Base {self.base}. Methods allowed: {', '.join(methods)}."
        )
        return Tool(
            name=tool_name,
            description=description,
            input_schema=schema(
                {
                    "method": {"type": "string", "enum": methods},
                    "path": {"type": "string", "description": "relative to the base URL"},
                    "query": {"type": "object"},
                    "body": {"description": "a JSON body"},
                },
                ["path"],
            ),
            handler=self._generic_handler,
            limit_keys=[self.name],
            writes=lambda args: str(args.get("method") or "GET").upper() not in READ_METHODS,
            outward=self.outward,
            kind="http",
        )

    # -- calling ---------------------------------------------------------------
    def _typed_handler(self, verb: str, path: str, where: dict[str, str], takes_body: bool):
        op = f"{verb} {path}"

        def handler(args: dict, env: "ToolContext") -> str:
            # An argument the operation does not declare is refused, not sent as a query parameter: the
            # allowlist is the document's operations as written.
            declared = set(where) | ({"body"} if takes_body else set())
            undeclared = sorted(k for k in args if k not in declared)
            if undeclared:
                takes = ", ".join(sorted(declared)) or "no arguments"
                raise ToolError(
                    f"{self.name}: {op} does not take {', '.join(undeclared)}; it takes {takes} — nothing was sent"
                )
            query: dict[str, Any] = {}
            headers: dict[str, str] = {}
            in_path: dict[str, Any] = {}
            for key, value in args.items():
                place = where.get(key)
                if key == "body" and place is None:
                    continue
                if place == "path":
                    in_path[key] = value
                elif place == "header":
                    headers[key] = str(value)
                elif place == "cookie":
                    headers["Cookie"] = "; ".join(filter(None, [headers.get("Cookie"), f"{key}={value}"]))
                else:
                    query[key] = value
            try:
                filled = fill_template(path, in_path)
            except OutsideBase as exc:
                raise ToolError(f"{self.name}: {op}: {exc} — nothing was sent") from None
            return self.call(env, verb, filled, query, args.get("body") if "body" not in where else None, headers)

        return handler

    def _generic_handler(self, args: dict, env: "ToolContext") -> str:
        return self.call(
            env,
            str(args.get("method") or "GET").upper(),
            str(args["path"]),
            args.get("query") or {},
            args.get("body"),
            {},
        )

    def call(self, env: "ToolContext", method: str, path: str, query: dict, body: Any, headers: dict) -> str:
        if method not in self.methods:
            raise ToolError(f"{self.name}: {method} is not allowed; this tool allows {', '.join(sorted(self.methods))}")
        try:
            url, in_path = resolve(self.base, path)
        except OutsideBase as exc:
            raise ToolError(f"{self.name}: {exc}") from None
        if env.is_test and (self.outward or method not in READ_METHODS):
            env.log(f"test run: {method} {self.name} {path} was not made — outward calls fail closed on a test run")
            raise ToolError(f"test run: {method} {path} was not sent — a test run makes no outward calls")
        if urlsplit(url).scheme not in {"http", "https"}:
            raise ToolError(f"{url}: only http and https URLs are called")
        secrets = env.secret_values(secret_names(self.meta))
        all_headers = {k: fill(v, secrets) for k, v in (self.meta.get("headers") or {}).items()}
        all_headers.update(headers)
        # httpx replaces a URL's own query string with `params`, so a `?q=1` the model wrote in `path`
        # joins the params: the path's first, then the tool file's `query:`, then the call's `query`.
        params = dict(in_path)
        params.update({k: fill(v, secrets) for k, v in (self.meta.get("query") or {}).items()})
        params.update({k: v if isinstance(v, str) else json.dumps(v) for k, v in (query or {}).items()})
        waited = self.rate.wait()
        if waited > 0.01:
            env.log(f"{self.name}: waited {waited:.2f}s for its rate ({self.meta.get('rate')})")
        kwargs: dict[str, Any] = {"headers": all_headers, "params": params}
        if body is not None and method not in READ_METHODS:
            if isinstance(body, (dict, list)):
                kwargs["json"] = body
            else:
                kwargs["content"] = str(body).encode()
        try:
            client = net.client("http_tool", allow_private=env.allow_private_urls)
            response = client.request(method, url, timeout=self.timeout, **kwargs)
        except (net.PrivateAddress, net.NoSuchHost, net.MalformedURL) as exc:  # the guard's own sentences
            raise ToolError(f"{self.name}: {method} {path}: {exc}") from None
        except httpx.TimeoutException:
            raise ToolError(f"{self.name}: {method} {path} timed out after {self.timeout:g}s") from None
        except httpx.HTTPError as exc:
            raise ToolError(f"{self.name}: {method} {path} failed: {net.describe(exc)}") from None
        text = response.text[:MAX_BODY]
        text = env.redact(text)
        if response.status_code >= 400:
            raise ToolError(f"HTTP {response.status_code}\n{text}")
        return f"HTTP {response.status_code}\n{text}"


def plan_http(tool_file: Any, ctx: "ToolContext") -> ToolPlan:
    """An http tool file: its `${NAME}`s, and its tools (typed per operation when it has `openapi`)."""
    runtime = HttpToolRuntime(
        tool_file.name,
        tool_file.meta,
        files=ctx.sandbox_files,
        log=ctx.log,
        folder_files=tool_file.folder_files,
        fail_closed=tool_file.fail_closed,
    )
    return ToolPlan(secret_names(tool_file.meta), runtime.tools, outward=bool(tool_file.meta.get("outward")))


register_transport("http", plan_http)
