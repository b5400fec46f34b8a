"""Running a step: `execute_step(step_pk)` takes the step once with a lease (foldrun/leases.py: a random
holder id and an expiry, renewed by a heartbeat), runs the engine outside any transaction, and saves what it
returned only if it still holds the lease. A message for a step already running is dropped; a step whose
lease ran out was lost with its worker, and the recovery sweep (runs/lifecycle/recover.py) re-runs it when it had only
read and fails it naming what it wrote when it had written — never sent twice. `run_steps_from` runs a chain
of them in one task (runs/lifecycle/chain.py).
"""

from __future__ import annotations

import functools
import json
import logging
import os
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from foldrun import net
from foldrun import incidents, leases
from foldrun.engine import StepRequest, run_step

from .chain import Chain, Next, Taken
from .claim import claim
from ..desks import desk_at, flow_meta, run_inputs
from .. import live_view
from ..host import DbHost
from ..models import Approval, ApprovalKind, ApprovalState, Run, Schedule, Step, StepStatus, Try
from .advance import spec_of
from .settle import settle_failure, settle_result
from .states import end_try

log = logging.getLogger(__name__)


def run_steps_from(step_pk: int) -> str:
    """Run the step, then, in this same task, each step its run moves to next while nothing parks, fans out or
    waits (the `runs.run_step` task). Returns the words of each for the task log.

    Each step's end returns what this task runs next (`Next`): a step taken there and then, in that step's
    closing transaction (the run's lock is held) — no second claim transaction, no queue hop — or the key of a
    step it left queued for this task. If this worker dies before running it, its lease runs out (or its
    queued time does) and the sweep acts on it like any lost work."""
    words: list[str] = []
    chain = Chain()
    nxt: Next = step_pk
    while nxt is not None:
        chain.run = None
        if isinstance(nxt, Taken):
            word, nxt = _run_claimed(nxt.run, nxt.step, nxt.attempt, nxt.holder, chain)
        else:
            word, nxt = _claim_and_run(nxt, chain)
        words.append(word)
    return "; ".join(words)


def execute_step(step_pk: int) -> str:
    """Run one step (or `each:` instance) once, on its own: what its run moves to next is sent as a message.
    Returns a word for the task log."""
    return _claim_and_run(step_pk, Chain(takes_next=False))[0]


def _claim_and_run(step_pk: int, chain: Chain) -> tuple[str, Next]:
    """Take the step with a lease (a random holder id, an expiry) and run it, held by a heartbeat while the
    engine runs (runs/lifecycle/claim.py). A message for a step already running is dropped: its lease is live
    (another worker, on any host, is running it), or it ran out and the recovery sweep decides (re-run or fail).
    """
    holder = leases.new_holder()
    claimed = claim(step_pk, holder)
    if isinstance(claimed, str):
        return claimed, None
    run, step, attempt, rows = claimed
    chain.parents, chain.parents_of = {s.index: s for s in rows if s.instance is None}, run.pk
    if run.vault_empty:
        # The account has no secret at all (asked in the claim's query): a name the step looks up — a local
        # model's optional key — is answered "none" without a query of its own, as a held answer is.
        chain.held.note_empty(run.account_id)
    return _run_claimed(run, step, attempt, holder, chain)


def _run_claimed(run: Run, step: Step, attempt: Try, holder: str, chain: Chain) -> tuple[str, Next]:
    try:
        return _execute_claimed(run, step, attempt, holder, chain)
    except Exception:  # noqa: BLE001 - never leave a claimed step running: fail it with a sentence
        chain.ending = None  # the closing transaction rolled back: nothing it took for this task stands
        code = incidents.record(log, "step %s of %s stopped on an internal error", step.label, run.public_id)
        with transaction.atomic():
            run = Run.objects.select_for_update().get(pk=run.pk)
            step = Step.objects.select_for_update().get(pk=step.pk)
            if step.lease_holder != holder or step.status != StepStatus.RUNNING:
                return "lease lost", None
            end_try(
                attempt.pk,
                "failed",
                "an internal error",
                finished_at=timezone.now(),
                error=f"internal error (incident {code})",
            )
            # No chain here: what the run moves to next is sent as a message, to a task that starts afresh.
            settle_failure(run, step, incidents.sentence("the step", code), retry_allowed=False)
        return "internal error", None


@functools.cache
def sandbox_base() -> str | None:
    """Sandboxes on tmpfs when the machine has one: creating and removing them is then cheap. Asked once per
    process (every step asked it, through pathlib, for an answer that does not change)."""
    shm = Path("/dev/shm")
    return str(shm) if shm.is_dir() and os.access(shm, os.W_OK) else None


_LIVE_ROOTS: dict[str, str] = {}


def _make_live_root() -> None:
    """The live frames' folder, there before the step's programs start (see _execute_claimed): looked for with
    one stat, and made when missing — it may have been removed since the step before (an operator's clean-up)."""
    data = str(settings.DATA_DIR)
    root = _LIVE_ROOTS.get(data)
    if root is None:
        root = _LIVE_ROOTS[data] = str(live_view.root())
    if not os.path.isdir(root):
        os.makedirs(root, exist_ok=True)


def _execute_claimed(run: Run, step: Step, attempt: Try, holder: str, chain: Chain) -> tuple[str, Next]:
    spec = spec_of(run, step)
    # A step continued in the same task reads the same revision as the one before it: its desk is in hand.
    if chain.desk is not None and chain.desk[0] == run.pk:
        desk = chain.desk[1]
    else:
        desk = desk_at(
            run.workspace,
            run.changeset_number,
            changeset=run.changeset,
            library_head=getattr(run, "library_head", None),
        )
        chain.desk = (run.pk, desk)
    answer = None
    # An answer exists only for a step that parked on a question: `ask:` before its first try, or a question
    # the model asked on an earlier try — a first try without `ask:` has none to look for.
    if spec.get("ask") or step.attempt > 1:
        # The flow's `ask:` is answered on the parent row; an instance's own `ask` tool on the instance.
        answer = (
            Approval.objects.filter(
                Q(step=step) | Q(step__run=run, step__index=step.index, step__instance__isnull=True),
                kind=ApprovalKind.ASK,
                state=ApprovalState.ANSWERED,
            )
            .order_by("-decided_at")
            .values_list("answer", flat=True)
            .first()
        )
    task = step.task
    if step.event_received_at is not None and step.event_payload not in (None, {}, ""):
        task += f"\n\nThe event {spec.get('wait_event')} arrived with: {json.dumps(step.event_payload, ensure_ascii=False)[:4000]}"
    browser = flow_meta(run).get("browser") or {}
    # The live frames' folder exists before the step's programs start, so it is among the data folder's entries
    # hidden from them (an entry made later would be the real folder, theirs to write into).
    _make_live_root()
    request = StepRequest(
        run_id=run.public_id,
        label=step.label,
        agent=step.agent,
        task=task,
        limits=spec.get("limits") or {},
        is_test=run.is_test,
        answer=answer,
        inputs=run_inputs(run),
        # A browser agent's task: its session's decision on private addresses too (the stricter one wins).
        allow_private_urls=net.allows_private() and browser.get("private", True) is not False,
        programs_allow_private=settings.FOLDRUN_PROGRAMS_ALLOW_PRIVATE_URLS,
        venv_cache=Path(settings.DATA_DIR) / "venvs",
        sandbox_base=sandbox_base(),
        timezone=flow_meta(run).get("timezone"),
        # The install's data (database file, broker, keys) is out of a program's sight; its venvs are not.
        hide_under=[str(settings.DATA_DIR)],
        keep_visible=[str(Path(settings.DATA_DIR) / "venvs")],
        tenant=run.workspace.account.public_id,  # loaded by desk_at: no extra query
        search_engine_url=run.workspace.account.search_engine_url,
        # A browser agent's task browses in its session's browser (browsing puts the endpoint in the run's copy
        # of its settings; it never shows among the run's inputs).
        browser_cdp=str(browser.get("cdp") or ""),
        browser_allow_hosts=[str(h) for h in browser.get("allow_hosts") or []],
        # The re-run of a step whose browser pod was lost browses with a browser inside the step.
        browser_pod=not (step.lost_reruns and _pod_was_lost(step)),
    )
    beat = leases.Heartbeat(Step, step.pk, holder)
    host = DbHost(run, step, attempt, lease=beat, held=chain.held)
    started = time.monotonic()
    try:
        with beat:
            result = run_step(desk, request, host)
    except BaseException:  # a revoke or shutdown too: what the step traced is kept; raised again
        if not beat.lost:
            host.flush()  # what the step traced before it broke is kept
        raise
    finally:
        host.close()
    seconds = time.monotonic() - started
    ended = (result, spec, desk, seconds)
    with transaction.atomic():
        # The run's lock, and in the same query the lease check: the step is still this try's. Every change
        # to a running step's holder or status is made under the run's lock (the sweep's too), so holding it
        # the step stays ours; the step in hand is current (what else changed on it while it ran — its
        # lease's expiry, the writes it noted — it changed itself). Joined: the end of the run (its
        # notifications) reads the workspace and account.
        # Whether a schedule of the flow is quarantined rides on it too: a success forgets a quarantine
        # (runs/lifecycle/finish.py: _finish), and the common case, none, then costs no query of its own.
        before, run = run, _closing(run.pk, step.pk, holder).first()
        if run is None:
            # Another holder (the sweep) took the step while this one could not renew: commit nothing.
            return "lease lost", None
        # A run's plan and inputs are written once, at its start: the closing query leaves them out (their JSON,
        # parsed again on every step, was the larger part of making its row) and they are taken from the run in hand.
        run.plan, run.inputs = before.plan, before.inputs
        chain.run = run  # the run's next step may be taken in this transaction (see run_steps_from)
        # Whether the account is metered, as read in this transaction (joined above): a run that ends here on an
        # unmetered account is charged nothing, and the charge after commit need not lock the account to see so.
        run.metered = run.workspace.account.credits_usd is not None
        host.flush()  # the trace lines the step still holds, in this transaction
        word, nxt = settle_result(run, step, attempt, *ended, chain)
        chain.end_held_try()
        return word, nxt


def _closing(run: int, step: int, holder: str):
    """The run, locked, only while `step` is still running under `holder`'s lease (else no row)."""
    return (
        Run.objects.select_for_update(of=("self",))
        .select_related("workspace__account")
        .defer("plan", "inputs")
        .annotate(
            quarantined=Exists(
                Schedule.objects.filter(
                    workspace_id=OuterRef("workspace_id"), flow=OuterRef("name"), quarantined_at__isnull=False
                )
            )
        )
        .filter(pk=run, steps__pk=step, steps__lease_holder=holder, steps__status=StepStatus.RUNNING)
        .order_by("pk")
    )


def _pod_was_lost(step: Step) -> bool:
    """Whether the step's last try ended with its browser pod lost (asked only of a step re-run after a loss)."""
    return Try.objects.filter(step=step, n=step.attempt - 1, status="lost", image="slim").exists()
