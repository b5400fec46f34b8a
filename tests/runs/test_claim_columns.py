"""The columns a step's claim and a run's start read in their own queries rather than in queries of their own:
the account library's newest revision (the desk cache's key) and whether the account's vault is empty."""

from __future__ import annotations

from runs.desks import head_changeset, library_head
from runs.lifecycle import vault_empty
from runs.models import Run
from library.models import Changeset, scope_key_for
from vault.models import Secret


def _columns(run: Run) -> tuple[str, bool]:
    row = (
        Run.objects.annotate(library_head=library_head(), vault_empty=vault_empty())
        .values_list("library_head", "vault_empty")
        .get(pk=run.pk)
    )
    return row[0], bool(row[1])


def test_the_claim_reads_the_account_librarys_newest_revision_and_whether_the_vault_is_empty(db, account, workspace):
    run = Run.objects.create(account=account, workspace=workspace, kind="flow", name="one", plan=[], inputs={})
    assert _columns(run) == ("", True)  # no library revision yet, no secret
    scope = scope_key_for(account, None)
    Changeset.objects.create(account=account, scope_key=scope, number=1, kind="push")
    newest = Changeset.objects.create(account=account, scope_key=scope, number=2, kind="push")
    Changeset.objects.create(
        account=account, workspace=workspace, scope_key=scope_key_for(account, workspace), number=9, kind="push"
    )  # the workspace's own revisions are not the library's
    Secret.objects.create(account=account, name="SOME_KEY", key_id="k", sealed=b"sealed")
    assert _columns(run) == (newest.public_id, False)
    head = head_changeset(workspace)
    assert (head.number, head.library_head) == (9, newest.public_id)
