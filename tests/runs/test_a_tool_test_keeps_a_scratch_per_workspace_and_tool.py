"""A Tool Test keeps a scratch per workspace and tool — what its calls left in state/ and outputs/ — so a second
`monitor` sees its first look and a crawl carries on; the scratch is listed and downloaded by any member,
cleared by a member who may write, bounded with a sentence when full, and another account's is a 404. Through
the API, against the loopback site of tests/fakes/website.py."""

from __future__ import annotations

import json

import pytest

from accounts.models import Workspace
from library.models import Changeset
from runs.models import ScratchFile
from tests.fakes.website import docs_site
from tests.runs.helpers import push

TOOLS = "/api/workspaces/rank-desk/tools"
TEST = f"{TOOLS}/web/test"
SCRATCH = f"{TOOLS}/web/scratch"


@pytest.fixture
def docs():
    with docs_site() as server:
        yield server


def call(api, **arguments) -> dict:
    answer = api.post(TEST, {"arguments": arguments}, format="json")
    assert answer.status_code == 200, answer.content
    return answer.json()


def test_a_second_monitor_sees_the_first_look_of_the_one_before(alice_api, workspace, docs):
    first = call(alice_api, action="monitor", url=f"{docs.url}/prices")
    assert first["result"].startswith(f"first look at {docs.url}/prices: saved a baseline of 3 lines")
    assert first["scratch"] == {"files": 1, "bytes": first["scratch"]["bytes"], "limit": 20 * 1024 * 1024}
    second = call(alice_api, action="monitor", url=f"{docs.url}/prices")
    assert second["ok"] is True, second
    lines = second["result"].splitlines()
    assert lines[0].startswith(f"{docs.url}/prices since ") and lines[0].endswith(
        " added, 1 removed (baseline now updated in state/monitor/" + lines[0].rsplit("/", 1)[1]
    )
    assert "+ Pro costs $12 a month." in lines and "- Pro costs $9 a month." in lines


def test_a_crawl_carries_on_where_the_last_test_stopped(alice_api, workspace, docs):
    first = call(alice_api, action="crawl", url=f"{docs.url}/", limit=2)
    assert first["result"].startswith(f"crawled {docs.url}/: 2 pages this call, 2 in all"), first
    second = call(alice_api, action="crawl", url=f"{docs.url}/", limit=50)
    assert second["result"].startswith(f"resumed the crawl of {docs.url}/: 5 pages this call, 7 in all"), second


def test_the_scratch_lists_its_files_and_each_downloads_as_it_was_written(alice_api, bob_api, workspace, docs):
    call(alice_api, action="crawl", url=f"{docs.url}/", limit=50)
    listing = bob_api.get(SCRATCH)
    assert listing.status_code == 200
    body = listing.json()
    paths = [f["path"] for f in body["files"]]
    assert "outputs/crawl/index.md" in paths and all(p.startswith("outputs/crawl/") for p in paths), paths
    assert body["bytes"] == sum(f["size"] for f in body["files"]) and body["limit"] == 20 * 1024 * 1024
    kept = ScratchFile.objects.get(workspace=workspace, tool="web", path="outputs/crawl/index.md")
    download = bob_api.get(f"{SCRATCH}/outputs/crawl/index.md")
    assert download.status_code == 200
    assert download.content == bytes(kept.content) and download.content.startswith(b"# ")
    assert download["Content-Disposition"] == 'attachment; filename="index.md"'
    missing = bob_api.get(f"{SCRATCH}/outputs/crawl/nothing.md")
    assert missing.status_code == 404
    assert missing.json()["message"] == "The Tool Test scratch of web has no file outputs/crawl/nothing.md."


def test_alice_clears_the_scratch_and_the_next_monitor_is_a_first_look_again(alice_api, workspace, docs):
    call(alice_api, action="monitor", url=f"{docs.url}/prices")
    cleared = alice_api.delete(SCRATCH)
    assert cleared.status_code == 200
    assert cleared.json() == {"tool": "web", "cleared": 1}
    assert alice_api.get(SCRATCH).json()["files"] == []
    again = call(alice_api, action="monitor", url=f"{docs.url}/prices")
    assert again["result"].startswith(f"first look at {docs.url}/prices")


def test_bob_reads_the_scratch_but_may_not_clear_it(alice_api, bob_api, workspace, docs):
    call(alice_api, action="monitor", url=f"{docs.url}/prices")
    refused = bob_api.delete(SCRATCH)
    assert refused.status_code == 403
    assert ScratchFile.objects.filter(workspace=workspace, tool="web").count() == 1
    assert len(bob_api.get(SCRATCH).json()["files"]) == 1


def test_charlie_gets_a_404_for_another_accounts_scratch_and_its_files(
    alice_api, charlie_api, charlie, workspace, docs
):
    call(alice_api, action="monitor", url=f"{docs.url}/prices")
    path = ScratchFile.objects.get(workspace=workspace).path
    # charlie's own account has a workspace of the same name: still not alice's scratch
    Workspace.objects.create(account=charlie.memberships.get().account, name="rank-desk")
    assert charlie_api.get(SCRATCH).json()["files"] == []
    assert charlie_api.get(f"{SCRATCH}/{path}").status_code == 404
    assert charlie_api.delete(SCRATCH).json() == {"tool": "web", "cleared": 0}
    assert ScratchFile.objects.filter(workspace=workspace).count() == 1
    Workspace.objects.filter(account=charlie.memberships.get().account).delete()
    for answer in (charlie_api.get(SCRATCH), charlie_api.get(f"{SCRATCH}/{path}"), charlie_api.delete(SCRATCH)):
        assert answer.status_code == 404


def test_the_scratch_is_per_workspace_and_per_tool(alice_api, account, workspace, docs):
    call(alice_api, action="monitor", url=f"{docs.url}/prices")
    Workspace.objects.create(account=account, name="other-desk")
    other = alice_api.post(
        "/api/workspaces/other-desk/tools/web/test",
        {"arguments": {"action": "monitor", "url": f"{docs.url}/prices"}},
        format="json",
    ).json()
    assert other["result"].startswith(f"first look at {docs.url}/prices")
    assert alice_api.get(f"{TOOLS}/fetch-page/scratch").json() == {
        "tool": "fetch-page",
        "files": [],
        "bytes": 0,
        "limit": 20 * 1024 * 1024,
    }


def test_the_scratch_never_writes_the_workspaces_files(alice_api, workspace, docs):
    push(workspace, {"state/notes.md": "kept by the desk\n"})
    before = Changeset.objects.filter(workspace=workspace).count()
    call(alice_api, action="monitor", url=f"{docs.url}/prices")
    call(alice_api, action="monitor", url=f"{docs.url}/prices")
    assert Changeset.objects.filter(workspace=workspace).count() == before
    # the desk's own state/ file, left as it was, is the workspace's, not the scratch's
    assert [f["path"] for f in alice_api.get(SCRATCH).json()["files"]] == [
        ScratchFile.objects.get(workspace=workspace).path
    ]


def test_a_full_scratch_keeps_what_fits_and_says_what_it_left_out(alice_api, workspace, docs, settings):
    settings.FOLDRUN_TOOL_SCRATCH_BYTES = 2000
    body = call(alice_api, action="crawl", url=f"{docs.url}/", limit=50)
    assert body["ok"] is True
    kept = body["scratch"]
    assert kept["bytes"] <= 2000 and kept["limit"] == 2000
    note = kept["note"]
    assert note.startswith("The Tool Test scratch of web is full: it keeps at most 2 KB of state/ and outputs/, so ")
    assert note.endswith(
        " not kept and the next test will not see them. Clear the scratch (Clear on the Tools tab, "
        "or DELETE /api/workspaces/rank-desk/tools/web/scratch) to start again."
    )
    listed = alice_api.get(SCRATCH).json()
    assert listed["bytes"] == kept["bytes"] and len(listed["files"]) == kept["files"]


def test_a_secret_the_call_used_is_redacted_from_what_the_scratch_keeps(alice_api, workspace, docs):
    from vault.actions import do_set_secret

    push(
        workspace,
        {
            "tools/echo/tool.md": "---\ntransport: script\nname: echo\nrun: run.py\nargs: {}\n"
            "secrets: [ECHO_TOKEN]\n---\n",
            "tools/echo/run.py": "import os, pathlib\npathlib.Path('outputs/token.txt').write_text("
            "os.environ['ECHO_TOKEN'])\nprint('done')\n",
        },
    )
    do_set_secret(workspace.account, workspace, "ECHO_TOKEN", value="tok-very-secret-1")
    body = alice_api.post(f"{TOOLS}/echo/test", {"arguments": {}}, format="json").json()
    assert body["ok"] is True, body
    kept = alice_api.get(f"{TOOLS}/echo/scratch/outputs/token.txt")
    assert kept.content == b"[secret ECHO_TOKEN]"
    assert "tok-very-secret-1" not in json.dumps(body)
