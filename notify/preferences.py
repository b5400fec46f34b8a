"""Mail categories and each person's choices. Asked at the moment of sending.

`may_send(who, category, workspace)` is the one question every mail the
platform sends goes through, from every app.
"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from foldrun.api import ApiError

from .models import Category, Preference

# (category, what, can be turned off, per workspace) — the spec's table.
CATEGORIES: tuple[tuple[str, str, bool, bool], ...] = (
    ("security", "password resets, email confirmations, a login moved, an account made for you", False, False),
    ("invites", "an invitation to join an account", False, False),
    ("billing", "a payment failed, and the grace before runs stop", False, False),
    ("account", "a notification webhook switched off after days of failures; a close request", False, False),
    (
        "run-alerts",
        "a workspace's `notify:` email: failed, completed, blocked, quarantined, `sla`, `budget`",
        True,
        True,
    ),
    ("approvals", "a run waiting for you, with approve and reject links", True, True),
    ("low-balance", "credits below the warning level", True, False),
    ("product-updates", "what changed in foldrun", True, False),
)
LOCKED = frozenset(c for c, _w, optional, _p in CATEGORIES if not optional)
PER_WORKSPACE = frozenset(c for c, _w, _o, per_ws in CATEGORIES if per_ws)
ALL = tuple(c for c, *_ in CATEGORIES)
LOCKED_REASON = (
    "Always on: this is how you get back into the account and how you hear that something you rely on has stopped."
)
# What a "Stop …" link at the bottom of a mail says it stops.
STOP_WORDS = {
    "run-alerts": "run alerts",
    "approvals": "approval requests",
    "low-balance": "low-balance warnings",
    "product-updates": "product updates",
}
assert set(ALL) == set(Category.values)


def _address(who) -> str:
    if isinstance(who, str):
        return who.strip().lower()
    return (getattr(who, "email", "") or "").strip().lower()


def is_enabled(email: str, category: str, workspace=None) -> bool:
    if category in LOCKED:
        return True
    rows = {
        (p.workspace_id or None): p.enabled
        for p in Preference.objects.filter(email=email, category=category).filter(
            **({} if workspace is not None and category in PER_WORKSPACE else {"workspace__isnull": True})
        )
    }
    if workspace is not None and category in PER_WORKSPACE and workspace.pk in rows:
        return rows[workspace.pk]
    return rows.get(None, True)


def may_send(who, category: str, workspace=None) -> bool:
    """Whether a mail of `category` may go to `who` (a user or an address) now.

    The four locked categories always may. An unknown category is a bug in
    the caller, and raises.
    """
    if category not in ALL:
        raise ValueError(f"unknown mail category {category!r}")
    email = _address(who)
    if not email:
        return False
    return is_enabled(email, category, workspace)


@transaction.atomic
def do_set_preference(email: str, category: str, enabled: bool, workspace=None, *, via: str = "profile") -> None:
    """Record a choice. Preconditions: `category` is optional; `workspace`
    only for a per-workspace category. A choice for all workspaces replaces
    the per-workspace ones."""
    email = email.strip().lower()
    if workspace is None:
        Preference.objects.filter(email=email, category=category, workspace__isnull=False).delete()
        Preference.objects.update_or_create(
            email=email,
            category=category,
            workspace=None,
            defaults={"enabled": enabled, "via": via, "updated_at": timezone.now()},
        )
    else:
        # Locked for the write: a workspace deleted meanwhile is a 404, never a foreign-key error at commit.
        if not type(workspace).objects.select_for_update().filter(pk=workspace.pk).exists():
            raise ApiError("No such workspace.", code="not_found", status_code=404)
        Preference.objects.update_or_create(
            email=email,
            category=category,
            workspace=workspace,
            defaults={"enabled": enabled, "via": via, "updated_at": timezone.now()},
        )


def preferences_for(email: str, workspaces) -> list[dict]:
    """The Profile → Notifications view of one address, for the API and the page."""
    email = email.strip().lower()
    rows = list(Preference.objects.filter(email=email))
    result = []
    for category, what, optional, per_ws in CATEGORIES:
        base = next((r for r in rows if r.category == category and r.workspace_id is None), None)
        entry: dict = {
            "category": category,
            "what": what,
            "enabled": True if not optional else (base.enabled if base else True),
            "locked": not optional,
            "reason": LOCKED_REASON if not optional else None,
            "perWorkspace": per_ws,
        }
        if base is not None and optional and base.via == "unsubscribe":
            entry["via"] = "unsubscribe"
        if per_ws:
            entry["workspaces"] = []
            for ws in workspaces:
                row = next((r for r in rows if r.category == category and r.workspace_id == ws.pk), None)
                item = {"workspace": ws.name, "enabled": row.enabled if row else entry["enabled"]}
                if row is not None and row.via == "unsubscribe":
                    item["via"] = "unsubscribe"
                entry["workspaces"].append(item)
        result.append(entry)
    return result
