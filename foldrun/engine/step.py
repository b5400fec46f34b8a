"""One step: one agent's model loop with the tools it was granted.

`run_step(desk, request, host)` is what the Celery task and `foldrun run
--local` both call. It materialises a sandbox, resolves the agent and its
tools (nearest wins), resolves secrets (the trace says which store each came
from), builds the prompt, runs the model loop until the model ends its turn,
and returns a `StepResult`: the reply, memory/state writes to keep, outputs,
the limits line. It knows nothing of Django: the `Host` is its only window
onto records, secrets, the model and money.
"""
from __future__ import annotations

import datetime as dt
import http.cookiejar
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any, Callable, Protocol

import httpx

from foldrun.contract import Desk

from .limits import LimitCounter, merge_limits
from .resolve import AgentSpec, ResolveError, resolve_agent
from .sandbox import Sandbox, materialise
from .search import SearchIndex
from .tools.base import Park, Tool, ToolError, check_arguments
from .tools.builtin import builtin_tools
from .tools.http import HttpToolRuntime, secret_names as http_secret_names
from .tools.mcp import McpToolRuntime, mcp_secret_names
from .tools.script import ScriptToolRuntime

WITHHELD = "TEST_MODE_WITHHELD"
MAX_RESULT_CHARS = 50_000
DEFAULT_MAX_TURNS = 60
DEFAULT_MAX_TOKENS = 4096


_SHARED_HTTP: httpx.Client | None = None
_SHARED_LOCK = threading.Lock()


def shared_http() -> httpx.Client:
    """The process's httpx client (thread-safe; no cookies kept between calls)."""
    global _SHARED_HTTP
    with _SHARED_LOCK:
        if _SHARED_HTTP is None or _SHARED_HTTP.is_closed:
            # A jar that accepts no cookie: one tenant's call must never carry another's session.
            jar = http.cookiejar.CookieJar(policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
            _SHARED_HTTP = httpx.Client(follow_redirects=False, timeout=httpx.Timeout(300.0, connect=15.0),
                                        cookies=jar)
        return _SHARED_HTTP


_NAMESPACES: dict[bool, list[str] | None] = {}
_ISOLATION: dict[tuple, bool] = {}

# Run inside the program's fresh mount namespace, before the program: the sandbox folder's other
# sandboxes (other steps, other tenants) disappear under a tmpfs with only this one put back, and
# each path in FOLDRUN_HIDE is masked (a folder by a tmpfs, a file by /dev/null).
ISOLATE = r"""
own="$1"; shift
base=$(dirname "$own")
exec 3< "$own" || exit 97
mount -t tmpfs -o size=256m,mode=1777 tmpfs "$base" && mkdir -p "$own" && mount -c --bind /proc/self/fd/3 "$own" \
  || { echo "foldrun: the sandbox could not be isolated" >&2; exit 97; }
exec 3<&-
IFS='
'
for p in $FOLDRUN_HIDE; do
  if [ -d "$p" ]; then mount -t tmpfs -o size=1m tmpfs "$p" || exit 97
  elif [ -e "$p" ]; then mount --bind /dev/null "$p" || exit 97
  fi
done
unset FOLDRUN_HIDE
cd "$own" || exit 97
exec "$@"
"""


def isolation_works(prefix: list[str]) -> bool:
    """Whether this machine lets the program's namespace mount (probed once per prefix)."""
    key = tuple(prefix)
    if key not in _ISOLATION:
        import tempfile

        probe = Path(tempfile.mkdtemp(prefix="foldrun-probe-"))
        try:
            done = subprocess.run(prefix + ["sh", "-c", ISOLATE, "sh", str(probe), "true"], capture_output=True,
                                  timeout=10, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
            _ISOLATION[key] = done.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _ISOLATION[key] = False
        finally:
            shutil.rmtree(probe, ignore_errors=True)
    return _ISOLATION[key]


def namespace_prefix(*, no_network: bool) -> list[str] | None:
    """How to start a step's program: in its own PID namespace (it cannot read the worker's
    /proc/<pid>/environ) and, with `no_network`, in a network namespace with no route. Probed once.
    Without `no_network` the fallback is [] (no namespace); with it, None means "not possible here"."""
    if no_network not in _NAMESPACES:
        net = ["-n"] if no_network else []
        candidates = [["unshare", "-pf", "--mount-proc", *net], ["unshare", "-r", "-pf", "--mount-proc", *net]]
        if no_network:
            candidates += [["unshare", "-n"], ["unshare", "-r", "-n"]]
        found: list[str] | None = [] if not no_network else None
        if shutil.which("unshare"):
            for candidate in candidates:
                try:
                    ok = subprocess.run(candidate + ["true"], capture_output=True, timeout=10).returncode == 0
                except (OSError, subprocess.SubprocessError):
                    ok = False
                if ok:
                    found = candidate
                    break
        _NAMESPACES[no_network] = found
    return _NAMESPACES[no_network]


class MissingSecret(Exception):
    """A secret the step needs and cannot have. `reason` is the sentence when the
    vault holds it but could not produce it (undecryptable, a refused OAuth refresh)."""

    def __init__(self, name: str, reason: str | None = None) -> None:
        super().__init__(name)
        self.name = name
        self.reason = reason


class BudgetExceeded(Exception):
    """The run's `budget:` is spent; no further model or paid call is made."""


class StepFailed(Exception):
    """The step cannot go on; the message is its error line."""


class Redactor:
    """The step's secret values, and their removal from whatever the step saves.

    One mechanism for every text that leaves the step to be kept: trace data
    (through `RedactingHost`), the reply, the error and question lines, the
    outputs/ files and the memory/ and state/ writes (at the end of `run_step`).
    A value is replaced by `[secret NAME]`; values shorter than 4 characters
    are left (they would match everywhere)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def text(self, text: str) -> str:
        for name, value in self.values.items():
            if value and len(value) >= 4 and value in text:
                text = text.replace(value, f"[secret {name}]")
        return text

    def bytes(self, content: bytes) -> bytes:
        for name, value in self.values.items():
            if value and len(value) >= 4:
                raw = value.encode("utf-8", "surrogatepass")
                if raw in content:
                    content = content.replace(raw, f"[secret {name}]".encode())
        return content

    def data(self, value: Any) -> Any:
        """A JSON-shaped value with every string (keys too) redacted."""
        if not self.values:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


class RedactingHost:
    """The host as a step sees it: every trace passes the step's `Redactor` on its way to be saved."""

    def __init__(self, host: "Host", redactor: Redactor) -> None:
        self._host = host
        self._redactor = redactor

    def trace(self, kind: str, data: dict) -> None:
        self._host.trace(kind, self._redactor.data(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._host, name)


class Host(Protocol):
    """What the engine needs from whoever runs it (a Celery task, the laptop CLI)."""

    def trace(self, kind: str, data: dict) -> None: ...

    def resolve_secrets(self, names: list[str]) -> dict[str, tuple[str, str]]:
        """name -> (value, store). Raises MissingSecret(name) for one in no vault."""

    def model_client(self, provider: dict, timezone: str = "UTC") -> Any:
        """An object with `.create(system, messages, tools, max_tokens)` returning an Anthropic Messages dict."""

    def charge(self, response: dict, provider: dict) -> Decimal:
        """Record a model response's cost; raise BudgetExceeded when the run's cap is reached."""

    def check_budget(self) -> None:
        """Raise BudgetExceeded when the run may not spend any more."""

    def before_write(self, what: str) -> None:
        """Note, durably, that the step is about to change something outside its sandbox."""

    def recall_runs(self, limit: int) -> list[dict]: ...

    def read_run(self, run_id: str) -> dict | None: ...


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
    timezone: str | None = None   # the flow's, for reset times in refusal lines
    counter: LimitCounter | None = None  # a consulted colleague shares the delegating step's counter
    hide_under: list[str] = field(default_factory=list)    # folders whose entries a program may not see
    keep_visible: list[str] = field(default_factory=list)  # … except these (the runtime environments)
    tenant: str = ""   # the account's id, sent as OpenAI's safety_identifier (hashed past 64 characters)


@dataclass
class StepResult:
    status: str  # completed | failed | parked
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


class StepEnv:
    """Everything a tool handler may touch during one step."""

    def __init__(self, request: StepRequest, host: Host, sandbox: Sandbox, agent: AgentSpec) -> None:
        self.request = request
        self.host = host
        self.sandbox = sandbox
        self.agent = agent
        self.granted = set(agent.builtin)
        self.is_test = request.is_test
        self.allow_private_urls = request.allow_private_urls
        self.venv_cache = request.venv_cache
        self.secrets: dict[str, str] = {}        # name -> value handed to this step (or WITHHELD)
        redactor = getattr(host, "_redactor", None)
        self.redactor: Redactor = redactor if isinstance(redactor, Redactor) else Redactor()
        self.real_values: dict[str, str] = self.redactor.values   # for redaction only
        self._closers: list[Callable[[], None]] = []
        self._index: SearchIndex | None = None
        self.withhold_all = False
        self.sandbox_files: dict[str, str] = {}  # the workspace's files (an openapi document may be one)
        self._egress = None
        self.counter: LimitCounter | None = None
        self.wrote: list[str] = []  # what the step changed outside its sandbox so far (an `ask` refuses then)

    @property
    def http(self) -> httpx.Client:
        """One client per process, shared: building one costs ~30 ms (its TLS context)."""
        return shared_http()

    # -- logging and secrets --------------------------------------------------------
    def log(self, message: str) -> None:
        self.host.trace("log", {"message": self.redact(message)})

    def redact(self, text: str) -> str:
        return self.redactor.text(text)

    def secret_values(self, names: list[str], *, for_tool_test_mode: bool = False) -> dict[str, str]:
        values: dict[str, str] = {}
        for name in names:
            if name not in self.secrets:
                raise ToolError(f"secret {name} was not granted to this step")
            # A test run whose step grants an outward tool is handed no real secret at all.
            values[name] = WITHHELD if (self.is_test and self.withhold_all) else self.secrets[name]
        return values

    def agent_env(self) -> dict[str, str]:
        """The agent's own `secrets:` for its `code` (withheld on a test run)."""
        names = [str(n) for n in (self.agent.meta.get("secrets") or [])]
        env = {n: self._value_for(n, allow=False) for n in names if n in self.secrets}
        if self.is_test:
            env["FOLDRUN_TEST_MODE"] = "1"
        return env

    def _value_for(self, name: str, *, allow: bool) -> str:
        if self.is_test and (self.withhold_all or not allow):
            return WITHHELD
        return self.real_values.get(name, self.secrets.get(name, ""))

    def script_env(self, runtime: ScriptToolRuntime) -> dict[str, str]:
        env: dict[str, str] = {}
        allow = runtime.test_mode_allow
        for name in runtime.secret_names:
            env[name] = self._value_for(name, allow=allow)
        if runtime.proxied and not (self.is_test and self.withhold_all):
            env.update(self._egress_env())
        if runtime.secret_names:
            given = [n for n in runtime.secret_names if env[n] != WITHHELD]
            self.host.trace("secret", {"tool": runtime.name, "names": runtime.secret_names,
                                       "materialised": given, "withheld": [n for n in runtime.secret_names
                                                                          if n not in given]})
        if self.is_test:
            env["FOLDRUN_TEST_MODE"] = "1"
        return env

    def _egress_env(self) -> dict[str, str]:
        """FOLDRUN_EGRESS for a proxied script: the host's egress proxy, started once per step."""
        if self._egress is None:
            make = getattr(self.host, "egress", None)
            names = [str(n) for n in (self.agent.meta.get("secrets") or [])]
            self._egress = make(names) if make else None
            if self._egress is not None:
                self.on_close(self._egress.stop)
        return self._egress.env() if self._egress is not None else {}

    def on_close(self, closer: Callable[[], None]) -> None:
        self._closers.append(closer)

    def close(self) -> None:
        for closer in reversed(self._closers):
            try:
                closer()
            except Exception:  # noqa: BLE001 - closing is best effort
                pass

    def search_index(self) -> SearchIndex:
        if self._index is None:
            self._index = SearchIndex(self.sandbox.root, self.agent.name)
        return self._index

    # -- programs -------------------------------------------------------------
    def run_program(self, command: list[str], *, timeout: float | None, extra_env: dict[str, str] | None = None,
                    stdin: str | None = None, cwd: Path | None = None, label: str = "Bash",
                    raise_on_error: bool = False) -> str:
        """Run a program in the sandbox; on a test run, in a network namespace with no route."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.sandbox.root), "LANG": "C.UTF-8",
               "FOLDRUN_SANDBOX": str(self.sandbox.root)}
        env.update(extra_env or {})
        wrap, wrap_env = self.program_wrapper()
        if self.is_test:
            self.log(f"test run: {label} runs with no network (outward calls fail closed)")
        env.update(wrap_env)
        command = wrap + command
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=str(cwd or self.sandbox.root), env=env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = process.communicate(stdin.encode() if stdin is not None else None, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise ToolError(f"{label}: timed out after {timeout:g}s and was stopped") from None
        seconds = time.monotonic() - started
        stdout = self.redact(out.decode("utf-8", errors="replace"))
        stderr = self.redact(err.decode("utf-8", errors="replace"))
        if stderr.strip():
            self.host.trace("log", {"program": label, "stderr": stderr[-2000:]})
        if raise_on_error and process.returncode != 0:
            raise ToolError(f"{label} exited with status {process.returncode}\n{stderr.strip()[-2000:]}")
        if not raise_on_error:
            text = stdout + (f"\n[stderr]\n{stderr}" if stderr.strip() else "")
            return (text + f"\n[exit {process.returncode}, {seconds:.1f}s]").strip()
        return stdout


    def program_wrapper(self) -> tuple[list[str], dict[str, str]]:
        """(the argv prefix, the environment it needs) that starts a program of this step in its own
        namespaces: PID (and mount) always when the machine allows, network too on a test run, and — when
        mounts are allowed — seeing only its own sandbox and none of the hidden paths."""
        prefix = namespace_prefix(no_network=self.is_test)
        if self.is_test and prefix is None:
            raise ToolError("test run: no network namespace is available here, so programs do not run")
        if prefix and isolation_works(prefix):
            return prefix + ["sh", "-c", ISOLATE, "sh", str(self.sandbox.root)], {
                "FOLDRUN_HIDE": "\n".join(self._hidden_paths())}
        return list(prefix or []), {}

    def _hidden_paths(self) -> list[str]:
        """What a program must not see: every entry of the request's `hide_under` folders except `keep`."""
        keep = {str(Path(k).resolve()) for k in self.request.keep_visible}
        keep.add(str(self.sandbox.root.resolve()))
        hidden: list[str] = []
        for folder in self.request.hide_under:
            try:
                entries = list(Path(folder).iterdir())
            except OSError:
                continue
            for entry in entries:
                real = str(entry.resolve())
                if real in keep or any(k.startswith(real + "/") for k in keep):
                    continue
                hidden.append(str(entry))
        return hidden


def _prompt(agent: AgentSpec, request: StepRequest) -> str:
    parts = [agent.body or f"You are {agent.name}."]
    if agent.skills:
        lines = [f"- {s['name']}: {s['description']} ({s['path']})" for s in agent.skills]
        parts.append("Skills you can use — read the SKILL.md when a task matches:\n" + "\n".join(lines))
    language = agent.meta.get("language") or agent.workspace_defaults.get("language") or agent.account_defaults.get("language")
    region = agent.meta.get("region") or agent.workspace_defaults.get("region") or agent.account_defaults.get("region")
    if language:
        parts.append(f"Write in {language}.")
    if region:
        parts.append(f"Your region is {region}.")
    parts.append(
        "You work in a workspace folder: knowledge/ is given (read-only), memory/ is yours to write one fact per "
        "file, state/ is the bookmark between runs (append, never rewrite), outputs/ is what this step leaves. "
        f"Today is {dt.date.today().isoformat()}."
    )
    return "\n\n".join(parts)


def _provider(agent: AgentSpec) -> dict:
    for layer in (agent.meta, agent.workspace_defaults, agent.account_defaults):
        block = layer.get("provider")
        if block:
            return dict(block) if isinstance(block, dict) else {"name": str(block)}
    return {}


def _limit_layers(agent: AgentSpec, request: StepRequest) -> dict[str, int]:
    """Nearest wins per key: account AGENTS.md, workspace AGENTS.md, agent (already merged), the step's."""
    return merge_limits(agent.limits, request.limits)


def _text_of(content: list[dict]) -> str:
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text").strip()


def run_step(desk: Desk, request: StepRequest, host: Host) -> StepResult:
    """Run one step to the end of the model's turn. Never raises for a step-level failure."""
    try:
        agent = resolve_agent(desk, request.agent)
    except ResolveError as exc:
        host.trace("log", {"message": str(exc)})
        return StepResult(status="failed", error=str(exc))
    sandbox = materialise(desk.files, desk.library, base=request.sandbox_base)
    redactor = Redactor()
    host = RedactingHost(host, redactor)
    env = StepEnv(request, host, sandbox, agent)
    env.sandbox_files = desk.files
    result = StepResult(status="failed")
    try:
        _run(agent, request, host, env, result)
    finally:
        env.close()
        writes, refused = sandbox.changes()
        result.writes, result.refused_writes = writes, refused
        for path in refused:
            host.trace("log", {"message": f"{path} was changed during the step; the change was discarded — "
                                          f"knowledge/ is never written by a run"})
        result.outputs = sandbox.outputs()
        sandbox.cleanup()
        _redact_result(result, redactor)
    return result


def _redact_result(result: StepResult, redactor: Redactor) -> None:
    """No secret value leaves the step in what is kept: the reply, the lines, outputs/, memory/ and state/."""
    if not redactor.values:
        return
    result.output = redactor.text(result.output)
    result.error = redactor.text(result.error)
    result.question = redactor.text(result.question)
    result.outputs = {path: redactor.bytes(content) for path, content in result.outputs.items()}
    result.writes = {path: redactor.text(content) if isinstance(content, str) else content
                     for path, content in result.writes.items()}


def _prepare_tools(agent: AgentSpec, env: StepEnv) -> tuple[list[Tool], list[str], list[Any]]:
    """The step's tools, and every secret name they (and the agent) need."""
    tools = builtin_tools(agent.builtin)
    names: list[str] = [str(n) for n in (agent.meta.get("secrets") or [])]
    runtimes: list[Any] = []
    outward = False
    for tool_file in agent.tool_files:
        transport = tool_file.transport
        if transport == "http":
            names += http_secret_names(tool_file.meta)
            runtimes.append(HttpToolRuntime(tool_file.name, tool_file.meta, files=env.sandbox_files, log=env.log,
                                            folder_files=tool_file.folder_files))
        elif transport == "script":
            runtime = ScriptToolRuntime(tool_file.name, tool_file.meta, tool_file.body, tool_file.folder_files)
            names += runtime.secret_names
            runtimes.append(runtime)
        elif transport == "mcp":
            names += mcp_secret_names(tool_file.meta)
            runtimes.append(McpToolRuntime(tool_file.name, tool_file.meta))
        elif transport in ("builtin", "gallery") and tool_file.name == "web":
            from foldrun.web.adapter import engine_tool

            web_tool, web_names = engine_tool(agent, env)
            tools.append(web_tool)
            names += web_names  # resolved with the step's other secrets; a missing one fails the step
            continue
        elif transport == "gallery":
            env.log(f"{tool_file.name}: the gallery tool is not available on this install yet; it is not offered")
            continue
        else:
            raise StepFailed(f"tool {tool_file.name}: transport {transport!r} is not http, script or mcp")
        outward = outward or bool(tool_file.meta.get("outward"))
    for server, meta in agent.mcp_inline.items():
        names += mcp_secret_names(meta)
        runtimes.append(McpToolRuntime(server, meta))
    env.withhold_all = env.is_test and outward
    return tools, list(dict.fromkeys(names)), runtimes


def prepare_tools(agent: AgentSpec, env: StepEnv, host: Host) -> list[Tool]:
    """Every tool the step offers, with its secrets resolved. Raises StepFailed with the step's error line."""
    tools, names, runtimes = _prepare_tools(agent, env)
    # Secrets: resolved once at the start; one missing fails the step by name.
    if names:
        try:
            resolved = host.resolve_secrets(names)
        except MissingSecret as exc:
            if exc.reason:
                host.trace("secret", {"name": exc.name, "store": None, "error": "unavailable"})
                raise StepFailed(exc.reason) from None
            host.trace("secret", {"name": exc.name, "store": None, "error": "missing"})
            raise StepFailed(f"secret {exc.name} is not in the vault (neither the workspace's nor the account's)") from None
        for name in names:
            value, store = resolved[name]
            env.real_values[name] = value
            env.secrets[name] = value
            host.trace("secret", {"name": name, "store": store,
                                  "withheld": bool(env.is_test and env.withhold_all)})
    if env.is_test:
        host.trace("log", {"message": "test run: send-capable secrets read TEST_MODE_WITHHELD, FOLDRUN_TEST_MODE=1, "
                                      "programs have no network, outward calls fail closed"})
    for runtime in runtimes:
        try:
            if isinstance(runtime, HttpToolRuntime):
                tools += runtime.tools()
            elif isinstance(runtime, ScriptToolRuntime):
                tools.append(runtime.tool())
            else:
                tools += runtime.tools(env)
        except ToolError as exc:
            raise StepFailed(str(exc)) from None
    return tools


def _run(agent: AgentSpec, request: StepRequest, host: Host, env: StepEnv, result: StepResult) -> None:
    try:
        tools = prepare_tools(agent, env, host)
    except StepFailed as exc:
        result.error = str(exc)
        host.trace("log", {"message": str(exc)})
        return
    nested = request.counter is not None
    try:
        counter = request.counter or LimitCounter(_limit_layers(agent, request))
    except ValueError as exc:
        result.error = str(exc)
        return
    env.counter = counter
    if not nested:
        host.trace("limit", {"line": counter.opening_line()})
    by_name = {t.name: t for t in tools}
    provider = _provider(agent)
    system = _prompt(agent, request)
    task = request.task
    if request.answer is not None:
        task += f"\n\nYou asked a person a question; their answer: {request.answer}"
    messages: list[dict] = [{"role": "user", "content": task}]
    max_tokens = int(agent.meta.get("max_tokens") or DEFAULT_MAX_TOKENS)
    try:
        from foldrun.providers.refusal import step_timezone

        zone = step_timezone(agent.meta.get("timezone"), request.timezone, agent.workspace_defaults.get("timezone"),
                             agent.account_defaults.get("timezone"))
        client = host.model_client(provider, timezone=zone)
        tenant = {"safety_identifier": request.tenant} if request.tenant else {}
        for _turn in range(request.max_turns):
            host.check_budget()
            started = time.monotonic()
            response = client.create(system=system, messages=messages, tools=[t.definition() for t in tools],
                                     max_tokens=max_tokens, **tenant)
            usage = response.get("usage") or {}
            result.tokens_in += int(usage.get("input_tokens") or 0)
            result.tokens_out += int(usage.get("output_tokens") or 0)
            host.trace("model_request", {"model": response.get("model") or provider.get("model"),
                                         "stop_reason": response.get("stop_reason"),
                                         "input_tokens": usage.get("input_tokens"),
                                         "output_tokens": usage.get("output_tokens"),
                                         "seconds": round(time.monotonic() - started, 3)})
            result.cost += host.charge(response, provider)
            content = list(response.get("content") or [])
            messages.append({"role": "assistant", "content": content})
            uses = [b for b in content if b.get("type") == "tool_use"]
            if not uses:
                result.output = _text_of(content)
                result.status = "completed"
                return
            replies = []
            for use in uses:
                replies.append(_call_tool(use, by_name, counter, env, result))
            messages.append({"role": "user", "content": replies})
        result.error = f"the model did not end its turn within {request.max_turns} requests"
    except Park as park:
        result.status = "parked"
        result.question = park.question
    except BudgetExceeded as exc:
        result.error = str(exc)
    except Exception as exc:  # a provider refusal or a transport failure: the step fails with its line
        # The spec's sentence alone (a refusal's line, a provider error's message, the host's sentence);
        # only an unexpected error keeps its class name, which is then the most useful word.
        line = getattr(exc, "line", None) or getattr(exc, "message", None) or (
            str(exc) if isinstance(exc, StepFailed) else f"{type(exc).__name__}: {exc}")
        host.trace("refusal", {"line": env.redact(str(line))})
        result.error = env.redact(str(line))
    finally:
        result.limits_line = counter.closing_line()
        if not nested:
            host.trace("limit", {"line": result.limits_line})


def _call_tool(use: dict, by_name: dict[str, Tool], counter: LimitCounter, env: StepEnv, result: StepResult) -> dict:
    name = str(use.get("name"))
    reply = {"type": "tool_result", "tool_use_id": use.get("id")}
    tool = by_name.get(name)
    arguments = use.get("input")
    env.host.trace("tool_call", {"id": use.get("id"), "name": name,
                                 "input": json.loads(env.redact(json.dumps(arguments, ensure_ascii=False)))
                                 if arguments is not None else None})
    if tool is None:
        message = f"{name} is not a tool this agent was granted"
        env.host.trace("tool_result", {"id": use.get("id"), "name": name, "error": True, "content": message})
        return {**reply, "content": message, "is_error": True}
    try:
        check_arguments(tool, arguments)
    except ToolError as exc:
        env.host.trace("tool_result", {"id": use.get("id"), "name": name, "error": True, "content": str(exc)})
        return {**reply, "content": str(exc), "is_error": True}
    refusal = counter.check(tool.call_limit_keys(arguments))
    if refusal is not None:
        env.host.trace("limit", {"tool": name, "refused": refusal})
        return {**reply, "content": refusal, "is_error": True}
    if tool.kind != "builtin" or tool.source.startswith("gallery"):
        env.host.check_budget()  # a paid call is not made once the run's budget is spent
    if tool.call_writes(arguments):
        what = f"{name} {json.dumps(arguments, ensure_ascii=False)[:200]}"
        env.host.before_write(env.redact(what))
        result.wrote.append(env.redact(what))
        env.wrote.append(env.redact(what))
    started = time.monotonic()
    try:
        content = tool.handler(arguments, env)
        is_error = False
    except Park:
        raise
    except BudgetExceeded:
        raise
    except ToolError as exc:
        content, is_error = str(exc), True
    except Exception as exc:  # noqa: BLE001 - a broken tool is an error the model sees; the loop goes on
        content, is_error = f"{name} failed: {type(exc).__name__}: {exc}", True
    content = env.redact(str(content))[:MAX_RESULT_CHARS]
    env.host.trace("tool_result", {"id": use.get("id"), "name": name, "error": is_error,
                                   "seconds": round(time.monotonic() - started, 3), "content": content[:4000]})
    out = {**reply, "content": content}
    if is_error:
        out["is_error"] = True
    return out
