"""Server glue for the Tool Test button: the engine's `test_tool` with a host
whose secrets come from the vault and whose trace is returned, not stored."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Any

from django.conf import settings

from accounts.models import Workspace
from browsing.kept import KeptSeeds
from foldrun import net
from foldrun.api import ApiError
from foldrun.engine.errors import ToolError
from foldrun.engine.resolve import ResolveError
from foldrun.engine.step import StepRequest
from foldrun.engine.tooltest import test_tool

from .desks import desk_at
from .host import require_secrets
from .scratch import Scratch


class TestHost:
    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self.events: list[dict] = []
        self.kept_seeds = KeptSeeds(workspace)  # what seeded its kept vendor profiles, as a run's host has it

    def trace(self, kind: str, data: dict) -> None:
        self.events.append({"kind": kind, "data": data})

    def resolve_secrets(self, names: list[str]) -> dict[str, tuple[str, str]]:
        return require_secrets(self.workspace, names)

    def before_write(self, what: str) -> None:
        self.events.append({"kind": "log", "data": {"message": f"about to write: {what}"}})

    def check_budget(self) -> None:
        return None

    def recall_runs(self, limit: int) -> list[dict]:
        return []

    def read_run(self, run_id: str) -> dict | None:
        return None

    def charge(self, response: dict, provider: dict, reserved: Decimal = Decimal("0")) -> Decimal:
        return Decimal("0")  # a tool test makes no model call, and spends nothing of a run

    def reserve(self, amount: Decimal, minimum: Decimal, windows: Any = None) -> Decimal:
        return amount  # no run, no cap

    def release(self, amount: Decimal) -> None:
        return None

    def model_client(self, provider: dict, timezone: str = "UTC") -> Any:
        raise ToolError("a tool test makes no model call")

    def session_action(self) -> None:
        return None  # a tool test drives no browser session

    def live_frames(self) -> None:
        return None  # nothing shows a tool test's browser live

    def egress(self, names: list[str]) -> None:
        return None  # a tool test runs no proxied program through an egress proxy

    def consult(
        self, desk: str, agent: str, question: str, *, counter: Any = None, pod_writes: list[str] | None = None
    ) -> str:
        raise ToolError("desks: consulting another desk needs a server run")


def run_tool_test(
    workspace: Workspace,
    tool: str,
    arguments: dict,
    *,
    agent: str | None = None,
    operation: str | None = None,
    is_test: bool = False,
) -> dict:
    desk = desk_at(workspace, None)
    host = TestHost(workspace)
    request = StepRequest(
        run_id="tool-test",
        label="tool test",
        agent=agent or "tool-test",
        task="",
        is_test=is_test,
        allow_private_urls=net.allows_private(),
        programs_allow_private=settings.FOLDRUN_PROGRAMS_ALLOW_PRIVATE_URLS,
        venv_cache=Path(settings.DATA_DIR) / "venvs",
        search_engine_url=workspace.account.search_engine_url,
        tenant=workspace.account.public_id,
    )
    try:
        answer = test_tool(
            desk, tool, arguments, host, request, agent=agent, operation=operation, scratch=Scratch(workspace, tool)
        )
    except ResolveError as exc:
        where = {"where": workspace.name} if exc.details else {}
        raise ApiError(str(exc), code="not_found", status_code=404, details=exc.details | where) from None
    answer["trace"] = host.events
    return answer
