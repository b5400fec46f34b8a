"""`manage.py seed_demo`: a demo account with a desk and a shared library tool.

Idempotent: run it twice and nothing changes the second time (unchanged
files are not written again, so no new revision appears).
"""

from __future__ import annotations

from allauth.account.models import EmailAddress
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction

from accounts.actions import do_create_workspace
from accounts.models import Account, Membership, Profile, Role, Workspace
from foldrun.contract.paths import read_folder
from foldrun.demo import RANK_DESK
from library.actions.gallery import do_install_gallery_tool
from library.actions.writes import FileWrite, do_write_files

DEMO_EMAIL = "demo@foldrun.dev"
DEMO_PASSWORD = "demo-password-123"
DEMO_ACCOUNT = "Demo account"
DEMO_WORKSPACE = "rank-desk"

# Shared through the account library rather than the desk: the desk's agents
# reach `dataforseo` in the library, while `sql` is defined in both places so
# the desk's own copy overrides the library's — the Library page shows both.
LIBRARY_ONLY = ("tools/dataforseo.md",)
LIBRARY_AND_DESK = ("tools/sql.md",)


class Command(BaseCommand):
    help = "Create (or refresh) the demo user, account, workspace and library."

    def handle(self, *args, **options) -> None:
        user, account = self._user_and_account()
        workspace = Workspace.objects.filter(account=account, name=DEMO_WORKSPACE).first()
        if workspace is None:
            workspace = do_create_workspace(account, DEMO_WORKSPACE, user, "The example desk: weekly rankings.")
        files = read_folder(RANK_DESK)
        library_writes = [FileWrite(path=p, content=files[p]) for p in LIBRARY_ONLY]
        library_writes += [
            FileWrite(path=p, content=files[p].replace("timeout: 120", "timeout: 60")) for p in LIBRARY_AND_DESK
        ]
        shared = do_write_files(
            account=account, workspace=None, writes=library_writes, kind="push", message="shared tools", author=user
        )
        # A copy of the gallery's `web` in the library, so the page shows its mark.
        gallery = do_install_gallery_tool(account=account, workspace=None, name="web", author=user)
        desk_writes = [FileWrite(path=p, content=t) for p, t in sorted(files.items()) if p not in LIBRARY_ONLY]
        pushed = do_write_files(
            account=account, workspace=workspace, writes=desk_writes, kind="push", message="demo desk", author=user
        )
        base = (settings.FOLDRUN_PUBLIC_URL or "http://127.0.0.1:8000").rstrip("/")
        # do_write_files answers with the changeset (or a result holding it); None when nothing changed.
        changed = [
            what
            for what, c in (("library", shared), ("gallery copy", gallery), ("desk", pushed))
            if getattr(c, "changeset", c) is not None
        ]
        self.stdout.write(f"• demo data {'written: ' + ', '.join(changed) if changed else 'already up to date'}")
        self.stdout.write(f"• open {base}/ and sign in as {DEMO_EMAIL} / {DEMO_PASSWORD}")
        self.stdout.write(f"• the desk is at {base}/w/{DEMO_WORKSPACE}/ and the library at {base}/library/")

    @transaction.atomic
    def _user_and_account(self):
        User = get_user_model()
        user = User.objects.filter(email__iexact=DEMO_EMAIL).first()
        if user is None:
            user = User.objects.create_user(username="demo", email=DEMO_EMAIL, password=DEMO_PASSWORD)
        membership = (
            Membership.objects.select_related("account")
            .filter(user=user, account__name=DEMO_ACCOUNT, role=Role.OWNER)
            .first()
        )
        if membership is None:
            account = Account.objects.create(name=DEMO_ACCOUNT)
            membership = Membership.objects.create(account=account, user=user, role=Role.OWNER)
        Profile.objects.update_or_create(user=user, defaults={"current_account": membership.account})
        # Signing in by email goes through allauth's address book; mark it verified.
        EmailAddress.objects.update_or_create(user=user, email=DEMO_EMAIL, defaults={"verified": True, "primary": True})
        return user, membership.account
