"""Push a generated 2,000-file desk through the API test client; print seconds.

A script, not a pytest test:

    FOLDRUN_DATA_DIR=$(mktemp -d) .venv/bin/python tests/bench/push_bench.py [--files 2000]

It builds a throwaway test database (SQLite, or PostgreSQL when DATABASE_URL
says so), pushes the desk once (every file added), then again with every
concept edited (every file modified, index/log regenerated), then a deploy
with nothing changed, and prints the time of each and the queries the first
push made — a push is one transaction with bulk queries, so that number must
not grow with the file count.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.test")

import django  # noqa: E402

django.setup()

from django.db import connection  # noqa: E402
from django.test.utils import CaptureQueriesContext, setup_test_environment  # noqa: E402


def desk(count: int, edit: str = "") -> list[dict]:
    files = [{"path": "AGENTS.md", "content": "---\nlanguage: en\n---\nDefaults.\n"}]
    agents = max(1, count // 20)
    for i in range(agents):
        files.append(
            {
                "path": f"agents/a{i}/agent.md",
                "content": f"---\nname: a{i}\ndescription: Agent {i}.\ntools: [read]\n---\nDo task {i}.{edit}\n",
            }
        )
    i = 0
    while len(files) < count:
        files.append(
            {
                "path": f"knowledge/topic-{i // 100}/note-{i}.md",
                "content": f"---\ntype: Reference\ntitle: Note {i}\ndescription: Fact number {i}.\n---\n"
                + ("A line of reference text. " * 20)
                + f"{edit}\n",
            }
        )
        i += 1
    return files


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    args = parser.parse_args()
    setup_test_environment()
    old_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        from rest_framework.test import APIClient

        from accounts.models import Account, ApiToken, Membership, Role, Workspace, hash_token
        from django.contrib.auth import get_user_model

        account = Account.objects.create(name="Bench")
        user = get_user_model().objects.create_user(username="bench", email="bench@example.com", password="x")
        Membership.objects.create(account=account, user=user, role=Role.OWNER)
        Workspace.objects.create(account=account, name="bench-desk")
        raw = ApiToken.mint()
        ApiToken.objects.create(user=user, account=account, name="bench", token_hash=hash_token(raw), hint=raw[:8])
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")

        def run(label: str, verb: str, files: list[dict]) -> None:
            body = {"message": label, "files": files, "delete": [], "prune": True}
            with CaptureQueriesContext(connection) as queries:
                started = time.perf_counter()
                response = client.post(f"/api/workspaces/bench-desk/{verb}", body, format="json")
                seconds = time.perf_counter() - started
            assert response.status_code == 201, response.json()
            answer = response.json()
            print(f"{label:<34} {seconds:7.2f} s  {len(answer['changed']):5d} changed  {len(queries):4d} queries")

        print(f"{connection.vendor}, {args.files} files")
        run("push (all added)", "push", desk(args.files))
        run("push (all modified)", "push", desk(args.files, edit=" Edited."))
        run("deploy (nothing changed, check)", "deploy", desk(args.files, edit=" Edited."))
    finally:
        connection.creation.destroy_test_db(old_name, verbosity=0)


if __name__ == "__main__":
    main()
