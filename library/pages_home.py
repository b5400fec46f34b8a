"""The library's part of the home page (`accounts.signals.home_parts`,
connected in LibraryConfig.ready): each workspace of the account with its
agent and flow counts and its newest changeset (three queries whatever the
number of workspaces)."""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, Q, Subquery

from accounts.models import Membership, Workspace
from foldrun.contract.desk import AGENT, FLOW, classify

from .models import Changeset, LibraryFile


def workspace_rows(membership: Membership) -> list[dict[str, Any]]:
    """Each workspace of the account with its agent/flow counts and last revision."""
    workspaces = list(Workspace.objects.filter(account_id=membership.account_id).order_by("name"))
    counts: dict[int, dict[str, int]] = {w.pk: {AGENT: 0, FLOW: 0} for w in workspaces}
    paths = (
        LibraryFile.objects.filter(account_id=membership.account_id, workspace__isnull=False, deleted=False)
        .filter(Q(path__startswith="agents/") | Q(path__startswith="flows/"))
        .values_list("workspace_id", "path")
    )
    for workspace_id, path in paths:
        kind, _, _ = classify(path)
        if kind in (AGENT, FLOW) and workspace_id in counts:
            counts[workspace_id][kind] += 1
    # Each workspace's newest changeset, in two queries whatever their number.
    newest = Changeset.objects.filter(workspace=OuterRef("pk")).order_by("-number").values("pk")[:1]
    last_pks = dict(
        Workspace.objects.filter(pk__in=[w.pk for w in workspaces])
        .annotate(last_pk=Subquery(newest))
        .values_list("pk", "last_pk")
    )
    by_pk = Changeset.objects.select_related("author").in_bulk([pk for pk in last_pks.values() if pk])
    last = {ws_pk: by_pk[pk] for ws_pk, pk in last_pks.items() if pk}
    return [
        {
            "workspace": w,
            "agents": counts[w.pk][AGENT],
            "flows": counts[w.pk][FLOW],
            "last": last.get(w.pk),
        }
        for w in workspaces
    ]


def home_part(sender, membership: Membership, **kwargs: Any) -> dict[str, Any]:
    return {"workspaces": workspace_rows(membership)}
