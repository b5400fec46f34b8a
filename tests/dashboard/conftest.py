"""Helpers for page tests: desks written through the same door a push uses."""

from __future__ import annotations

import pytest
from django.test import Client

from library.actions.writes import FileWrite, do_write_files

AGENT = """---
name: {name}
description: {description}
tools: [{tools}]
---
Do the work.
"""

SHARED_TOOL = """---
transport: http
name: dataforseo
description: DataForSEO's SERP API.
base: https://api.dataforseo.com/v3
methods: [POST]
---
"""

FLOW = """---
name: weekly-rankings
schedule: "0 7 * * MON"
timezone: Australia/Sydney
---
1. [[ranker]] — Check this week's rankings.
2. [[writer]] ! — Draft the note and send it.
   verify: file outputs/receipt.json
"""


def write(account, workspace, files: dict[str, str | None], *, author=None, message: str = "test push"):
    """Write files into a workspace (or the library when workspace is None) as one revision."""
    result = do_write_files(
        account=account,
        workspace=workspace,
        writes=[FileWrite(path=p, content=t) for p, t in files.items()],
        kind="push",
        message=message,
        author=author,
    )
    return getattr(result, "changeset", result)


def agent(name: str, tools: str, description: str = "An agent.") -> str:
    return AGENT.format(name=name, tools=tools, description=description)


@pytest.fixture
def alice_web(alice) -> Client:
    client = Client()
    client.force_login(alice)
    return client


@pytest.fixture
def bob_web(bob) -> Client:
    client = Client()
    client.force_login(bob)
    return client


@pytest.fixture
def charlie_web(charlie) -> Client:
    client = Client()
    client.force_login(charlie)
    return client


@pytest.fixture
def desk(account, workspace, alice):
    """rank-desk with two agents, a flow and a tool of its own; dataforseo in the library."""
    write(account, None, {"tools/dataforseo.md": SHARED_TOOL}, author=alice, message="shared tools")
    write(
        account,
        workspace,
        {
            "agents/ranker/agent.md": agent("ranker", "dataforseo, read", "Finds where our pages rank."),
            "agents/writer/agent.md": agent("writer", "read, write", "Drafts the weekly note."),
            "flows/weekly-rankings.md": FLOW,
            "tools/sql.md": "---\ntransport: script\nname: sql\n---\n```python\nprint(1)\n```\n",
        },
        author=alice,
        message="first desk",
    )
    return workspace
