"""What the engine and its tools see of each other and of whoever runs them.

`Host` is the engine's window onto records, secrets, the model and money (a Celery task's `DbHost`, the
laptop's `LocalHost`). `ToolContext` is what a tool handler may use of its step; `StepEnv` implements it,
so nothing under `engine/tools/` or `foldrun/web/` imports the step itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Protocol

import httpx

from .limits import LimitCounter

if TYPE_CHECKING:  # pragma: no cover
    from .resolve import AgentSpec
    from .sandbox import Sandbox
    from .search import SearchIndex

DEFAULT_MAX_TURNS = 60


class Host(Protocol):
    """What the engine needs from whoever runs it (a Celery task, the laptop CLI)."""

    def trace(self, kind: str, data: dict) -> None: ...

    def resolve_secrets(self, names: list[str]) -> dict[str, tuple[str, str]]:
        """name -> (value, store). Raises MissingSecret(name) for one in no vault."""

    def model_client(self, provider: dict, timezone: str = "UTC") -> Any:
        """An object with `.create(system, messages, tools, max_tokens)` returning an Anthropic Messages dict."""

    def charge(self, response: dict, provider: dict, reserved: Decimal = Decimal("0")) -> Decimal:
        """Record a model response's cost, settling the `reserved` amount held for it; raise BudgetExceeded
        when the run's cap is reached."""

    def reserve(self, amount: Decimal, minimum: Decimal, windows: Any = None) -> Decimal:
        """Hold up to `amount` of the run's budget for a call about to go out (engine/spend.py); the grant, at
        least `minimum`, or raise BudgetExceeded. A host with no cap grants `amount`."""

    def release(self, amount: Decimal) -> None:
        """Give back a reservation no call settled (the call was not made, or failed before its reply)."""

    def check_budget(self) -> None:
        """Raise BudgetExceeded when the run may not spend any more."""

    def before_write(self, what: str) -> None:
        """Note, durably, that the step is about to change something outside its sandbox."""

    def recall_runs(self, limit: int) -> list[dict]: ...

    def read_run(self, run_id: str) -> dict | None: ...

    def egress(self, names: list[str]) -> Any:
        """The started egress proxy for `secrets: proxied` programs (it fills the secrets `names` for their own
        hosts; `.env()` says where it listens, `.stop()` ends it), or None where there is none (a laptop)."""

    def consult(
        self, desk: str, agent: str, question: str, *, counter: Any = None, pod_writes: list[str] | None = None
    ) -> str:
        """`desks`: ask `agent` of another desk of this account; its answer. Raises ToolError where a colleague
        cannot be consulted (a laptop, a colleague itself)."""

    @property
    def kept_seeds(self) -> Any:
        """The seed book of the web tool's kept vendor profiles (foldrun/web/browse/kept.py: what secret signed
        each in), or None where the profile's own file keeps it (a laptop)."""

    def session_action(self) -> None:
        """A call of the step acted on its browser session: the session's idle clock starts again (a no-op
        where the step drives no session)."""

    def live_frames(self) -> Callable[[str, bytes | None, str], None] | None:
        """Where the step's browser frames go for a live view (kind, JPEG, URL), or None when nothing keeps
        them — then no screencast is started."""


@dataclass
class StepRequest:
    run_id: str
    label: str
    agent: str
    task: str
    limits: dict = field(default_factory=dict)
    is_test: bool = False
    answer: str | None = None
    inputs: dict = field(default_factory=dict)
    allow_private_urls: bool = False
    venv_cache: Path = Path.home() / ".foldrun" / "venvs"
    sandbox_base: str | None = None
    max_turns: int = DEFAULT_MAX_TURNS
    timezone: str | None = None  # the flow's, for reset times in refusal lines
    counter: LimitCounter | None = None  # a consulted colleague shares the delegating step's counter
    # … and its lost-pod writes: "read or write is judged from the calls the step had made, its sub-agents' included"
    pod_writes: list[str] | None = None
    hide_under: list[str] = field(default_factory=list)  # folders whose entries a program may not see
    keep_visible: list[str] = field(default_factory=list)  # … except these (the runtime environments)
    tenant: str = ""  # the account's id, sent as OpenAI's safety_identifier (hashed past 64 characters)
    search_engine_url: str = ""  # the account's own SearXNG; empty for the install's FOLDRUN_SEARXNG_URL
    browser_cdp: str = ""  # a browser session's CDP endpoint: the step's browse calls drive that session's page
    browser_allow_hosts: list[str] = field(default_factory=list)  # … and its allowHosts (reached via the user's proxy)
    browser_pod: bool = True  # False: a re-run after its pod was lost — the step's browser runs inside it
    # A program never runs on the worker's own network (no namespace here: it does not run). Only the laptop CLI,
    # on the user's own machine, sets False: there a program falls back to the machine's network, saying so.
    fence_required: bool = True
    # False keeps the programs' egress proxy to public addresses even where allow_private_urls is on (the
    # install's FOLDRUN_PROGRAMS_ALLOW_PRIVATE_URLS); it never widens allow_private_urls.
    programs_allow_private: bool = True


@dataclass
class StepResult:
    status: str  # completed | failed | parked | lost (its browser pod went, and the step had only read)
    output: str = ""
    error: str = ""
    question: str = ""
    writes: dict[str, str | None] = field(default_factory=dict)
    refused_writes: list[str] = field(default_factory=list)
    outputs: dict[str, bytes] = field(default_factory=dict)
    limits_line: str = ""
    tokens_in: int = 0
    tokens_out: int = 0
    cost: Decimal = Decimal("0")
    wrote: list[str] = field(default_factory=list)
    image: str = ""  # "slim": it browsed on the account's pod; "full": a browser inside the step after a lost pod
    pod_line: str = ""  # the try's browser pod line ("2 reconnects (2 got through)"), when it had one


class ToolContext(Protocol):
    """What a tool handler may use of the step it runs in."""

    host: Host
    sandbox: "Sandbox"
    agent: "AgentSpec"
    granted: set[str]  # the agent's built-in groups
    is_test: bool
    allow_private_urls: bool
    venv_cache: Path
    sandbox_files: dict[str, str]
    counter: LimitCounter | None
    wrote: list[str]  # what the step changed outside its sandbox so far
    browser_image: str  # the web tool says where the step browsed ("slim": the pod; "full": in the step)
    pod_line: str  # … and what its pod did ("1 reconnect (1 got through)")

    @property
    def http(self) -> httpx.Client: ...

    def log(self, message: str) -> None: ...

    def redact(self, text: str) -> str: ...

    def secret_values(self, names: list[str], *, for_tool_test_mode: bool = False) -> dict[str, str]: ...

    def agent_env(self) -> dict[str, str]: ...

    def script_env(self, runtime: Any) -> dict[str, str]: ...

    def on_close(self, closer: Callable[[], None]) -> None: ...

    def search_index(self) -> "SearchIndex": ...

    def run_program(
        self,
        command: list[str],
        *,
        timeout: float | None,
        extra_env: dict[str, str] | None = None,
        stdin: str | None = None,
        cwd: Path | None = None,
        label: str = "Bash",
        raise_on_error: bool = False,
    ) -> str: ...

    def program_wrapper(self) -> tuple[list[str], dict[str, str]]: ...
