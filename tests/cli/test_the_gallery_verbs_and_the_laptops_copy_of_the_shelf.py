"""Issue 32, item 5: tools.md, "On a laptop" — `foldrun gallery` lists the shelf and marks which tools the
account keeps its own copy of, `foldrun gallery pull` refreshes the copy kept under
`~/.foldrun/gallery/<host>/`, `foldrun gallery upgrade <tool>` is the Library page's "update to gallery
version"; `foldrun run --local` fetches the gallery before it starts and, "offline, the last copy is used and
the run says so". Against a live server (alice); bad input: a tool not on the shelf, a copy already current or
not kept, a platform that is down."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import pytest

from foldrun.gallery import gallery_tools
from library.actions.gallery import do_install_gallery_tool
from library.actions.writes import FileWrite, do_write_files
from tests.cli.conftest import CannedServer
from vault.local import LocalVault

pytestmark = pytest.mark.django_db(transaction=True)

STUB_AGENTS = (
    "---\nprovider:\n  name: stub\n  base_url: {url}\n  key: ${{STUB_KEY}}\n  model: stub-model\n"
    "  format: openai\n---\nThe desk.\n"
)


def host_folder(home, url: str):
    return home / "gallery" / urlsplit(url).netloc.replace(":", "_")


def test_gallery_lists_the_shelf_and_marks_the_accounts_copies(cli, live_server, alice, account, signed_in_as):
    signed_in_as(alice)
    listed = cli("gallery")
    assert listed.code == 0, listed.err
    assert listed.lines[0].split() == ["TOOL", "YOUR", "COPIES", "DESCRIPTION"]
    assert listed.lines[1].split()[:2] == ["web", "-"]
    do_install_gallery_tool(account=account, workspace=None, name="web", author=alice)
    rows = cli("gallery", "--json").json
    assert [(r["name"], r["kept"], r["mark"]) for r in rows] == [("web", True, "gallery · current")]
    assert "library (gallery · current)" in cli("gallery").lines[1]


def test_gallery_pull_keeps_the_shelf_under_the_hosts_folder(cli, live_server, alice, signed_in_as, foldrun_home):
    signed_in_as(alice)
    pulled = cli("gallery", "pull")
    assert pulled.code == 0, pulled.err
    folder = host_folder(foldrun_home, live_server.url)
    assert pulled.lines[-1] == f"pulled 1 tool(s) from {live_server.url} into {folder}"
    for path, text in gallery_tools()["web"].items():
        assert (folder / path).read_text(encoding="utf-8") == text
    assert cli("gallery", "pull", "--json").json["tools"][0]["name"] == "web"


def test_gallery_upgrade_refuses_a_tool_not_on_the_shelf_a_copy_not_kept_and_one_already_current(
    cli, live_server, alice, account, signed_in_as
):
    signed_in_as(alice)
    missing = cli("gallery", "upgrade", "webb")
    assert (missing.code, missing.err) == (1, "webb is not a tool in the gallery (the shelf has: web).\n")
    not_kept = cli("gallery", "upgrade", "web")
    assert (not_kept.code, not_kept.err) == (
        1,
        "The account library keeps no copy of web; install it first (the Library page's Install).\n",
    )
    do_install_gallery_tool(account=account, workspace=None, name="web", author=alice)
    current = cli("gallery", "upgrade", "web")
    assert (current.code, current.err) == (
        1,
        "web in the account library is already the gallery's version; nothing to upgrade.\n",
    )


def test_gallery_upgrade_brings_an_older_copy_to_the_gallerys_version(cli, live_server, alice, account, signed_in_as):
    signed_in_as(alice)
    do_install_gallery_tool(account=account, workspace=None, name="web", author=alice)
    main = "tools/web/tool.md" if "tools/web/tool.md" in gallery_tools()["web"] else "tools/web.md"
    do_write_files(
        account=account,
        workspace=None,
        writes=[FileWrite(main, gallery_tools()["web"][main] + "\nold\n")],
        kind="push",
        message="an older copy",
        author=alice,
    )
    assert cli("gallery", "--json").json[0]["mark"] == "gallery · differs"
    done = cli("gallery", "upgrade", "web")
    assert done.code == 0, done.err
    assert done.lines == ["web in the account library updated to the gallery's version (1 file(s) changed)."]
    assert cli("gallery", "--json").json[0]["mark"] == "gallery · current"


def test_the_gallery_commands_need_a_platform_signed_in_to(cli):
    result = cli("gallery", "pull")
    assert result.code == 1 and "foldrun login" in result.err


@pytest.fixture
def laptop_desk(cli, tmp_path, fake_provider, foldrun_home):
    root = tmp_path / "desk"
    assert cli("init", root, "--name", "demo").code == 0
    (root / "AGENTS.md").write_text(STUB_AGENTS.format(url=fake_provider.openai_base_url))
    LocalVault(foldrun_home).set("STUB_KEY", "stub-key-1")
    return root


def test_a_laptop_run_offline_uses_the_last_copy_and_says_so(
    cli, live_server, alice, signed_in_as, alice_api, laptop_desk, fake_provider, foldrun_home, monkeypatch
):
    # The platform's own answers, served from a loopback address that then goes down.
    listing = alice_api.get("/api/gallery").content
    web = alice_api.get("/api/gallery/web").content
    platform = CannedServer(
        {"/api/gallery": (200, "application/json", listing), "/api/gallery/web": (200, "application/json", web)}
    )
    signed_in_as(alice)
    monkeypatch.setenv("FOLDRUN_URL", platform.url)
    assert cli("gallery", "pull").code == 0
    pulled_at = json.loads((host_folder(foldrun_home, platform.url) / ".pulled.json").read_text())["pulled_at"]
    platform.close()

    fake_provider.reply_text("GOOD offline")
    result = cli("run", "hello", "--local", "--path", laptop_desk, "--input", "topic=x")
    assert result.code == 0, result.err
    said = f"the gallery could not be fetched from {platform.url} (Could not reach {platform.url}: "
    note = next(line for line in result.err_lines if line.startswith(said))
    assert note.endswith(f"); this run uses the last copy, pulled {pulled_at}")
    runs = foldrun_home / "runs"
    record = json.loads((runs / f"{(runs / 'last').read_text()}.json").read_text())
    assert record["status"] == "completed" and record["notes"] == [note]  # the run's record says so too


def test_a_laptop_run_offline_with_no_copy_uses_the_packaged_one_and_says_so(
    cli, laptop_desk, fake_provider, monkeypatch
):
    monkeypatch.setenv("FOLDRUN_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_not_used")
    fake_provider.reply_text("GOOD offline")
    result = cli("run", "hello", "--local", "--path", laptop_desk, "--input", "topic=x")
    assert result.code == 0, result.err
    assert any(
        line.startswith("the gallery could not be fetched from http://127.0.0.1:9 (")
        and line.endswith(") and no copy was pulled before; this run uses the copy packaged with the CLI")
        for line in result.err_lines
    ), result.err
