"""The engine's Host on the server: traces as rows, secrets from the vault,
spend on the run row, "about to write" noted durably on the step."""

from __future__ import annotations

import time
from decimal import Decimal
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from foldrun import net
from foldrun.engine.cost import response_cost, usage_of
from accounts.models import Workspace
from foldrun.engine.step import BudgetExceeded, MissingSecret, StepFailed, StepRequest, run_step, shared_http
from foldrun.engine.tools.base import ToolError
from foldrun.providers.client import (
    MissingSecret as ProviderMissingSecret,
    ModelClient,
    ProviderConfigError,
    supply_from_block,
)

from browsing.ending import touch_public
from browsing.kept import KeptSeeds
from foldrun.leases import Heartbeat, LeaseLost
from vault.actions import egress_grants, resolve_secrets
from vault.models import SecretKind
from vault.boundary import EgressProxy

from . import budget, live_view
from .desks import desk_at, flow_meta
from .models import Run, Step, TraceEvent, Try


def vault_lookup(workspace, names: list[str]) -> dict[str, tuple[str, str]]:
    """name -> (value, store) from the vault, nearest wins (workspace, then account).

    A name in neither store (or one that cannot be decrypted or refreshed) is absent;
    `require_secrets` says which and why.
    """
    return require_secrets(workspace, names, strict=False)


def require_secrets(
    workspace, names: list[str], *, strict: bool = True, held: "HeldSecrets | None" = None
) -> dict[str, tuple[str, str]]:
    """name -> (value, store) for every name, nearest wins. Raises MissingSecret(name) for one in neither
    vault, and MissingSecret(name, reason=<the vault's sentence>) for one it holds but could not produce
    (sealed under a key no longer configured, an OAuth refresh the token endpoint refused) — never read
    as "not in the vault". `held`: values the steps before this one in the same task read (see HeldSecrets)."""
    if not names:
        return {}
    kept = held.get(workspace, names) if held is not None else None
    if kept is None:
        found = resolve_secrets(workspace, list(names))
        if held is not None:
            held.keep(workspace, names, found)
        kept = {
            name: (found[name].value, f"{found[name].scope} vault") if name in found else None
            for name in names
            if name not in found.failed
        }
        failed = found.failed
    else:
        failed = {}
    if strict:
        for name in names:
            if name in failed:
                raise MissingSecret(name, reason=failed[name])
            if kept.get(name) is None:
                raise MissingSecret(name)
    return {name: value for name, value in kept.items() if value is not None}


class HeldSecrets:
    """Vault values one run's steps read, kept while the same worker task goes on to the run's next step.

    A chain of steps run one after another in one task (runs/lifecycle: run_steps_from) reads its provider key
    once, not once per step. What the vault said of a name (its value, or that it holds none) is kept for at
    most HOLD_SECONDS, so a secret added, changed or deleted in the vault reaches the next step after that at
    the latest; an OAuth2 access token is never kept (the vault refreshes it near its expiry), nor a name
    whose value could not be produced.
    """

    HOLD_SECONDS = 60.0

    def __init__(self) -> None:
        self._kept: dict[tuple[int, str], tuple[tuple[str, str] | None, float]] = {}
        self._empty: dict[int, float] = {}  # account pk -> when its vault was seen holding no secret at all

    def note_empty(self, account_pk: int) -> None:
        """The account's vault (its own and every workspace's) held no secret when the step was claimed: every
        name is "none" for as long as a kept answer would be."""
        self._empty[account_pk] = time.monotonic()

    def get(self, workspace, names: list[str]) -> dict[str, tuple[str, str] | None] | None:
        """name -> (value, store), or None for a name in neither vault, when every name is kept and fresh;
        else None (the vault is asked)."""
        now = time.monotonic()
        out: dict[str, tuple[str, str] | None] = {}
        empty = self._empty.get(workspace.account_id)
        for name in names:
            kept = self._kept.get((workspace.pk, name))
            if kept is None and empty is not None and now - empty <= self.HOLD_SECONDS:
                kept = (None, empty)
            if kept is None or now - kept[1] > self.HOLD_SECONDS:
                return None
            out[name] = kept[0]
        return out

    def keep(self, workspace, names: list[str], found) -> None:
        now = time.monotonic()
        for name in names:
            item = found.get(name)
            if item is None and name not in found.failed:
                self._kept[(workspace.pk, name)] = (None, now)
            elif item is not None and item.kind != SecretKind.OAUTH2:
                self._kept[(workspace.pk, name)] = ((item.value, f"{item.scope} vault"), now)


# A trace line waits at most this long in memory before it is written (it is written sooner at every wait).
TRACE_HOLD_SECONDS = 1.0


class DbHost:
    def __init__(
        self, run: Run, step: Step, attempt: Try, *, lease: Heartbeat | None = None, held: HeldSecrets | None = None
    ) -> None:
        self.run = run
        self.step = step
        self.attempt = attempt
        # The try's lease: checked before every model request, paid call and write, so a holder that lost it
        # stops at its next call and never writes (the sweep may be running the step again elsewhere).
        self.lease = lease
        self.clients: list[ModelClient] = []
        self._pending: list[TraceEvent] = []
        self._pending_since = 0.0
        self.held = held
        self._waits = 0

    def trace(self, kind: str, data: dict) -> None:
        """Trace lines are written together, in order, whenever the step is about to wait on the outside
        world — before each model request or paid call (`check_budget`) after its first, before a tool runs
        (its `tool_call` line), before a write is noted — and when the step ends, in its closing transaction
        with its rows: one INSERT each time instead of one per line, and the trace of a step in progress is
        as current as it was, up to the call it is waiting on. The lines before a step's first model request
        (its limits, the secrets it read) wait for the next of these: a step of one instant model call writes
        its whole trace once, with its result."""
        if not self._pending:
            self._pending_since = time.monotonic()
        self._pending.append(
            TraceEvent(run_id=self.run.pk, step_id=self.step.pk, try_n=self.attempt.n, kind=kind, data=data)
        )
        if kind == "tool_call" or time.monotonic() - self._pending_since > TRACE_HOLD_SECONDS:
            self.flush()

    @property
    def held_lines(self) -> list[TraceEvent]:
        """The trace lines not written yet — the list itself, so what is put back in it is written by `flush`."""
        return self._pending

    def flush(self) -> None:
        """Write the held trace lines. The step's last ones are written inside its closing transaction."""
        if not self._pending:
            return
        if len(self._pending) > 2 or not connection.get_autocommit():
            TraceEvent.objects.bulk_create(self._pending)  # one INSERT
        else:
            for event in self._pending:
                event.save(force_insert=True)
        del self._pending[:]  # the same list: a consulted colleague's lines share it

    def resolve_secrets(self, names: list[str]) -> dict[str, tuple[str, str]]:
        return require_secrets(self.run.workspace, names, held=self.held)

    def model_client(self, provider: dict, timezone: str = "UTC") -> Any:
        stores: dict[str, str] = {}

        def lookup(name: str) -> str | None:
            try:
                found = require_secrets(self.run.workspace, [name], held=self.held)
            except MissingSecret as exc:
                if exc.reason is None:
                    return None
                # Held but not producible: say why, and never send the request with no key.
                self.trace("secret", {"name": name, "store": None, "error": "unavailable", "for": "provider"})
                raise StepFailed(exc.reason) from None
            stores[name] = found[name][1]
            return found[name][0]

        try:
            supply = supply_from_block(provider or {"name": "anthropic"}, lookup)
        except ProviderMissingSecret as exc:
            self.trace("secret", {"name": exc.name, "store": None, "error": "missing"})
            raise StepFailed(
                f"secret {exc.name} is not in the vault (neither the workspace's nor the account's)"
            ) from None
        except ProviderConfigError as exc:
            raise StepFailed(str(exc)) from None
        for name, store in stores.items():
            self.trace("secret", {"name": name, "store": store, "for": "provider"})
        client = ModelClient(
            supply, http=shared_http(), timezone=timezone, on_line=lambda line: self.trace("refusal", {"line": line})
        )
        self.clients.append(client)
        return client

    def charge(self, response: dict, provider: dict, reserved: Decimal = Decimal("0")) -> Decimal:
        cost = response_cost(response, provider)
        used = usage_of(response)
        tokens_in, tokens_out = used.prompt, used.output  # input: cache reads and writes counted too
        # The run's spend is saved at once (fan-out instances charge the same run together), replacing the
        # call's reservation, and with it the try's spend so far (a try lost with its worker keeps its cost on
        # the record) — one transaction; the step's totals are written when it ends.
        budget.settle(
            self.run,
            reserved,
            cost,
            tokens_in,
            tokens_out,
            attempt_pk=self.attempt.pk,
            seconds=(timezone.now() - self.attempt.started_at).total_seconds(),
        )
        return cost

    def check_budget(self) -> None:
        if self.lease is not None:
            self.lease.check()  # LeaseLost: another holder has the step; no further call is made
        if self._waits:
            self.flush()  # right before a model request or paid call after the first: the step is about to wait
        self._waits += 1
        if self.run.budget_usd is None:
            return
        spent = Run.objects.filter(pk=self.run.pk).values_list("cost_usd", flat=True).first() or Decimal("0")
        if spent >= self.run.budget_usd:
            raise BudgetExceeded(
                f"budget reached: the run spent ${spent:.4f} of its ${self.run.budget_usd:.2f} budget at step "
                f"{self.step.label} ({self.step.agent}); no further model or paid call was made"
            )

    def reserve(self, amount: Decimal, minimum: Decimal, windows: dict | None = None) -> Decimal:
        """Reserve what a call can cost against the run's cap and the workspace's windows (runs/budget.py)."""
        return budget.reserve(
            self.run, amount, minimum, windows=windows, where=f"step {self.step.label} ({self.step.agent})"
        )

    def release(self, amount: Decimal) -> None:
        budget.release(self.run, amount)

    def before_write(self, what: str) -> None:
        # Saved at once, and only while this try holds the step's lease (under the row's lock, so the sweep
        # either sees the note and fails the step, or took the step first and this write never happens).
        if self.lease is not None:
            self.lease.check()
        self.flush()
        with transaction.atomic():
            where = {"lease_holder": self.lease.holder} if self.lease is not None else {}
            step = Step.objects.select_for_update().filter(pk=self.step.pk, **where).first()
            if step is None:
                raise LeaseLost(f"step {self.step.label} is no longer held by this try; the write was not made")
            step.wrote = list(step.wrote or []) + [what]
            step.save(update_fields=["wrote"])
        self.step.wrote = step.wrote  # the step in hand is saved whole when it ends

    def egress(self, names: list[str]):
        """The loopback egress proxy for `secrets: proxied` scripts: fills ${NAME} for the secret's own hosts. A
        program in its network namespace reaches it through the step's way out (foldrun/net/fence.py)."""
        grants, _found = egress_grants(self.run.workspace, names)
        # The install's policy (foldrun.net) decides at each connect.
        return EgressProxy(grants, on_line=lambda line: self.trace("log", {"message": line})).start()

    def consult(self, desk: str, agent: str, question: str, *, counter=None, pod_writes=None) -> str:
        """`desks`: run `agent` of another workspace of this account on `question`, inside this step.

        Its secrets come from that workspace's vault; its spend is this run's; its calls pass this
        step's limit counter; its trace lands on this step, marked with the colleague's name.
        """
        workspace = Workspace.objects.filter(account_id=self.run.account_id, name=desk).first()
        if workspace is None:
            raise ToolError(f"desks: there is no desk {desk} in this account")
        colleague = ColleagueHost(self, workspace, f"{desk}/{agent}")
        request = StepRequest(
            run_id=self.run.public_id,
            label=f"{self.step.label} → {desk}/{agent}",
            agent=agent,
            task=question,
            is_test=self.run.is_test,
            counter=counter,
            tenant=workspace.account.public_id,
            pod_writes=pod_writes,
            allow_private_urls=net.allows_private(),
            programs_allow_private=settings.FOLDRUN_PROGRAMS_ALLOW_PRIVATE_URLS,
        )
        result = run_step(desk_at(workspace, None), request, colleague)
        if result.status != "completed":
            raise ToolError(f"{desk}/{agent} could not answer: {result.error or result.status}")
        return result.output

    def recall_runs(self, limit: int) -> list[dict]:
        runs = (
            Run.objects.filter(workspace_id=self.run.workspace_id)
            .exclude(pk=self.run.pk)
            .order_by("-created_at")[: max(1, min(limit, 50))]
        )
        return [
            {
                "id": r.public_id,
                "name": r.name,
                "status": r.status,
                "verdict": r.verdict,
                "headline": r.headline,
                "finished_at": r.finished_at.isoformat() if r.finished_at else None,
            }
            for r in runs
        ]

    def read_run(self, run_id: str) -> dict | None:
        run = Run.objects.filter(workspace_id=self.run.workspace_id, public_id=run_id).first()
        if run is None:
            return None
        return {
            "id": run.public_id,
            "name": run.name,
            "status": run.status,
            "verdict": run.verdict,
            "headline": run.headline,
            "summary": run.summary,
            "steps": [
                {"step": s.label, "agent": s.agent, "status": s.status, "output": s.output[:4000], "error": s.error}
                for s in run.steps.all()
            ],
        }

    @property
    def kept_seeds(self) -> KeptSeeds:
        """What seeded the workspace's kept vendor profiles (the web tool's `vendor_session.keep`), in the
        database: the keep file under state/ is the workspace's, which its programs can write."""
        return KeptSeeds(self.run.workspace)

    def session_action(self) -> None:
        """A call of this step acted on its browser session (a task's browse): the session's idle clock starts
        again, as a caller's own action would start it (in the step's thread, where the ORM may run)."""
        public_id = (flow_meta(self.run).get("browser") or {}).get("session")
        if public_id:
            touch_public(str(public_id))

    def live_frame(self, kind: str, jpeg: bytes | None, url: str) -> None:
        """The step's browser as the Run page shows it (from the browser's thread: files, never the ORM). Only
        while this try holds the step's lease — the spec's frames cross the step's own egress lease, so a
        worker that lost the step (the sweep is running it again elsewhere) puts no frame on its panel; the
        lease's state is in memory, read without a query."""
        if self.run.is_test:
            return
        if self.lease is not None:
            try:
                self.lease.check()
            except LeaseLost:
                return
        live_view.write(self.step.public_id, kind, jpeg, url)

    def live_frames(self):
        """The Run page keeps the step's browser frames (`live_frame`)."""
        return self.live_frame

    def close(self) -> None:
        """Close the model clients. The caller flushes the trace (inside its closing transaction)."""
        for client in self.clients:
            client.close()


def now():
    return timezone.now()


class ColleagueHost(DbHost):
    """A consulted agent on another desk: that desk's vault, this run's spend, this step's trace."""

    def __init__(self, parent: DbHost, workspace, who: str) -> None:
        super().__init__(parent.run, parent.step, parent.attempt, lease=parent.lease, held=parent.held)
        self.workspace = workspace
        self.who = who
        self.clients = parent.clients
        self._pending = parent._pending  # one trace, in order, written by whichever flushes first

    def trace(self, kind: str, data: dict) -> None:
        super().trace(kind, {**data, "colleague": self.who})

    def resolve_secrets(self, names: list[str]) -> dict[str, tuple[str, str]]:
        return require_secrets(self.workspace, names, held=self.held)

    @property
    def kept_seeds(self) -> KeptSeeds:
        return KeptSeeds(self.workspace)  # the colleague's desk keeps its own vendor profiles

    def model_client(self, provider: dict, timezone: str = "UTC"):
        run_workspace = self.run.workspace
        try:
            self.run.workspace = self.workspace  # the provider key from the colleague's vault
            return super().model_client(provider, timezone=timezone)
        finally:
            self.run.workspace = run_workspace

    def consult(self, desk: str, agent: str, question: str, *, counter=None, pod_writes=None) -> str:
        raise ToolError("desks: a consulted colleague does not consult further")
