"""Alice's world: one of every object the API can name, so that every route
can be asked about it by charlie (another account) and bob (a viewer)."""

from __future__ import annotations

import re

import pytest
from django.urls import URLPattern, URLResolver, get_resolver

from tests.dashboard import browser_rows

NOT_FOUND = {"code": "not_found", "message": "Not found.", "details": {}}

AGENT = "---\nname: researcher\ndescription: Finds pages.\ntools: [read, echo]\n---\nFind pages about the topic.\n"
FLOW = "---\nname: weekly\nwebhook: {signature: none}\n---\n1. [[researcher]] ! — Find pages.\n"
TOOL = (
    "---\ntransport: script\nname: echo\ndescription: Says a word back.\nargs: {word: the word}\n---\n"
    "```python\nimport sys, json\nprint('echo', json.load(sys.stdin)['word'])\n```\n"
)
CONCEPT = "---\ntype: Reference\ntitle: Keywords\ndescription: The queries we want to win.\n---\n| keyword |\n"
SHARED = (
    "---\ntransport: http\nname: shared\ndescription: A shared API.\nbase: https://api.example.com\n---\nCall it.\n"
)


def url_patterns() -> list[tuple[str, URLPattern]]:
    """Every route of the URLconf as (its pattern written out, the pattern), in order."""
    found = []

    def walk(patterns, prefix=""):
        for p in patterns:
            if isinstance(p, URLResolver):
                walk(p.url_patterns, prefix + str(p.pattern))
            elif isinstance(p, URLPattern):
                found.append((prefix + str(p.pattern), p))

    walk(get_resolver().url_patterns)
    return found


def api_routes() -> list[tuple[str, type | None, list[str]]]:
    """Every route under /api/ as (pattern, view class, methods it answers)."""
    found = []
    for route, p in url_patterns():
        if route.startswith("api/"):
            cls = getattr(p.callback, "view_class", None) or getattr(p.callback, "cls", None)
            methods = [m for m in ("get", "post", "put", "patch", "delete") if cls and hasattr(cls, m)]
            found.append(("/" + route, cls, methods))
    return found


def params_of(route: str) -> list[str]:
    return re.findall(r"<(?:\w+:)?(\w+)>", route)


def fill(route: str, values: dict) -> str:
    """The route with its parameters filled in; in the account library the
    file is the library's, under a workspace the secret is the workspace's."""
    values = dict(values)
    if route.startswith("/api/library/") and "library_path" in values:
        values["path"] = values["library_path"]
    if "/scratch/" in route and "scratch_path" in values:
        values["path"] = values["scratch_path"]  # a file of the tool's Tool Test scratch
    if route.startswith("/api/hooks/") and "ws_id" in values:
        values["ws"] = values["ws_id"]  # the inbound webhook is addressed by public id
    if route.startswith("/api/workspaces/") and "ws_secret" in values:
        values["name"] = values["ws_secret"]
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values[m.group(1)]), route)


# A body that gets past the shape checks of most writes, so a refusal is
# about who is asking, not what was sent.
WRITE_BODY = {
    "message": "a change",
    "files": [{"path": "agents/x/agent.md", "content": AGENT}],
    "content": AGENT,
    "value": "a-value-1",
    "name": "renamed",
    "role": "editor",
    "email": "dora@example.com",
    "flow": "weekly",
    "revision": 1,
    "to": 1,
    "payload": {},
    "arguments": {"word": "hi"},
    "model": "claude-sonnet-4-5",
    "provider": "anthropic",
    "category": "failed",
    "enabled": True,
    "reason": "no",
}


@pytest.fixture
def world(alice, bob, alice_api, workspace, tmp_path):
    """Alice's account with one of everything, and the id of each."""
    from notify.models import Delivery
    from runs import live_view
    from runs.models import Approval, Artifact, Run, ScratchFile, Step

    from accounts.models import Membership

    pushed = alice_api.post(
        "/api/workspaces/rank-desk/push",
        {
            "message": "first",
            "files": [
                {"path": "agents/researcher/agent.md", "content": AGENT},
                {"path": "flows/weekly.md", "content": FLOW},
                {"path": "tools/echo.md", "content": TOOL},
                {"path": "knowledge/keywords.md", "content": CONCEPT},
            ],
        },
        format="json",
    )
    assert pushed.status_code == 201, pushed.json()
    shared = alice_api.post(
        "/api/library/push",
        {"message": "shared", "files": [{"path": "tools/shared.md", "content": SHARED}]},
        format="json",
    )
    assert shared.status_code == 201, shared.json()
    invite = alice_api.post("/api/invites", {"email": "dora@example.com", "role": "viewer"}, format="json")
    assert invite.status_code == 201, invite.json()
    token = alice_api.post("/api/tokens", {"name": "laptop"}, format="json")
    assert token.status_code == 201, token.json()
    secret = alice_api.put("/api/secrets/ALICE_KEY", {"value": "alice-secret-value-1"}, format="json")
    assert secret.status_code in (200, 201), secret.json()
    ws_secret = alice_api.put(
        "/api/workspaces/rank-desk/secrets/DESK_KEY", {"value": "desk-secret-value-1"}, format="json"
    )
    assert ws_secret.status_code in (200, 201), ws_secret.json()
    login = alice_api.post(
        "/api/logins",
        {"host": "portal.example.com", "username": "alice", "password": "alice-portal-password-1"},
        format="json",
    )
    assert login.status_code in (200, 201), login.json()
    run = Run.objects.create(account=workspace.account, workspace=workspace, name="weekly", status="awaiting-approval")
    step = Step.objects.create(
        run=run, index=1, agent="researcher", task="Find pages.", status="awaiting-approval", wait_event="signed-off"
    )
    Approval.objects.create(run=run, step=step)
    artifact = Artifact.objects.create(run=run, step=step, path="outputs/a.txt", content=b"hello", size=5)
    for tool in ("echo", "web"):  # a Tool Test's scratch: the API's routes name the workspace's tool, the pages web
        ScratchFile.objects.create(workspace=workspace, tool=tool, path="outputs/a.txt", content=b"hello", size=5)
    video = Artifact.objects.create(
        run=run, step=step, path="outputs/videos/browse-1.webm", content=b"\x1a\x45\xdf\xa3 a video", size=12
    )
    live_view.write(step.public_id, "frame", b"\xff\xd8\xff a frame", "https://example.com/")
    delivery = Delivery.objects.create(account=workspace.account, workspace=workspace, event="failed", body="{}")
    recording = tmp_path / "session.webm"
    recording.write_bytes(b"\x1a\x45\xdf\xa3 a recording")
    session = browser_rows.session(workspace.account, recording=recording)
    browser_rows.task(workspace.account, workspace, session)
    smoke = browser_rows.smoke(workspace.account, session)
    return {
        "ws": "rank-desk",
        "ws_id": workspace.public_id,
        "member_id": Membership.objects.get(user=bob).public_id,
        "invite_id": invite.json()["id"],
        "token_id": token.json()["id"],
        "run_id": run.public_id,
        "step_id": step.public_id,
        "index": 1,
        "artifact_id": artifact.public_id,
        "video_id": video.public_id,
        "delivery_id": delivery.public_id,
        "path": "agents/researcher/agent.md",
        "number": 1,
        "tool": "echo",
        "flow": "weekly",
        "name": "ALICE_KEY",
        "ws_secret": "DESK_KEY",
        "library_path": "tools/shared.md",
        "scratch_path": "outputs/a.txt",
        "session_id": session.public_id,
        "skill_run_id": smoke.public_id,
        "login_id": login.json()["id"],
    }


# The value each parameter takes when it names nothing at all.
MISSING = {
    "ws": "no-such-desk",
    "member_id": "mem_missing0000",
    "invite_id": "inv_missing0000",
    "token_id": "tok_missing0000",
    "run_id": "run_missing0000",
    "index": 99,
    "artifact_id": "art_missing0000",
    "delivery_id": "dlv_missing0000",
    "path": "agents/nobody/agent.md",
    "number": 999,
    "tool": "no-such-tool",
    "flow": "no-such-flow",
    "name": "NO_SUCH_KEY",
    "session_id": "sess_us_missing0000",
    "skill_run_id": "run_missing0000",
    "step_id": "stp_missing0000",
    "login_id": "vlg_missing0000",
}
