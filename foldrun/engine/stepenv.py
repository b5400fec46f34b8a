"""`StepEnv`: one step's `ToolContext` — its sandbox, secrets, programs and closers."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, Callable

import httpx

from .context import Host, StepRequest
from .errors import ToolError
from .httpclient import shared_http
from .limits import LimitCounter
from .programs import Programs
from .redact import RedactingHost, Redactor
from .resolve import AgentSpec
from .sandbox import Sandbox
from .search import SearchIndex

# Tools that never change a file, so the search index stays as it is after them.
READ_ONLY_TOOLS = frozenset({"search_files", "Read", "Glob", "Grep", "recall_runs", "read_run"})

WITHHELD = "TEST_MODE_WITHHELD"


class StepEnv:
    """Everything a tool handler may touch during one step (the `ToolContext` of `context.py`)."""

    def __init__(self, request: StepRequest, host: Host, sandbox: Sandbox, agent: AgentSpec) -> None:
        self.request = request
        self.host = host
        self.sandbox = sandbox
        self.agent = agent
        self.granted = set(agent.builtin)
        self.is_test = request.is_test
        self.allow_private_urls = request.allow_private_urls
        self.venv_cache = request.venv_cache
        self.secrets: dict[str, str] = {}  # name -> value handed to this step (or WITHHELD)
        # The step's host redacts its traces with the step's redactor (engine/step.py wraps it): one redactor.
        self.redactor: Redactor = host.redactor if isinstance(host, RedactingHost) else Redactor()
        self.real_values: dict[str, str] = self.redactor.values  # for redaction only
        self._closers: list[Callable[[], None]] = []
        self._index: SearchIndex | None = None
        self.withhold_all = False
        self.sandbox_files: dict[str, str] = {}  # the workspace's files (an openapi document may be one)
        self._egress = None
        self.counter: LimitCounter | None = None
        self._runner: Programs | None = None
        self.wrote: list[str] = []  # what the step changed outside its sandbox so far (an `ask` refuses then)
        # What the step did that the lost-pod rule counts as a write (files, Bash, scripts, MCP, acting calls):
        # a step with none re-runs when its browser pod is lost; one with any fails naming them.
        # A consulted colleague's calls land in the delegating step's own list.
        self.pod_writes: list[str] = request.pod_writes if request.pod_writes is not None else []
        self.browser_image = ""  # set by the web tool as the step ends: "slim" (on the pod) or "full"
        self.pod_line = ""  # … and its browser pod line

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

    def script_env(self, runtime: Any) -> dict[str, str]:
        env: dict[str, str] = {}
        allow = runtime.test_mode_allow
        for name in runtime.secret_names:
            env[name] = self._value_for(name, allow=allow)
        if runtime.proxied and not (self.is_test and self.withhold_all):
            env.update(self._egress_env())
        if runtime.secret_names:
            given = [n for n in runtime.secret_names if env[n] != WITHHELD]
            self.host.trace(
                "secret",
                {
                    "tool": runtime.name,
                    "names": runtime.secret_names,
                    "materialised": given,
                    "withheld": [n for n in runtime.secret_names if n not in given],
                },
            )
        if self.is_test:
            env["FOLDRUN_TEST_MODE"] = "1"
        return env

    def _egress_env(self) -> dict[str, str]:
        """FOLDRUN_EGRESS for a proxied script: the host's egress proxy, started once per step (a program in its
        network namespace reaches it through its way out: `Programs.run_program` says where)."""
        if self._egress is None:
            names = [str(n) for n in (self.agent.meta.get("secrets") or [])]
            self._egress = self.host.egress(names)
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

    def files_may_have_changed(self, tool_name: str) -> None:
        """After a tool call: one that may write makes search_files' next query a stat pass first."""
        if self._index is not None and tool_name not in READ_ONLY_TOOLS:
            self._index.touch()

    # -- programs -------------------------------------------------------------
    def _programs(self) -> Programs:
        if self._runner is None:
            self._runner = Programs(
                self.sandbox.root,
                is_test=self.is_test,
                hide_under=self.request.hide_under,
                keep_visible=self.request.keep_visible,
                redact=self.redact,
                trace=self.host.trace,
                log=self.log,
                allow_private=self.allow_private_urls and self.request.programs_allow_private,
                fence_required=self.request.fence_required,
            )
            self.on_close(self._runner.close)
            # The platform's own Python environment too: a stdio MCP server or a program started as `python`
            # may be its interpreter, and on a test run an install under /tmp (a checkout's venv) would
            # otherwise vanish under the private /tmp, the command with it.
            self._runner.keep = [*self.request.keep_visible, str(self.venv_cache), sys.prefix]
        return self._runner

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
    ) -> str:
        """Run a program in the sandbox, in its own network namespace (programs.py)."""
        return self._programs().run_program(
            command,
            timeout=timeout,
            extra_env=extra_env,
            stdin=stdin,
            cwd=cwd,
            label=label,
            raise_on_error=raise_on_error,
        )

    def program_wrapper(self) -> tuple[list[str], dict[str, str]]:
        """(the argv prefix, its environment) that starts a program of this step in its own namespaces."""
        return self._programs().program_wrapper()
