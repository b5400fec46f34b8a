from __future__ import annotations

import pytest

AGENT = "---\nname: researcher\ndescription: Finds pages.\ntools: [web, read]\n---\nFind pages about the topic.\n"
CONCEPT = "---\ntype: Reference\ntitle: Target keywords\ndescription: The queries we want to win.\n---\n| keyword |\n|---|\n| a |\n"


def files(**by_path: str) -> list[dict]:
    """`files(**{"agents/x/agent.md": "..."})` → the push body's file list."""
    return [{"path": p, "content": c} for p, c in by_path.items()]


def push(client, where: str, *, verb: str = "push", message: str = "a push", **extra):
    """POST a push (or deploy) to `where` ("workspaces/rank-desk" or "library")."""
    body = {"message": message, **extra}
    return client.post(f"/api/{where}/{verb}", body, format="json")


@pytest.fixture
def desk(alice_api, workspace):
    """rank-desk with one agent and one concept, pushed by alice as revision 1."""
    response = push(
        alice_api,
        "workspaces/rank-desk",
        message="first",
        files=files(**{"agents/researcher/agent.md": AGENT, "knowledge/keywords.md": CONCEPT}),
    )
    assert response.status_code == 201, response.json()
    return workspace
