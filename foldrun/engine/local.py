"""A Host with no server: traces in memory, secrets from a mapping (the laptop
vault), the model reached through the providers client. `foldrun run --local`
and the engine's own tests use it."""

from __future__ import annotations

from decimal import Decimal
from typing import Any, Callable

from foldrun.providers.client import ModelClient, supply_from_block
from foldrun.providers.supply import MissingSecret as MissingProviderKey

from .cost import response_cost
from .errors import BudgetExceeded, MissingSecret, StepFailed, ToolError
from .httpclient import shared_http


class LocalHost:
    def __init__(
        self,
        secrets: dict[str, str] | None = None,
        *,
        store: str = "laptop vault",
        budget: Decimal | None = None,
        spent: Decimal = Decimal("0"),
        on_trace: Callable[[str, dict], None] | None = None,
        runs: list[dict] | None = None,
        label: str = "",
    ) -> None:
        self.secrets = dict(secrets or {})
        self.store = store
        self.events: list[tuple[str, dict]] = []
        self.budget = budget
        self.spent = spent
        self.reserved = Decimal("0")  # what calls in flight may still cost
        self.on_trace = on_trace
        self.runs = runs or []
        self.label = label
        self.writes: list[str] = []
        self.clients: list[ModelClient] = []

    def trace(self, kind: str, data: dict) -> None:
        self.events.append((kind, data))
        if self.on_trace:
            self.on_trace(kind, data)

    def resolve_secrets(self, names: list[str]) -> dict[str, tuple[str, str]]:
        found: dict[str, tuple[str, str]] = {}
        for name in names:
            if name not in self.secrets:
                raise MissingSecret(name)
            found[name] = (self.secrets[name], self.store)
        return found

    def model_client(self, provider: dict, timezone: str = "UTC") -> Any:
        try:
            supply = supply_from_block(provider or {"name": "anthropic"}, self.secrets.get)
        except MissingProviderKey as exc:
            # The line says where the key goes, so the next command is the fix.
            fix = f" — foldrun secrets set {exc.name} --local" if self.store == "laptop vault" else ""
            raise StepFailed(f"the provider key {exc.name} is not in the {self.store}{fix}") from None
        client = ModelClient(
            supply, http=shared_http(), timezone=timezone, on_line=lambda line: self.trace("refusal", {"line": line})
        )
        self.clients.append(client)
        return client

    def charge(self, response: dict, provider: dict, reserved: Decimal = Decimal("0")) -> Decimal:
        cost = response_cost(response, provider)
        self.spent += cost
        self.reserved -= reserved
        return cost

    def reserve(self, amount: Decimal, minimum: Decimal, windows: Any = None) -> Decimal:
        """As the server's reservation (runs/budget.py), for `foldrun run --local`'s one process."""
        if self.budget is None:
            return amount
        left = self.budget - self.spent - self.reserved
        if left <= 0 or left < minimum:
            raise BudgetExceeded(
                f"budget reached: the run spent ${self.spent + self.reserved:.4f} of its "
                f"${self.budget:.2f} budget at {self.label or 'this step'}; no further model "
                f"or paid call was made"
            )
        grant = min(amount, left)
        self.reserved += grant
        return grant

    def release(self, amount: Decimal) -> None:
        self.reserved -= amount

    def check_budget(self) -> None:
        if self.budget is not None and self.spent >= self.budget:
            raise BudgetExceeded(
                f"budget reached: the run spent ${self.spent:.4f} of its ${self.budget:.2f} "
                f"budget at {self.label or 'this step'}; no further model call was made"
            )

    def before_write(self, what: str) -> None:
        self.writes.append(what)

    def recall_runs(self, limit: int) -> list[dict]:
        return self.runs[:limit]

    def read_run(self, run_id: str) -> dict | None:
        return next((r for r in self.runs if r.get("id") == run_id), None)

    @property
    def kept_seeds(self) -> None:
        return None  # on a laptop a kept profile's file under state/ says what seeded it

    def session_action(self) -> None:
        return None  # a laptop run drives no browser session

    def live_frames(self) -> None:
        return None  # nothing shows a laptop step's browser live: no screencast

    def egress(self, names: list[str]) -> None:
        """No egress proxy on the user's own machine: a proxied program reaches its hosts directly."""
        return None

    def consult(
        self, desk: str, agent: str, question: str, *, counter: Any = None, pod_writes: list[str] | None = None
    ) -> str:
        raise ToolError("desks: consulting another desk needs a server run")
