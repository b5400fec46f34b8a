"""`schemathesis_seed.py CONFIG`: objects for the fuzzer to reach, appended to schemathesis configuration.

A path that names an object (`/runs/{run_id}`, `/v1/tasks/{task_id}`…) is a 404 for any id the fuzzer makes up,
so without real ids those operations would only ever be checked on their not-found answer. This writes, in the
demo account of the scratch database scripts/schemathesis runs on, one of each object those paths name — a
finished run with a step and an artifact, a flow that takes webhooks, a delivery, a secret in the account and
in the desk, an invite, a second member, a closed browser session with a finished task and a recording, a
finished skill run — and appends to CONFIG (not stdout: the console mail backend prints the invites' mails
there) TOML dictionaries of their ids with the bindings that hand them to the path parameters (most of the
time: the rest of the cases still try made-up ids, so the 404s stay checked). The operations that rename or
delete a workspace, or push over one, get workspaces of their own: the demo desk stays for everything else.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import django

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.dev")
django.setup()

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.utils import timezone  # noqa: E402

from accounts.actions import do_create_workspace, do_invite  # noqa: E402
from accounts.models import Membership, Role, Workspace  # noqa: E402
from browsing.models import BrowserSession, SessionStatus, SkillRun, SkillStatus, Task, TaskStatus  # noqa: E402
from browsing.reports import running_smoke  # noqa: E402
from library.actions.writes import FileWrite, do_write_files  # noqa: E402
from library.management.commands.seed_demo import DEMO_EMAIL, DEMO_WORKSPACE  # noqa: E402
from notify.deliveries import do_record_delivery  # noqa: E402
from runs.models import Artifact, Run, RunStatus, Step, StepStatus  # noqa: E402
from vault.actions import do_set_secret  # noqa: E402

PROBABILITY = 0.85  # of a case using a seeded id; the rest make one up (a 404, still checked)
SECRET = "FUZZ_SECRET"
HOOK_FLOW = "---\nname: fuzz-hook\nwebhook: {}\n---\n1. [[reporter]] — Give the verdict.\n"


def seed() -> dict[str, list]:
    owner = Membership.objects.select_related("account", "user").get(user__email=DEMO_EMAIL, role=Role.OWNER)
    account, user = owner.account, owner.user
    desk = Workspace.objects.get(account=account, name=DEMO_WORKSPACE)
    doomed = [do_create_workspace(account, f"fuzz-doomed-{n}", user).name for n in range(1, 4)]
    scratch = do_create_workspace(account, "fuzz-push", user).name

    viewer = get_user_model().objects.create_user(username="fuzz-viewer", email="fuzz-viewer@example.com")
    member = Membership.objects.create(account=account, user=viewer, role=Role.VIEWER)
    invites = [do_invite(owner, f"fuzz-invite-{n}@example.com", Role.VIEWER)[0].public_id for n in range(1, 4)]
    do_set_secret(account, None, SECRET, value="fuzz-value", hosts=["api.example.com"], user=user)
    do_set_secret(account, desk, SECRET, value="fuzz-value", hosts=["api.example.com"], user=user)

    # A flow that takes webhooks, for POST /api/hooks/{ws}/{flow} (its ws is the workspace's public id).
    do_write_files(
        account=account,
        workspace=desk,
        kind="push",
        message="a webhook flow for the fuzzer",
        author=user,
        writes=[FileWrite(path="flows/fuzz-hook.md", content=HOOK_FLOW)],
    )

    now = timezone.now()
    run = Run.objects.create(
        account=account,
        workspace=desk,
        name="weekly-rankings",
        status=RunStatus.COMPLETED,
        created_by=user,
        started_at=now,
        finished_at=now,
        headline="seeded for the fuzzer",
    )
    step = Step.objects.create(
        run=run, index=1, agent="ranker", status=StepStatus.COMPLETED, started_at=now, finished_at=now, output="done"
    )
    artifact = Artifact.objects.create(run=run, step=step, path="outputs/report.md", content=b"# report\n", size=9)
    delivery = do_record_delivery(
        desk, "run.completed", json.dumps({"run": run.public_id}), run_public_id=run.public_id
    )

    recording = Path(settings.DATA_DIR) / "recordings" / "fuzz.webm"
    recording.parent.mkdir(parents=True, exist_ok=True)
    recording.write_bytes(b"\x1a\x45\xdf\xa3" + b"\0" * 60)  # a WebM's magic; served as bytes, never decoded
    session = BrowserSession.objects.create(
        account=account,
        created_by=user,
        status=SessionStatus.CLOSED,
        end_reason="stopped",
        status_reason="seeded for the fuzzer",
        live_at=now,
        closed_at=now,
        recording=str(recording),
        recording_bytes=recording.stat().st_size,
    )
    task = Task.objects.create(
        account=account,
        session=session,
        goal="read the title",
        status=TaskStatus.FINISHED,
        ok=True,
        stopped_by="done",
        answer="Example Domain",
        finished_at=now,
    )
    skill_run = SkillRun.objects.create(
        account=account,
        created_by=user,
        session=session,
        skill="smoke-uat",
        inputs={"url": "https://example.com/"},
        status=SkillStatus.PASSED,
        phase="done",
        finished_at=now,
    )
    # The report a finished smoke test leaves: the running one's shape with its verdict and counts.
    skill_run.report = {
        **running_smoke(skill_run),
        "verdict": "pass",
        "notes": [],
        "finalUrl": "https://example.com/",
        "counts": {"total": 0, "passed": 0, "failed": 0, "skipped": 0},
    }
    skill_run.save(update_fields=["report"])
    return {
        "workspaces": [DEMO_WORKSPACE],
        "doomed_workspaces": doomed,
        "push_workspaces": [scratch],
        # Files at the top of the desk only: schemathesis never puts a "/" in a path parameter (nor %2F), so a
        # file in a folder — every file of the account library — is reached only by the fuzzer's own guesses.
        "files": ["AGENTS.md", "README.md"],
        "revisions": [1, 2],
        "members": [member.public_id, owner.public_id],
        "invites": invites,
        "secrets": [SECRET],
        "runs": [run.public_id],
        "artifacts": [artifact.public_id],
        "steps": [1],
        "deliveries": [delivery.public_id],
        "sessions": [session.public_id],
        "tasks": [task.public_id],
        # HTTP tools (answered at once: no key in the vault, or no way out): sql's first test installs duckdb,
        # longer than the fuzzer's 30-second request timeout on a loaded machine.
        "hook_workspaces": [desk.public_id],
        "hook_flows": ["fuzz-hook"],
        "skill_runs": [skill_run.public_id],
        "gallery_tools": ["web"],
        "desk_tools": ["linear", "dataforseo"],
    }


# The path parameter each dictionary feeds, everywhere it appears (`run_id` of /v1/skill-runs gets its own below).
BINDINGS = {
    "path.ws": "workspaces",
    "path.path": "files",
    "path.number": "revisions",
    "path.member_id": "members",
    "path.invite_id": "invites",
    "path.name": "secrets",
    "path.run_id": "runs",
    "path.artifact_id": "artifacts",
    "path.index": "steps",
    "path.delivery_id": "deliveries",
    "path.session_id": "sessions",
    "path.task_id": "tasks",
    "path.tool": "desk_tools",
}
# Operations whose parameter takes another dictionary than the one above.
PER_OPERATION = [
    (["workspaces_destroy", "workspaces_partial_update"], {"path.ws": "doomed_workspaces"}),
    (["workspaces_push_create", "workspaces_deploy_create"], {"path.ws": "push_workspaces"}),
    (
        ["gallery_retrieve", "library_gallery_install_create", "library_gallery_upgrade_create"],
        {"path.tool": "gallery_tools"},
    ),
    (["skill_runs_read", "skill_runs_report"], {"path.run_id": "skill_runs"}),
    (["hooks_create"], {"path.ws": "hook_workspaces", "path.flow": "hook_flows"}),
]


def _binding(dictionary: str) -> str:
    return f'{{ dictionary = "{dictionary}", probability = {PROBABILITY} }}'


def toml(ids: dict[str, list]) -> str:
    lines = ["", "# Written by scripts/schemathesis_seed.py for this run."]
    for name, values in ids.items():
        lines += [f"[dictionaries.{name}]", f"values = {json.dumps(values)}"]
    lines.append("[parameters]")
    lines += [f'"{key}" = {_binding(name)}' for key, name in BINDINGS.items()]
    for operations, bindings in PER_OPERATION:
        lines += [
            "[[operations]]",
            f"include-operation-id = {json.dumps(operations)}",
            "parameters = { " + ", ".join(f'"{k}" = {_binding(v)}' for k, v in bindings.items()) + " }",
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    ids = seed()
    with open(sys.argv[1], "a") as config:
        config.write(toml(ids))
