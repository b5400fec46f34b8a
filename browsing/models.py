"""A browser session: one Chromium of the account's pool, kept open across calls.

The row is the session's whole record. Its keeper (browsing/keeper.py) holds the
lease on it while the browser runs; the status moves only through
`browsing.states.move_session`, which records why.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from accounts.models import Account, Workspace
from foldrun.ids import public_id_field
from foldrun.leases import Leased

SESSION_PREFIX = "sess_us"


class SessionStatus(models.TextChoices):
    STARTING = "starting", "starting"
    LIVE = "live", "live"
    CLOSED = "closed", "closed"


class EndReason(models.TextChoices):
    """Why a session closed, as a code (the sentence is in `status_reason`)."""

    STOPPED = "stopped", "stopped by a caller"
    IDLE = "idle_timeout", "idle past idleTimeoutMs"
    MAX_DURATION = "max_duration", "open past maxDurationMs"
    KEEPER_LOST = "keeper_lost", "its keeper was lost"
    BROWSER_EXITED = "browser_exited", "the browser exited"
    NAVIGATION_BLOCKED = "navigation_blocked", "the start URL is blocked"
    START_FAILED = "start_failed", "the browser did not start"
    CAPACITY_TIMEOUT = "capacity_timeout", "no browser became free in time"
    CAPACITY_EXCEEDED = "capacity_exceeded", "every browser was busy"


class BrowserSession(Leased):
    public_id = public_id_field(SESSION_PREFIX, 24)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="browser_sessions")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    status = models.CharField(
        max_length=16, choices=SessionStatus.choices, default=SessionStatus.STARTING, db_index=True
    )
    status_reason = models.CharField(max_length=500, blank=True, help_text="why it last changed status")
    end_reason = models.CharField(max_length=32, choices=EndReason.choices, blank=True)
    engine = models.CharField(max_length=32, default="chromium")
    title = models.CharField(max_length=300, blank=True, help_text="the page's title when last seen")
    # The options as given (checked; header values and anything secret are not kept here, see sealed_headers).
    options = models.JSONField(default=dict, blank=True)
    # Extra request headers per host, sealed with the vault's keys: their values may be a staging gate's secret.
    sealed_headers = models.BinaryField(null=True, blank=True)
    sealed_headers_kid = models.CharField(max_length=32, blank=True)
    # Whether this session's browser may reach private, loopback and link-local addresses: the install's opt-in
    # (foldrun.net) where it was opened, decided once and applied by its keeper's guard to every connection of the
    # browser, and to the browse calls of its tasks (a keeper on an install that has not opted in refuses anyway).
    private_addresses = models.BooleanField(default=False)
    # The browser's DevTools endpoint as the workers see it (loopback of the keeper's machine); empty when closed.
    cdp_endpoint = models.CharField(max_length=300, blank=True)
    # queueForCapacity: queued (no keeper yet) until a browser is free or this time passes.
    queued_until = models.DateTimeField(null=True, blank=True, db_index=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    live_at = models.DateTimeField(null=True, blank=True)
    last_activity_at = models.DateTimeField(default=timezone.now)
    closed_at = models.DateTimeField(null=True, blank=True)
    # `record`: the video, kept after the session closes (a path under DATA_DIR/recordings).
    recording = models.CharField(max_length=500, blank=True)
    recording_bytes = models.BigIntegerField(default=0)
    # The console errors of every page over the session's life, as its keeper saw them (null: not watched).
    console_log = models.JSONField(null=True, blank=True)
    # lease_holder, lease_until (Leased): the keeper's lease.

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["account", "status"]), models.Index(fields=["account", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.public_id} {self.status}"

    @property
    def is_open(self) -> bool:
        return self.status != SessionStatus.CLOSED

    def headers_aad(self) -> bytes:
        return f"browsing.session:{self.account_id}:{self.public_id}:headers".encode()


# ---------------------------------------------------------------- tasks and skill runs

TASK_PREFIX = "tsk"
SKILL_RUN_PREFIX = "run"

# Why a task ended (the spec's `stoppedBy`). Those after `unanswered` mean the agent could not test.
STOPPED_BY = (
    "done",
    "stuck",
    "budget",
    "unanswered",
    "captcha",
    "blocked",
    "error",
    "aborted",
    "paused",
    "navigation_blocked",
    "capacity_exceeded",
    "capacity_timeout",
    "timeout",
)
STOPS_THAT_ARE_RESULTS = ("done", "stuck", "budget", "unanswered")


class TaskStatus(models.TextChoices):
    RUNNING = "running", "running"
    FINISHED = "finished", "finished"


class Task(models.Model):
    """A goal given to the gallery's browser agent: one foldrun run of it on one session."""

    public_id = public_id_field(TASK_PREFIX, 24)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="browser_tasks")
    session = models.ForeignKey(BrowserSession, on_delete=models.CASCADE, related_name="tasks")
    run = models.ForeignKey("runs.Run", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    # A step of a smoke test's flow: the skill run it belongs to, and its index among the steps.
    skill_run = models.ForeignKey(
        "SkillRun", null=True, blank=True, on_delete=models.CASCADE, related_name="flow_tasks"
    )
    flow_index = models.PositiveSmallIntegerField(null=True, blank=True)
    goal = models.TextField()
    max_steps = models.PositiveSmallIntegerField(default=25)
    mode = models.CharField(max_length=16, default="auto")
    # The tool opened the session and keepOpen was not asked: the task's end closes it.
    closes_session = models.BooleanField(default=False)
    status = models.CharField(max_length=16, choices=TaskStatus.choices, default=TaskStatus.RUNNING, db_index=True)
    ok = models.BooleanField(null=True, blank=True)
    stopped_by = models.CharField(max_length=32, blank=True)
    reason = models.TextField(blank=True)
    limit = models.JSONField(null=True, blank=True)
    answer = models.TextField(blank=True)
    steps = models.JSONField(default=list, blank=True)
    cost_micros = models.BigIntegerField(default=0)
    ms = models.BigIntegerField(default=0)
    # What the agent's browse calls saw go wrong on the page (the run's log lines), and where it ended.
    console_errors = models.JSONField(default=list, blank=True)
    failed_requests = models.JSONField(default=list, blank=True)
    final_url = models.CharField(max_length=2048, blank=True)
    session_closed = models.BooleanField(default=False)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    started_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["session", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.public_id} {self.status} {self.stopped_by}"


class SkillStatus(models.TextChoices):
    RUNNING = "running", "running"
    PASSED = "passed", "passed"
    FAILED = "failed", "failed"
    ERROR = "error", "error"
    CANCELLED = "cancelled", "cancelled"
    DENIED = "denied", "denied"


class SkillRun(models.Model):
    """One run of a gallery skill on a session of its own (`smoke-uat`: a smoke test)."""

    public_id = public_id_field(SKILL_RUN_PREFIX, 24)
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="skill_runs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    session = models.ForeignKey(
        BrowserSession, null=True, blank=True, on_delete=models.SET_NULL, related_name="skill_runs"
    )
    skill = models.CharField(max_length=100)
    inputs = models.JSONField(default=dict, blank=True)
    status = models.CharField(max_length=16, choices=SkillStatus.choices, default=SkillStatus.RUNNING, db_index=True)
    # Where the run is (the skill's own phases) and what it has found so far; `report` once it ends.
    phase = models.CharField(max_length=32, default="start")
    state = models.JSONField(default=dict, blank=True)
    report = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Leased's fields without its indexes: a skill run is claimed by its pk (runs/skill_runs.py), never swept.
    lease_holder = models.CharField(max_length=64, blank=True)
    lease_until = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"{self.public_id} {self.skill} {self.status}"


# ---------------------------------------------------------------- what seeded a vendor's kept profile


class SeedKind(models.TextChoices):
    COOKIES = "cookies", "a secret's cookies"
    STORAGE = "storage", "web.browse.storage"


class KeptSeed(models.Model):
    """A browse call's secret signed in a vendor's kept context or profile (`vendor_session.keep`).

    The vendor keeps that login run to run, so every later call on the profile is treated as signed in: no
    script beside it, the secrets' values redacted. The keep file under the workspace's state/web-browse/ names
    only the vendor's id; this row is the record of what seeded it, here because the workspace's programs can
    write state/ and could otherwise rub the mark out (browsing/kept.py reads and writes it).
    """

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="+")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    vendor = models.CharField(max_length=32)
    keep = models.CharField(max_length=100, help_text="the vendor_session.keep name")
    kept_id = models.CharField(max_length=200, help_text="the vendor's context or profile id it seeded")
    seeded = models.CharField(max_length=16, choices=SeedKind.choices)
    secrets = models.JSONField(default=list, blank=True, help_text="the secrets' names, never their values")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["pk"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "vendor", "keep", "kept_id"], name="kept_seed_one_per_profile")
        ]

    def __str__(self) -> str:
        return f"{self.vendor} {self.keep} {self.kept_id} {self.seeded}"
