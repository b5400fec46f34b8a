"""The dataclasses the parsers return: McpServer, Defaults, Agent, Verify, Step, Flow, Runtime, Tool, Skill, Concept."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from ..findings import Finding
from ..programs import Requirements
from ..skill_inputs import SkillDeclaration
from .values import DEFAULT_APPROVE_WITHIN, PLACEHOLDER_RE


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
    budget_window: tuple[str, float] | None = None  # ("month", 50.0) from budget: {month: 50}
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
    skills: list[str] | None = None  # None: every skill it can see
    secrets: list[str] = field(default_factory=list)
    limits: dict[str, Any] = field(default_factory=dict)
    web: Any = None
    provider: Any = None
    mcp_servers: dict[str, McpServer] = field(default_factory=dict)
    apis: dict[str, "Tool"] = field(default_factory=dict)  # inline http tools (`apis:`), granted to this agent
    language: str | None = None
    region: str | None = None
    timezone: str | None = None
    prompt: str = ""
    own_folder: str | None = None  # agents/<name> for the folder form
    meta: dict[str, Any] = field(default_factory=dict)
    problems: list[Finding] = field(default_factory=list)


@dataclass
class Verify:
    kind: str  # file | reply | grows
    argument: str  # a path, or a regular expression for reply


@dataclass
class Step:
    """One numbered line of a flow's body and its indented options."""

    number: int  # 1-based position; {{steps.N.output}} counts this
    agent: str
    task: str
    line: int  # file line of the step
    gate: bool = False  # `!` after [[agent]]
    each: str | None = None  # lines | json
    max: int | None = None
    verify: Verify | None = None
    retry: int = 0
    on_fail: str = "stop"
    limits: dict[str, Any] = field(default_factory=dict)
    wait_event: str | None = None
    ask: str | None = None
    written_number: int = 0
    options: dict[str, str] = field(default_factory=dict)  # option -> raw value
    option_lines: dict[str, int] = field(default_factory=dict)  # option -> file line

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
    folder: str | None = None  # tools/<name> for the folder form
    outward: bool = False
    # http
    base: str | None = None
    methods: list[str] = field(default_factory=list)  # none declared: read-only (GET)
    headers: dict[str, str] = field(default_factory=dict)
    query: dict[str, str] = field(default_factory=dict)
    timeout: float | None = None
    rate: tuple[float, int] | None = None  # (calls, per seconds)
    openapi: str | None = None
    operations: list[str] | None = None
    # script
    run: str | None = None  # as written
    program_path: str | None = None  # path in the scope of the program file; None for a fenced block
    program: str | None = None  # the program's text
    program_line: int = 1  # file line the program starts on (fenced block)
    interpreter: str | None = None
    args: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)
    secrets_mode: str = "materialised"  # materialised | proxied
    test_mode: str | None = None  # allow
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
