"""Parsed models of the files in a desk. Pure Python, no Django.

Use these from runs, deploy and the CLI; every parser is lenient — it keeps
what it can read and records what it cannot as `problems` (Findings that
`check` reports), so a run never re-validates and `check` never re-parses.

    agents_md_of(desk, scope="workspace") -> Defaults | None
    agent_of(desk, document) -> Agent         find_agent(desk, name) -> Agent | None
    flow_of(desk, document) -> Flow           find_flow(desk, name) -> Flow | None
    tool_of(desk, document) -> Tool
    skill_of(desk, document) -> Skill
    concept_of(desk, document) -> Concept
    parse_steps(body, body_line, path) -> (steps, problems)
    parse_duration("2h") -> timedelta | None      cron_problem("0 7 * * MON") -> None | why
    limit_key("desk-email") -> "desk_email"

All results are cached on the Desk (desk.cache), so build a new Desk when
files change. Resolution (nearest wins) lives in resolve.py.
"""
from __future__ import annotations

import difflib
import posixpath
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any, Callable

import yaml

from .desk import AGENT, AGENTS_MD, FLOW, Desk, Document
from .findings import Finding
from .frontmatter import load_yaml
from .placeholders import PLACEHOLDER
from .skill_inputs import SkillDeclaration, declaration_of
from .programs import (
    EXTENSION_INTERPRETERS,
    FENCE_INTERPRETERS,
    Requirements,
    parse_package_json,
    parse_requirements,
)

NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
SECRET_NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")  # as the vault names them
PLACEHOLDER_RE = PLACEHOLDER  # the one `${NAME}` grammar (placeholders.py)
EVENT_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
DURATION_RE = re.compile(r"^\s*(\d+)\s*([mhdw])\s*$")
RATE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*/\s*(s|m|h)\s*$")

BUILTIN_GROUPS = ("read", "write", "code", "search", "history", "ask", "desks")
SDK_NAMES = {"Read": "read", "Glob": "read", "Grep": "read", "Write": "write", "Edit": "write", "Bash": "code"}
WEB_ACTIONS = ("search", "fetch", "browse", "crawl", "map", "extract", "answer", "monitor")
TRANSPORTS = ("http", "script", "mcp")
HTTP_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS")
STEP_OPTIONS = ("each", "max", "verify", "retry", "on-fail", "limits", "wait", "ask")
VERIFY_KINDS = ("file", "reply", "grows")
DEFAULT_APPROVE_WITHIN = timedelta(days=7)


def limit_key(key: str) -> str:
    """The canonical form of a `limits:` key: `desk-email` and `desk_email` are one."""
    return str(key).strip().replace("-", "_")


def parse_duration(value: Any) -> timedelta | None:
    """`30m`, `2h`, `2d`, `1w` -> timedelta; None when it is not one."""
    if not isinstance(value, str):
        return None
    match = DURATION_RE.match(value)
    if not match or int(match.group(1)) < 1:
        return None
    amount, unit = int(match.group(1)), match.group(2)
    return {"m": timedelta(minutes=amount), "h": timedelta(hours=amount), "d": timedelta(days=amount), "w": timedelta(weeks=amount)}[unit]


def parse_rate(value: Any) -> tuple[float, int] | None:
    """`5/s`, `100/m` -> (calls, per seconds); None when it is not one."""
    match = RATE_RE.match(str(value)) if isinstance(value, (str, int)) else None
    if not match or float(match.group(1)) <= 0:
        return None
    return float(match.group(1)), {"s": 1, "m": 60, "h": 3600}[match.group(2)]


def is_whole(value: Any, minimum: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= minimum


def closest(word: str, candidates: set[str] | list[str], n: int = 3) -> list[str]:
    """The nearest candidates (difflib), only those about as near as the best."""
    scored = []
    for candidate in sorted(candidates):
        matcher = difflib.SequenceMatcher(None, word, candidate)
        if matcher.real_quick_ratio() >= 0.75 and matcher.quick_ratio() >= 0.75:
            ratio = matcher.ratio()
            if ratio >= 0.75:
                scored.append((ratio, candidate))
    if not scored:
        return []
    best = max(r for r, _c in scored)
    return [c for r, c in sorted(scored, key=lambda rc: (-rc[0], rc[1])) if r >= best - 0.1][:n]


def did_you_mean(word: str, candidates, wrap: str = "{}") -> str:
    near = closest(word, candidates)
    if not near:
        return ""
    shown = [wrap.format(n) for n in near]
    return f"; did you mean {' or '.join(shown)}?"


def as_list(value: Any) -> list[str]:
    """A YAML list of names, or one comma-separated string of them."""
    if value is None:
        return []
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if isinstance(value, (list, tuple)):
        return [str(item).strip() for item in value if item is not None and str(item).strip()]
    return [str(value)]


# --- cron ---------------------------------------------------------------

_CRON_MACROS = {"@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"}
_CRON_FIELDS = (
    ("minute", 0, 59, {}),
    ("hour", 0, 23, {}),
    ("day of month", 1, 31, {}),
    ("month", 1, 12, {m: i + 1 for i, m in enumerate("JAN FEB MAR APR MAY JUN JUL AUG SEP OCT NOV DEC".split())}),
    ("day of week", 0, 7, {d: i for i, d in enumerate("SUN MON TUE WED THU FRI SAT".split())}),
)


def _cron_value(text: str, low: int, high: int, names: dict[str, int]) -> int | None:
    upper = text.upper()
    if upper in names:
        return names[upper]
    if text.isdigit():
        number = int(text)
        return number if low <= number <= high else None
    return None


def cron_problem(expression: Any) -> str | None:
    """None when `expression` is a five-field cron (or @daily and kin), else why not."""
    if not isinstance(expression, str) or not expression.strip():
        return "it is empty"
    text = expression.strip()
    if text.startswith("@"):
        return None if text.lower() in _CRON_MACROS else f"{text} is not one of {', '.join(sorted(_CRON_MACROS))}"
    fields = text.split()
    if len(fields) != 5:
        return f"it has {len(fields)} field{'s' if len(fields) != 1 else ''}, not 5"
    for raw, (label, low, high, names) in zip(fields, _CRON_FIELDS):
        for part in raw.split(","):
            base, _, step = part.partition("/")
            if step and (not step.isdigit() or int(step) < 1):
                return f"the {label} field has a step {step!r} that is not a whole number"
            if base == "*":
                continue
            if base.count("-") == 1 and not base.startswith("-"):
                first, last = base.split("-")
                a, b = _cron_value(first, low, high, names), _cron_value(last, low, high, names)
                if a is None or b is None:
                    return f"the {label} field {raw!r} has a value outside {low}-{high}"
                continue
            if _cron_value(base, low, high, names) is None:
                return f"the {label} field {raw!r} has a value outside {low}-{high}"
    return None


_TZ_DATABASE: list[bool] = []


def _has_tz_database(available) -> bool:
    if not _TZ_DATABASE:
        _TZ_DATABASE.append(bool(available()))
    return _TZ_DATABASE[0]


def timezone_problem(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return "is empty"
    try:
        from zoneinfo import ZoneInfo, available_timezones

        if not _has_tz_database(available_timezones):
            return None  # a machine without a time-zone database cannot judge; the server will
        ZoneInfo(value.strip())
    except Exception:  # ZoneInfoNotFoundError, ValueError for odd keys
        return "is not a time zone foldrun knows"
    return None


# --- models ---------------------------------------------------------------


@dataclass
class McpServer:
    """An MCP server: a local process (command/args/env) or a remote endpoint (url/headers)."""

    name: str
    command: str | None = None
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    url: str | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def kind(self) -> str:
        return "stdio" if self.command else "http"

    @property
    def secret_names(self) -> list[str]:
        values = list(self.env.values()) + list(self.headers.values()) + [self.url or ""]
        return sorted({n for v in values for n in PLACEHOLDER_RE.findall(str(v))})


@dataclass
class Defaults:
    """AGENTS.md — workspace (or account library) defaults."""

    path: str
    scope: str
    notify: Any = None
    limits: dict[str, Any] = field(default_factory=dict)
    web: Any = None
    provider: Any = None
    language: str | None = None
    region: str | None = None
    timezone: str | None = None
    budget: Any = None
    budget_window: tuple[str, float] | None = None   # ("month", 50.0) from budget: {month: 50}
    body: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)


@dataclass
class Agent:
    """agents/<name>/agent.md or agents/<name>.md."""

    name: str
    path: str
    description: str = ""
    tools: list[str] = field(default_factory=list)
    skills: list[str] | None = None           # None: every skill it can see
    secrets: list[str] = field(default_factory=list)
    limits: dict[str, Any] = field(default_factory=dict)
    web: Any = None
    provider: Any = None
    mcp_servers: dict[str, McpServer] = field(default_factory=dict)
    language: str | None = None
    region: str | None = None
    timezone: str | None = None
    prompt: str = ""
    own_folder: str | None = None              # agents/<name> for the folder form
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)


@dataclass
class Verify:
    kind: str      # file | reply | grows
    argument: str  # a path, or a regular expression for reply


@dataclass
class Step:
    """One numbered line of a flow's body and its indented options."""

    number: int                 # 1-based position; {{steps.N.output}} counts this
    agent: str
    task: str
    line: int                   # file line of the step
    gate: bool = False          # `!` after [[agent]]
    each: str | None = None     # lines | json
    max: int | None = None
    verify: Verify | None = None
    retry: int = 0
    on_fail: str = "stop"
    limits: dict[str, Any] = field(default_factory=dict)
    wait_event: str | None = None
    ask: str | None = None
    written_number: int = 0
    options: dict[str, str] = field(default_factory=dict)        # option -> raw value
    option_lines: dict[str, int] = field(default_factory=dict)   # option -> file line

    @property
    def label(self) -> str:
        return f"step {self.number} ([[{self.agent}]])"

    @property
    def gated(self) -> bool:
        """A person decides before it runs: `!` or `ask:`."""
        return self.gate or self.ask is not None


@dataclass
class Flow:
    name: str
    path: str
    steps: list[Step] = field(default_factory=list)
    schedule: str | None = None
    timezone: str | None = None
    inputs: dict[str, Any] = field(default_factory=dict)
    sla: timedelta | None = None
    disable_after: int | None = None
    approve_within: timedelta = DEFAULT_APPROVE_WITHIN
    approvers: list[str] = field(default_factory=list)
    budget: float | None = None
    webhook: dict[str, Any] | None = None
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)


@dataclass
class Runtime:
    packages: list[str] = field(default_factory=list)
    npm: list[str] = field(default_factory=list)
    raw: dict[str, Any] = field(default_factory=dict)


@dataclass
class Tool:
    """tools/<name>.md or tools/<name>/tool.md (also an agent's own, the library's, the gallery's)."""

    name: str
    path: str
    scope: str
    transport: str | None
    agent: str | None = None
    description: str = ""
    folder: str | None = None            # tools/<name> for the folder form
    outward: bool = False
    # http
    base: str | None = None
    methods: list[str] = field(default_factory=list)   # none declared: read-only (GET)
    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None
    rate: tuple[float, int] | None = None              # (calls, per seconds)
    openapi: str | None = None
    operations: list[str] | None = None
    # script
    run: str | None = None               # as written
    program_path: str | None = None      # path in the scope of the program file; None for a fenced block
    program: str | None = None           # the program's text
    program_line: int = 1                # file line the program starts on (fenced block)
    interpreter: str | None = None
    args: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    secrets_mode: str = "materialised"   # materialised | proxied
    test_mode: str | None = None         # allow
    runtime: Runtime = field(default_factory=Runtime)
    requirements: Requirements | None = None
    requirements_path: str | None = None
    package_json_path: str | None = None
    # mcp
    mcp: McpServer | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)

    @property
    def packages(self) -> list[str]:
        """runtime: packages merged with requirements.txt."""
        extra = self.requirements.packages if self.requirements else []
        return list(dict.fromkeys(self.runtime.packages + extra))

    @property
    def npm(self) -> list[str]:
        return self.runtime.npm

    @property
    def secret_names(self) -> list[str]:
        """Every vault name the tool carries: `secrets:` and `${NAME}` placeholders."""
        names = list(self.secrets)
        for value in list(self.headers.values()) + list(self.query.values()) + [self.base or ""]:
            names.extend(PLACEHOLDER_RE.findall(str(value)))
        if self.mcp:
            names.extend(self.mcp.secret_names)
        return list(dict.fromkeys(names))


@dataclass
class Skill:
    name: str
    path: str
    scope: str
    description: str = ""
    agent: str | None = None
    folder: str = ""
    body: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)
    # inputs: and grants: (foldrun/contract/skill_inputs.py): what its MCP tool takes and what a run needs.
    declaration: SkillDeclaration = field(default_factory=SkillDeclaration)


@dataclass
class Concept:
    path: str
    scope: str
    type: str | None
    title: str = ""
    description: str = ""
    agent: str | None = None
    body: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)


# --- parsing ----------------------------------------------------------------


def _cached(desk: Desk, document: Document, kind: str, build):
    key = (kind, document.scope, document.path)
    if key not in desk.cache:
        desk.cache[key] = build()
    return desk.cache[key]


def _str(value: Any) -> str:
    return "" if value is None else str(value).strip()


def _timezone_problems(document: Document, value: Any, problems: list[Finding]) -> None:
    if value is None:
        return
    why = timezone_problem(value)
    if why:
        problems.append(Finding(document.path, document.line_of("timezone"), "error",
                                f"timezone: {value} {why}; use an IANA name such as Australia/Sydney.", "timezone.unknown"))


def agents_md_of(desk: Desk, scope: str = "workspace") -> Defaults | None:
    document = desk.agents_md(scope)
    if document is None:
        return None

    def build() -> Defaults:
        meta = document.meta
        limits = meta.get("limits")
        defaults = Defaults(
            path=document.path, scope=scope, notify=meta.get("notify"),
            limits=limits if isinstance(limits, dict) else {}, web=meta.get("web"), provider=meta.get("provider"),
            language=meta.get("language"), region=meta.get("region"), timezone=meta.get("timezone"),
            budget=meta.get("budget"), body=document.body, meta=meta,
        )
        if limits is not None and not isinstance(limits, dict):
            defaults.problems.append(_limits_not_mapping(document.path, document.line_of("limits"), "limits:"))
        _timezone_problems(document, meta.get("timezone"), defaults.problems)
        budget = meta.get("budget")
        if budget is not None:
            window = _budget_window(budget)
            if window is None:
                defaults.problems.append(Finding(document.path, document.line_of("budget"), "error",
                                                 "budget: must be the workspace's spend for one window, such as budget: {month: 50} — day, week or month, in USD.",
                                                 "agents_md.budget"))
            else:
                defaults.budget_window = window
        return defaults

    return _cached(desk, document, "defaults", build)


def _budget_window(value: Any) -> tuple[str, float] | None:
    """`{month: 50}` -> ("month", 50.0); None when it is not one window and a positive amount."""
    if not isinstance(value, dict) or len(value) != 1:
        return None
    (window, amount), = value.items()
    if window not in ("day", "week", "month") or isinstance(amount, bool) or not isinstance(amount, (int, float)) or amount <= 0:
        return None
    return str(window), float(amount)


def _limits_not_mapping(path: str, line: int | None, where: str) -> Finding:
    return Finding(path, line, "error", f"{where} must be a mapping of keys to whole numbers, such as limits: {{web.search: 40, calls: 300}}.", "limits.not_mapping")


def parse_mcp_server(name: str, block: Any) -> McpServer | None:
    if not isinstance(block, dict):
        return None
    args = block.get("args") or []
    env = block.get("env") or {}
    headers = block.get("headers") or {}
    return McpServer(
        name=name,
        command=_str(block.get("command")) or None,
        args=[str(a) for a in args] if isinstance(args, list) else [str(args)],
        env={str(k): _str(v) for k, v in env.items()} if isinstance(env, dict) else {},
        url=_str(block.get("url")) or None,
        headers={str(k): _str(v) for k, v in headers.items()} if isinstance(headers, dict) else {},
    )


def _mcp_problems(path: str, line_of: Callable[[str], int | None], server: McpServer, where: str) -> list[Finding]:
    """`line_of(key)` is the file line of the server block's own `key`
    (url, command), or of the block itself when `key` is ""."""
    if server.command and server.url:
        return [Finding(path, line_of("url"), "error", f"{where} has both command: and url:; give command: (a local process) or url: (a remote endpoint), not both.", "mcp.both")]
    if not server.command and not server.url:
        return [Finding(path, line_of(""), "error", f"{where} has neither command: nor url:; give command: (with args: and env:) for a local process or url: (with headers:) for a remote endpoint.", "mcp.neither")]
    if server.url and not re.match(r"^https?://", server.url):
        return [Finding(path, line_of("url"), "error", f"{where} has url: that is not an http(s) URL.", "mcp.url")]
    return []


def _names(value: Any) -> list[str]:
    """A `secrets:` list as written (strings only; check reports the rest)."""
    if isinstance(value, list):
        return [item.strip() for item in value if isinstance(item, str) and item.strip()]
    if isinstance(value, str):
        return as_list(value)
    return []


def agent_of(desk: Desk, document: Document) -> Agent:
    """The Agent an agent file describes (cached)."""

    def build() -> Agent:
        meta = document.meta
        path = document.path
        problems: list[Finding] = []
        tools_value = meta.get("tools")
        if tools_value is not None and not isinstance(tools_value, (list, str)):
            problems.append(Finding(path, document.line_of("tools"), "error", "tools: must be a list of names, such as tools: [web, read].", "agent.tools"))
        skills_value = meta.get("skills")
        limits = meta.get("limits")
        if limits is not None and not isinstance(limits, dict):
            problems.append(_limits_not_mapping(path, document.line_of("limits"), "limits:"))
        servers: dict[str, McpServer] = {}
        raw_servers = meta.get("mcpServers")
        if raw_servers is not None:
            if isinstance(raw_servers, list):  # [{name: x, url: …}]
                raw_servers = {str(s.get("name")): s for s in raw_servers if isinstance(s, dict) and s.get("name")}
            if not isinstance(raw_servers, dict):
                problems.append(Finding(path, document.line_of("mcpServers"), "error", "mcpServers: must be a mapping of server names to command: or url: blocks.", "agent.mcp"))
            else:
                for server_name, block in raw_servers.items():
                    server = parse_mcp_server(str(server_name), block)
                    line = document.line_in("mcpServers", server_name)
                    if server is None:
                        problems.append(Finding(path, line, "error", f"mcpServers: {server_name} must be a mapping with command: or url:.", "agent.mcp"))
                        continue
                    problems.extend(_mcp_problems(
                        path, lambda key, name=server_name, at=line: (document.line_at("mcpServers", name, key) if key else None) or at,
                        server, f"mcpServers: {server_name}"))
                    servers[server.name] = server
        _timezone_problems(document, meta.get("timezone"), problems)
        folder = document.folder if document.path.endswith("/agent.md") else None
        return Agent(
            name=document.name, path=path, description=_str(meta.get("description")),
            tools=as_list(tools_value) if isinstance(tools_value, (list, str)) else [],
            skills=as_list(skills_value) if skills_value is not None else None,
            secrets=_names(meta.get("secrets")),
            limits=limits if isinstance(limits, dict) else {}, web=meta.get("web"), provider=meta.get("provider"),
            mcp_servers=servers, language=meta.get("language"), region=meta.get("region"), timezone=meta.get("timezone"),
            prompt=document.body.strip("\n"), own_folder=folder, meta=meta, problems=problems,
        )

    return _cached(desk, document, "agent", build)


# --- flows ------------------------------------------------------------------

_STEP_OUTPUT_RE = re.compile(r"\{\{\s*steps\.(\d+)\.output\s*\}\}")
_STEP_LINE = re.compile(r"^ {0,3}(\d+)[.)]\s+(.*)$")
_STEP_HEAD = re.compile(r"^\[\[([^\]]*)\]\](\s*!)?\s*(?:(?:—|–|--|-|:)\s*(.*))?$")
_OPTION_LINE = re.compile(r"^(\s+)([a-z][A-Za-z0-9_-]*)\s*:(?:\s+(.*)|\s*)$")


def _option_key(key: str) -> str:
    return "on-fail" if key in ("on_fail", "onFail", "on-fail") else key


def parse_steps(body: str, body_line: int, path: str) -> tuple[list[Step], list[Finding]]:
    """Steps from a flow body's numbered list (DESIGN.md: Flow), with problems.

    `N. [[agent]] — task`; `!` after the agent is a gate; indented lines below
    are `key: value` options (each, max, verify, retry, on-fail, limits, wait,
    ask) or more of the task.
    """
    steps: list[Step] = []
    problems: list[Finding] = []
    current: Step | None = None
    lines = body.split("\n")
    block_limits: tuple[Step, int, list[str]] | None = None  # `limits:` with an indented block beneath
    in_fence = False
    for offset, raw in enumerate(lines):
        line_no = body_line + offset
        if raw.lstrip().startswith("```"):
            in_fence = not in_fence
        if in_fence:
            continue
        if block_limits is not None:
            step, indent, collected = block_limits
            if raw.strip() and (len(raw) - len(raw.lstrip())) > indent:
                collected.append(raw)
                continue
            _apply_option(step, "limits", "\n".join(collected), step.option_lines["limits"], path, problems, block=True)
            block_limits = None
        match = _STEP_LINE.match(raw)
        if match:
            written, rest = int(match.group(1)), match.group(2).strip()
            head = _STEP_HEAD.match(rest)
            number = len(steps) + 1
            if not head or not head.group(1).strip():
                problems.append(Finding(path, line_no, "error", f"line {written}. is not a step; write {written}. [[agent]] — the task.", "flow.step_line"))
                current = None
                continue
            current = Step(number=number, agent=head.group(1).strip(), task=(head.group(3) or "").strip(), line=line_no,
                           gate=bool(head.group(2)), written_number=written)
            steps.append(current)
            if written != number:
                problems.append(Finding(path, line_no, "warning", f"step {number} ([[{current.agent}]]) is numbered {written}; {{{{steps.N.output}}}} counts steps in order from 1, so this one is {number}.", "flow.numbering"))
            continue
        if current is None:
            continue
        if not raw.strip():
            continue
        if not raw[0].isspace():
            current = None  # prose after the list ends the step
            continue
        option = _OPTION_LINE.match(raw)
        if option:
            key, value = _option_key(option.group(2)), (option.group(3) or "").strip()
            current.options[key] = value
            current.option_lines[key] = line_no
            if key not in STEP_OPTIONS:
                hint = did_you_mean(option.group(2), STEP_OPTIONS, "{}:") or "."
                problems.append(Finding(path, line_no, "error", f"{current.label} has an option {option.group(2)}: that foldrun does not read; the options are {', '.join(STEP_OPTIONS[:-1])} and {STEP_OPTIONS[-1]}{hint}", "flow.option_unknown"))
                continue
            if key == "limits" and not value:
                block_limits = (current, len(option.group(1)), [])
                continue
            _apply_option(current, key, value, line_no, path, problems)
            continue
        current.task = (current.task + "\n" + raw.strip()).strip()
    if block_limits is not None:
        step, _indent, collected = block_limits
        _apply_option(step, "limits", "\n".join(collected), step.option_lines["limits"], path, problems, block=True)
    for step in steps:
        for match in _STEP_OUTPUT_RE.finditer(step.task):
            wanted = int(match.group(1))
            if wanted >= step.number:
                problems.append(Finding(path, step.line, "error",
                                        f"{step.label} reads {{{{steps.{wanted}.output}}}}, which is not an earlier step; it can read the output of {'step 1' if step.number == 2 else f'steps 1 to {step.number - 1}'}." if step.number > 1 else
                                        f"{step.label} reads {{{{steps.{wanted}.output}}}}, but the first step has no earlier step to read.",
                                        "flow.step_output"))
        if step.max is not None and step.each is None:
            problems.append(Finding(path, step.option_lines["max"], "warning",
                                    f"{step.label} has max: without each:; max: caps an each: fan-out, so add each: lines or each: json, or drop max:.",
                                    "flow.max_without_each"))
    return steps, problems


def _apply_option(step: Step, key: str, value: str, line: int, path: str, problems: list[Finding], block: bool = False) -> None:
    label = step.label

    def bad(message: str, code: str) -> None:
        problems.append(Finding(path, line, "error", f"{label} {message}", code))

    if key == "each":
        if value in ("lines", "json"):
            step.each = value
        else:
            bad(f"has each: {value}; it must be lines or json.", "flow.each")
    elif key == "max":
        if value.isdigit() and int(value) >= 1:
            step.max = int(value)
        else:
            bad(f"has max: {value}; it must be a whole number, 1 or more.", "flow.max")
    elif key == "retry":
        if value.isdigit():
            step.retry = int(value)
        else:
            bad(f"has retry: {value}; it must be a whole number, 0 or more.", "flow.retry")
    elif key == "on-fail":
        if value in ("stop", "continue"):
            step.on_fail = value
        else:
            bad(f"has on-fail: {value}; it must be stop or continue.", "flow.on_fail")
    elif key == "verify":
        kind, _, argument = value.partition(" ")
        argument = argument.strip()
        if kind not in VERIFY_KINDS or not argument:
            bad(f"has verify: {value}; write verify: file <path>, verify: reply <regex> or verify: grows <path>.", "flow.verify")
            return
        if kind == "reply":
            try:
                re.compile(argument)
            except re.error as exc:
                bad(f"has verify: reply with a regular expression that does not compile ({exc}).", "flow.verify_regex")
                return
        elif argument.startswith(("/", "~")) or ".." in argument.replace("\\", "/").split("/"):
            bad(f"has verify: {kind} {argument}; the path must stay inside the step's folder (no leading / and no ..).", "flow.verify_path")
            return
        step.verify = Verify(kind, argument)
    elif key == "wait":
        word, _, name = value.partition(" ")
        name = name.strip()
        if word != "event" or not EVENT_NAME_RE.match(name):
            bad(f"has wait: {value}; write wait: event <name>, the name in letters, digits, '-' and '_' (such as wait: event signed-off).", "flow.wait")
            return
        step.wait_event = name
    elif key == "ask":
        if not value:
            bad("has ask: with no question; write ask: <the question for a person>.", "flow.ask")
            return
        step.ask = value
    elif key == "limits":
        try:
            parsed = load_yaml(value) if value else None
        except yaml.YAMLError:
            parsed = None
        if not isinstance(parsed, dict):
            bad("has limits: that is not a mapping; write limits: {web.search: 10}.", "flow.limits")
            return
        step.limits = parsed


def flow_of(desk: Desk, document: Document) -> Flow:
    """The Flow a flows/<name>.md describes (cached)."""

    def build() -> Flow:
        meta = document.meta
        path = document.path
        problems: list[Finding] = []
        steps, step_problems = parse_steps(document.body, document.parsed.body_line if document.parsed else 1, path)
        problems.extend(step_problems)
        if document.parsed and not steps:
            problems.append(Finding(path, document.parsed.body_line, "error", "has no steps; list them in the body as 1. [[agent]] — the task.", "flow.no_steps"))
        flow = Flow(name=document.name, path=path, steps=steps, description=_str(meta.get("description")), meta=meta, problems=problems)

        def err(key: str, message: str, code: str) -> None:
            problems.append(Finding(path, document.line_of(key), "error", message, code))

        schedule = meta.get("schedule")
        if schedule is not None:
            why = cron_problem(schedule)
            if why:
                err("schedule", f'schedule: "{schedule}" is not a cron expression ({why}); write five fields — minute, hour, day of month, month, day of week — such as "0 7 * * MON".', "flow.schedule")
            else:
                flow.schedule = str(schedule).strip()
        if meta.get("timezone") is not None:
            _timezone_problems(document, meta.get("timezone"), problems)
            flow.timezone = _str(meta.get("timezone"))
        inputs = meta.get("inputs")
        if inputs is not None:
            if isinstance(inputs, dict):
                flow.inputs = inputs
            else:
                err("inputs", "inputs: must be a mapping of names to default values, such as inputs: {topic: building inspections}.", "flow.inputs")
        for key in ("sla", "approve_within"):
            if meta.get(key) is None:
                continue
            duration = parse_duration(meta.get(key))
            if duration is None:
                err(key, f"{key}: {meta.get(key)} is not a duration; write a whole number and a unit: 30m, 2h, 2d or 1w.", f"flow.{key}")
            elif key == "sla":
                flow.sla = duration
            else:
                flow.approve_within = duration
        if meta.get("disable_after") is not None:
            if is_whole(meta.get("disable_after"), 1):
                flow.disable_after = meta["disable_after"]
            else:
                err("disable_after", f"disable_after: {meta.get('disable_after')} must be a whole number, 1 or more (failed runs in a row before the flow stops firing).", "flow.disable_after")
        approvers = meta.get("approvers")
        if approvers is not None:
            if isinstance(approvers, (list, str)):
                flow.approvers = as_list(approvers)
            else:
                err("approvers", "approvers: must be a list of addresses, such as approvers: [owner@example.com].", "flow.approvers")
        budget = meta.get("budget")
        if budget is not None:
            if isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget > 0:
                flow.budget = float(budget)
            else:
                err("budget", f"budget: {budget} is not an amount; write the run's cap in USD, such as budget: 5.00.", "flow.budget")
        webhook = meta.get("webhook")
        if webhook is not None:
            if isinstance(webhook, dict):
                flow.webhook = webhook
            else:
                err("webhook", "webhook: must be a mapping, such as webhook: {signature: hmac, secret: INBOUND_KEY}.", "flow.webhook")
        return flow

    return _cached(desk, document, "flow", build)


# --- tools ------------------------------------------------------------------

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


def skill_of(desk: Desk, document: Document) -> Skill:
    def build() -> Skill:
        meta = document.meta
        problems: list[Finding] = []
        description = _str(meta.get("description"))
        if document.parsed and not description:
            problems.append(Finding(document.path, 2, "error", "has no description:; a skill needs name: and description: — the description is all an agent sees until a task matches it.", "skill.description"))
        if document.parsed and not _str(meta.get("name")):
            problems.append(Finding(document.path, 2, "warning", f"has no name:; add name: {document.path_name} (the Agent Skills format wants the folder's name).", "skill.name"))
        declaration, bad = declaration_of(meta, document.path, document.line_at)
        problems.extend(bad)
        return Skill(name=document.name, path=document.path, scope=document.scope, description=description, agent=document.agent,
                     folder=document.folder, body=document.body, meta=meta, problems=problems, declaration=declaration)

    return _cached(desk, document, "skill", build)


def concept_of(desk: Desk, document: Document) -> Concept:
    def build() -> Concept:
        meta = document.meta
        type_ = _str(meta.get("type")) or None
        concept = Concept(path=document.path, scope=document.scope, type=type_, title=_str(meta.get("title")),
                          description=_str(meta.get("description")), agent=document.agent, body=document.body, meta=meta)
        if document.parsed:
            directory = "knowledge" if "knowledge/" in document.path else "memory"
            if not type_:
                concept.problems.append(Finding(document.path, 1, "error", f"has no type: in its frontmatter; a concept in {directory}/ needs type:, title: and description:, and the server refuses a push that adds one without type:.", "concept.type"))
            missing = [k for k in ("title", "description") if not _str(meta.get(k))]
            if missing and type_:
                concept.problems.append(Finding(document.path, 1, "warning", f"has no {' or '.join(k + ':' for k in missing)}; the index of {directory}/ shows them, so add {'them' if len(missing) > 1 else 'it'}.", "concept.fields"))
        return concept

    return _cached(desk, document, "concept", build)


def find_agent(desk: Desk, name: str) -> Agent | None:
    """The workspace's agent called `name` (agents live only in workspaces)."""
    documents = [d for d in desk.named(AGENT, name, scope="workspace") if d.parsed]
    return agent_of(desk, documents[0]) if documents else None


def find_flow(desk: Desk, name: str) -> Flow | None:
    documents = [d for d in desk.named(FLOW, name, scope="workspace") if d.parsed]
    return flow_of(desk, documents[0]) if documents else None


__all__ = [
    "Agent", "Concept", "Defaults", "Flow", "McpServer", "Runtime", "Skill", "Step", "Tool", "Verify",
    "agent_of", "agents_md_of", "concept_of", "flow_of", "skill_of", "tool_of", "find_agent", "find_flow",
    "parse_steps", "parse_duration", "parse_rate", "cron_problem", "limit_key", "closest",
    "BUILTIN_GROUPS", "SDK_NAMES", "WEB_ACTIONS", "STEP_OPTIONS", "NAME_RE", "SECRET_NAME_RE", "PLACEHOLDER_RE",
    "AGENTS_MD",
]
