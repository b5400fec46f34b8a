"""A push is a handful of set-based queries, however many files it holds."""

from __future__ import annotations

from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Workspace

from .conftest import push

CONCEPT = "---\ntype: Reference\ntitle: Note {i}\ndescription: Fact {i}.\n---\nText {i}.\n"


def desk(count: int) -> list[dict]:
    return [{"path": f"knowledge/n{i}.md", "content": CONCEPT.format(i=i)} for i in range(count)] + [
        {"path": f"agents/a{i}/agent.md", "content": f"---\nname: a{i}\ndescription: A.\n---\nGo.\n"}
        for i in range(count)
    ]


def queries_for(client, where: str, files: list[dict]) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = push(client, where, files=files, prune=True)
    assert response.status_code == 201
    return len(captured)


def test_the_number_of_queries_does_not_grow_with_the_number_of_files(alice_api, account, workspace):
    Workspace.objects.create(account=account, name="big-desk")
    alice_api.get("/api/workspaces/rank-desk/files")  # the token's first use is recorded once
    small = queries_for(alice_api, "workspaces/rank-desk", desk(5))
    large = queries_for(alice_api, "workspaces/big-desk", desk(200))
    # 40 times the files; only bulk inserts split into batches (SQLite caps
    # the parameters of one statement), never a query per file.
    assert large <= small + 8
    edited = [dict(f, content=f["content"] + "edited\n") for f in desk(200)]
    assert queries_for(alice_api, "workspaces/big-desk", edited) <= large
