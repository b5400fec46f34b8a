"""Run records: a Run, its Steps, each step's Tries and append-only trace,
Approvals for gates and questions, and the artifacts a run leaves.

A Run is created at the workspace's current revision (`changeset_number`) and
keeps the plan it was started with (`plan`: the flow's steps as parsed then),
so a push made while it runs never changes what it does. Steps are numbered
from 1 as in the flow file; an `each:` fan-out makes one Step row per item
(`instance` 0, 1, …) beside a parent row with `instance=None`.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import Account, Workspace
from foldrun.ids import public_id_field
from foldrun.leases import Leased


class RunKind(models.TextChoices):
    FLOW = "flow"
    ADHOC = "adhoc"
    EVAL = "eval"


class Trigger(models.TextChoices):
    SCHEDULE = "schedule"
    WEBHOOK = "webhook"
    MANUAL = "manual"
    API = "api"
    CLI = "cli"


class RunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting-approval"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


FINISHED_RUN_STATUSES = {RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED}


class Verdict(models.TextChoices):
    GOOD = "GOOD"
    BAD = "BAD"
    QUIET = "QUIET"
    BLOCKED = "BLOCKED"


class Run(models.Model):
    public_id = public_id_field("run")
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="runs")
    # Indexed by the (workspace, -created_at) index below, whose first column it is.
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="runs", db_index=False)
    kind = models.CharField(max_length=8, choices=RunKind.choices, default=RunKind.FLOW)
    # The flow's name, `adhoc:<agent>` or `eval:<name>`.
    name = models.CharField(max_length=200, db_index=True)
    trigger = models.CharField(max_length=10, choices=Trigger.choices, default=Trigger.MANUAL)
    status = models.CharField(max_length=20, choices=RunStatus.choices, default=RunStatus.QUEUED)  # indexed in Meta
    status_reason = models.CharField(max_length=500, blank=True, help_text="why it last changed status")
    verdict = models.CharField(max_length=8, choices=Verdict.choices, null=True, blank=True)
    headline = models.CharField(max_length=500, blank=True, help_text="the first line of the last reply")
    summary = models.TextField(blank=True)
    error = models.TextField(blank=True, help_text="the sentence saying why the run failed")
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal("0"))
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    budget_usd = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    # What calls in flight may still cost (runs/budget.py): counted with cost_usd against the caps.
    reserved_usd = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal("0"))
    is_test = models.BooleanField(default=False)
    # The library revision it ran: the workspace changeset number (and row).
    changeset = models.ForeignKey(
        "library.Changeset", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    changeset_number = models.PositiveIntegerField(default=0)
    inputs = models.JSONField(default=dict, blank=True)
    plan = models.JSONField(default=list, blank=True, help_text="the steps as parsed when the run started")
    # An inbound webhook's X-Foldrun-Delivery id: a repeat within a day starts nothing.
    # Looked up with its workspace and flow: the unique constraint below is its index.
    delivery_id = models.CharField(max_length=100, blank=True)
    # The UTC day it arrived: with the flow and the delivery id, unique (one run per delivery, per flow, per day).
    delivery_day = models.DateField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    sla_notified_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        # Every index is written on each insert, and on each update that changes an indexed column (a run's and a
        # step's status do, twice a step): none repeats another's first column, and a status is indexed plainly,
        # without the LIKE companion Django adds for db_index on text.
        indexes = [
            models.Index(fields=["workspace", "-created_at"]),
            models.Index(fields=["status"], name="runs_run_status_idx"),
        ]
        constraints = [
            # Twelve simultaneous POSTs with one X-Foldrun-Delivery start one run: the database decides.
            models.UniqueConstraint(
                fields=["workspace", "name", "delivery_id", "delivery_day"],
                condition=~models.Q(delivery_id=""),
                name="one_run_per_delivery_per_flow_per_day",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.public_id} {self.name} {self.status}"

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_RUN_STATUSES


class StepStatus(models.TextChoices):
    PENDING = "pending"
    QUEUED = "queued"
    RUNNING = "running"
    AWAITING_APPROVAL = "awaiting-approval"
    WAITING = "waiting"
    COMPLETED = "completed"
    FAILED = "failed"
    SKIPPED = "skipped"
    CANCELLED = "cancelled"


FINISHED_STEP_STATUSES = {StepStatus.COMPLETED, StepStatus.FAILED, StepStatus.SKIPPED, StepStatus.CANCELLED}


class Step(Leased):
    public_id = public_id_field("stp")
    # Indexed by one_step_per_index_instance, whose first column it is.
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="steps", db_index=False)
    index = models.PositiveIntegerField(help_text="the step's number in the flow, from 1")
    # None for a plain step or a fan-out's parent; 0, 1, … for each `each:` instance.
    instance = models.PositiveIntegerField(null=True, blank=True)
    item = models.TextField(blank=True, help_text="the `each:` item this instance works on")
    agent = models.CharField(max_length=100)
    task = models.TextField(blank=True)
    status = models.CharField(max_length=20, choices=StepStatus.choices, default=StepStatus.PENDING)  # indexed in Meta
    status_reason = models.CharField(max_length=500, blank=True, help_text="why it last changed status")
    attempt = models.PositiveIntegerField(default=0)
    output = models.TextField(blank=True)
    error = models.TextField(blank=True, help_text="one line saying why the step failed")
    approvers = models.JSONField(default=list, blank=True)
    wait_event = models.CharField(max_length=100, blank=True)
    event_received_at = models.DateTimeField(null=True, blank=True)
    event_payload = models.JSONField(null=True, blank=True)
    # What the step changed outside its sandbox so far (tool names, paths):
    # a step that wrote is never re-run after a worker loss.
    wrote = models.JSONField(default=list, blank=True)
    limits_line = models.CharField(max_length=1000, blank=True)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal("0"))
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    # lease_holder, lease_until (Leased): the running try's lease, renewed by its heartbeat; expired, the
    # recovery sweep acts. A second delivery of the step's message finds the lease live and is dropped.
    # A step's holder is only ever asked of a step found by its key: unlike a delivery's, not indexed.
    lease_holder = models.CharField(max_length=64, blank=True)
    # When the step's message was last sent: a step queued long ago whose message a dead worker took with it
    # (the embedded broker keeps unacknowledged messages only in memory) is sent again by the sweep.
    queued_at = models.DateTimeField(null=True, blank=True, db_index=True)
    # Tries lost with their worker and run again: part of the attempt, not a `retry:`.
    lost_reruns = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["index", "instance", "pk"]
        indexes = [models.Index(fields=["status"], name="runs_step_status_idx")]  # see Run.Meta
        constraints = [
            models.UniqueConstraint(fields=["run", "index", "instance"], name="one_step_per_index_instance"),
            models.UniqueConstraint(
                fields=["run", "index"], condition=models.Q(instance__isnull=True), name="one_parent_step_per_index"
            ),
        ]

    def __str__(self) -> str:
        suffix = f"[{self.instance}]" if self.instance is not None else ""
        return f"{self.run.public_id} step {self.index}{suffix} {self.status}"

    @property
    def label(self) -> str:
        return f"{self.index}" if self.instance is None else f"{self.index}.{self.instance + 1}"


class Try(models.Model):
    """One attempt at a step: `retry:` and a re-run after a worker loss add more."""

    # Indexed by one_try_number_per_step, whose first column it is.
    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="tries", db_index=False)
    n = models.PositiveIntegerField()
    status = models.CharField(max_length=20, default="running")
    status_reason = models.CharField(max_length=500, blank=True, help_text="why it last changed status")
    error = models.TextField(blank=True)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal("0"))
    tokens_in = models.PositiveBigIntegerField(default=0)
    tokens_out = models.PositiveBigIntegerField(default=0)
    seconds = models.FloatField(default=0)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Where it browsed: "slim" on the account's browser pod, "full" with a browser inside the step (the re-run
    # after a lost pod); blank when it did not browse. Its pod line: "3 reconnects; browser pod lost".
    image = models.CharField(max_length=10, blank=True)
    pod_line = models.CharField(max_length=300, blank=True)

    class Meta:
        verbose_name_plural = "tries"
        ordering = ["step", "n"]
        constraints = [models.UniqueConstraint(fields=["step", "n"], name="one_try_number_per_step")]

    def __str__(self) -> str:
        return f"try {self.n} of {self.step}"


class TraceKind(models.TextChoices):
    MODEL_REQUEST = "model_request"
    TOOL_CALL = "tool_call"
    TOOL_RESULT = "tool_result"
    REFUSAL = "refusal"
    LIMIT = "limit"
    SECRET = "secret"
    LOG = "log"


class TraceEvent(models.Model):
    """Append-only: rows are created, never updated or deleted (except with the run)."""

    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="trace")
    step = models.ForeignKey(Step, null=True, blank=True, on_delete=models.CASCADE, related_name="trace")
    try_n = models.PositiveIntegerField(default=0)
    kind = models.CharField(max_length=20, choices=TraceKind.choices)
    data = models.JSONField(default=dict, blank=True)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["pk"]

    def __str__(self) -> str:
        return f"{self.kind} at {self.at:%H:%M:%S}"


class ApprovalKind(models.TextChoices):
    GATE = "gate"
    ASK = "ask"


class ApprovalState(models.TextChoices):
    PENDING = "pending"
    APPROVED = "approved"
    REJECTED = "rejected"
    ANSWERED = "answered"


class Approval(models.Model):
    public_id = public_id_field("apr")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="approvals")
    step = models.ForeignKey(Step, on_delete=models.CASCADE, related_name="approvals")
    kind = models.CharField(max_length=8, choices=ApprovalKind.choices, default=ApprovalKind.GATE)
    state = models.CharField(max_length=10, choices=ApprovalState.choices, default=ApprovalState.PENDING)
    question = models.TextField(blank=True)
    answer = models.TextField(blank=True)
    approvers = models.JSONField(default=list, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # Who decided, as shown: an email, or "link" for a link mailed to nobody in particular.
    decided_by_label = models.CharField(max_length=254, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "pk"]

    def __str__(self) -> str:
        return f"{self.public_id} {self.kind} {self.state}"


class Artifact(models.Model):
    """A file a run left in its `outputs/`."""

    public_id = public_id_field("art")
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="artifacts")
    step = models.ForeignKey(Step, null=True, blank=True, on_delete=models.SET_NULL, related_name="artifacts")
    path = models.CharField(max_length=500)
    content = models.BinaryField(default=b"")
    size = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["path", "pk"]

    def __str__(self) -> str:
        return f"{self.run.public_id}:{self.path}"


class Schedule(models.Model):
    """A flow's `schedule:`, mirrored from its file so beat can find what is due.

    Refreshed from the workspace's head files on every beat tick; a flow whose
    file lost its schedule is removed.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="schedules")
    flow = models.CharField(max_length=100)
    cron = models.CharField(max_length=100)
    timezone = models.CharField(max_length=64, default="UTC")
    next_fire_at = models.DateTimeField(null=True, blank=True)
    last_fired_at = models.DateTimeField(null=True, blank=True)
    quarantined_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["flow"]
        constraints = [models.UniqueConstraint(fields=["workspace", "flow"], name="one_schedule_per_flow")]

    def __str__(self) -> str:
        return f"{self.workspace} {self.flow} {self.cron}"


class HookReceipt(models.Model):
    """A signed inbound webhook that started a run, by its replay key (runs.hook_signing): the same signed
    request again — within its timestamp's window, or, for a signature over the body alone, at any time —
    finds its key here and starts nothing. Kept as long as the run it started."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    flow = models.CharField(max_length=100)
    key = models.CharField(max_length=80)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+", null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "flow", "key"], name="one_receipt_per_key")]

    def __str__(self) -> str:
        return f"{self.workspace} {self.flow} {self.key[:16]}"


class IdempotencyKey(models.Model):
    """A start made with an `Idempotency-Key` (`POST …/runs`, MCP run_task; runs/idempotency.py): for a day the same
    key and the same request answer what it started, and the key with another request is refused. Unique per
    workspace, so two simultaneous requests with one key start one thing — the database decides, the second
    insert waiting for the first's transaction. A key older than a day is free again (pruned by the chores)."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=255)
    # sha256 of what was asked (the endpoint and its canonical JSON body): the same key with another is a 422.
    request_hash = models.CharField(max_length=64)
    run = models.ForeignKey(Run, on_delete=models.CASCADE, related_name="+", null=True, blank=True)
    task = models.ForeignKey("browsing.Task", on_delete=models.CASCADE, related_name="+", null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)  # the chores prune by it

    class Meta:
        constraints = [models.UniqueConstraint(fields=["workspace", "key"], name="one_start_per_idempotency_key")]

    def __str__(self) -> str:
        return f"{self.workspace} {self.key[:40]}"


class ScratchFile(models.Model):
    """A file a Tool Test of `tool` left in its sandbox's state/ or outputs/, laid out again for the next Tool
    Test of that tool in the workspace (runs/scratch.py): a second monitor call sees its first look, a crawl
    carries on, a screenshot can be downloaded. Never part of the workspace's files."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    tool = models.CharField(max_length=200)
    path = models.CharField(max_length=500)
    content = models.BinaryField(default=b"")
    size = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["tool", "path"]
        constraints = [models.UniqueConstraint(fields=["workspace", "tool", "path"], name="one_scratch_file_per_path")]

    def __str__(self) -> str:
        return f"{self.workspace} {self.tool}:{self.path}"
