"""The gallery shelf: listed, installed as a copy, upgraded, followed while unedited."""

from __future__ import annotations

import pytest
from django.core.management import call_command

from foldrun.gallery import gallery_files, gallery_tools
from library.actions.gallery import sync_gallery_copies
from library.models import Changeset, LibraryFile

from .conftest import files, push

NOT_FOUND = {"code": "not_found", "message": "Not found.", "details": {}}
TOOL_V1 = "---\nname: web\ntransport: builtin\ndescription: Reach the web, version one.\n---\nv1\n"
TOOL_V2 = "---\nname: web\ntransport: builtin\ndescription: Reach the web, version two.\n---\nv2\n"


@pytest.fixture
def shelf(tmp_path, monkeypatch):
    """A shelf folder of our own holding web v1; write TOOL_V2 to move it on."""
    tool = tmp_path / "tools" / "web" / "tool.md"
    tool.parent.mkdir(parents=True)
    tool.write_text(TOOL_V1)
    monkeypatch.setenv("FOLDRUN_GALLERY_DIR", str(tmp_path))
    return tool


def test_the_packaged_shelf_ships_the_web_tool_describing_its_eight_actions():
    text = gallery_files()["tools/web/tool.md"]
    for action in ("search", "fetch", "browse", "crawl", "map", "extract", "answer", "monitor"):
        assert f"action={action}" in text
    assert "actions: [search, fetch, browse, crawl, map, extract, answer, monitor]" in text
    assert list(gallery_tools()) == ["web"]


def test_the_gallery_lists_the_shelf_and_no_copy_yet(alice_api, shelf):
    body = alice_api.get("/api/gallery").json()
    assert body["results"][0]["name"] == "web"
    assert body["results"][0]["description"] == "Reach the web, version one."
    assert body["results"][0]["kept"] is False
    assert body["results"][0]["mark"] is None
    assert body["results"][0]["files"][0]["path"] == "tools/web/tool.md"


def test_install_copies_the_tool_into_the_library_marked_current(alice_api, shelf):
    response = alice_api.post("/api/library/gallery/web/install", {}, format="json")
    assert response.status_code == 201
    assert response.json()["changed"] == [{"path": "tools/web/tool.md", "action": "added"}]
    assert Changeset.objects.get(number=1, workspace=None).kind == "gallery"
    listing = alice_api.get("/api/library/files").json()["results"]
    assert listing[0]["gallery"] == "gallery · current"
    gallery = alice_api.get("/api/gallery").json()["results"][0]
    assert (gallery["kept"], gallery["mark"]) == (True, "gallery · current")


def test_install_into_a_workspace(alice_api, workspace, shelf):
    response = alice_api.post("/api/library/gallery/web/install", {"workspace": "rank-desk"}, format="json")
    assert response.status_code == 201
    assert alice_api.get("/api/workspaces/rank-desk/files").json()["results"][0]["gallery"] == "gallery · current"
    assert alice_api.get("/api/gallery").json()["results"][0]["copies"] == [
        {"scope": "workspace", "workspace": "rank-desk", "mark": "gallery · current"}
    ]


def test_an_edited_copy_is_marked_differs_and_keeps_its_origin(alice_api, shelf):
    alice_api.post("/api/library/gallery/web/install", {}, format="json")
    push(alice_api, "library", files=files(**{"tools/web/tool.md": TOOL_V1 + "my note\n"}))
    assert alice_api.get("/api/library/files").json()["results"][0]["gallery"] == "gallery · differs"
    assert alice_api.get("/api/library/files/tools/web/tool.md").json()["gallery"] == "gallery · differs"


def test_an_unedited_copy_follows_the_gallery(alice_api, shelf):
    alice_api.post("/api/library/gallery/web/install", {}, format="json")
    shelf.write_text(TOOL_V2)
    assert alice_api.get("/api/library/files").json()["results"][0]["gallery"] == "gallery · differs"
    written = sync_gallery_copies()
    assert len(written) == 1
    assert written[0].kind == "gallery"
    assert alice_api.get("/api/library/files/tools/web/tool.md").json()["content"] == TOOL_V2
    assert alice_api.get("/api/library/files").json()["results"][0]["gallery"] == "gallery · current"
    assert sync_gallery_copies() == []


def test_an_edited_copy_is_never_changed_under_the_account(alice_api, shelf):
    alice_api.post("/api/library/gallery/web/install", {}, format="json")
    push(alice_api, "library", files=files(**{"tools/web/tool.md": TOOL_V1 + "mine\n"}))
    shelf.write_text(TOOL_V2)
    assert sync_gallery_copies() == []
    assert alice_api.get("/api/library/files/tools/web/tool.md").json()["content"] == TOOL_V1 + "mine\n"


def test_update_to_gallery_version_writes_the_shelf_and_keeps_the_edit_one_revision_back(alice_api, shelf):
    alice_api.post("/api/library/gallery/web/install", {}, format="json")
    push(alice_api, "library", files=files(**{"tools/web/tool.md": TOOL_V1 + "mine\n"}))
    shelf.write_text(TOOL_V2)
    response = alice_api.post("/api/library/gallery/web/upgrade", {}, format="json")
    assert response.status_code == 201
    assert response.json()["revision"]["number"] == 3
    assert response.json()["revision"]["kind"] == "gallery"
    assert alice_api.get("/api/library/files/tools/web/tool.md").json()["content"] == TOOL_V2
    assert alice_api.get("/api/library/files/tools/web/tool.md?at=2").json()["content"] == TOOL_V1 + "mine\n"
    assert alice_api.get("/api/library/files").json()["results"][0]["gallery"] == "gallery · current"


def test_upgrade_without_a_copy_says_to_install_first(alice_api, shelf):
    response = alice_api.post("/api/library/gallery/web/upgrade", {}, format="json")
    assert response.status_code == 409
    assert response.json()["message"] == "The account library keeps no copy of web; install it first."


def test_an_unknown_gallery_tool_is_404(alice_api, shelf):
    assert alice_api.post("/api/library/gallery/slack/install", {}, format="json").json() == NOT_FOUND


def test_the_sync_gallery_command_updates_unedited_copies(alice_api, shelf):
    alice_api.post("/api/library/gallery/web/install", {}, format="json")
    shelf.write_text(TOOL_V2)
    call_command("sync_gallery")
    head = LibraryFile.objects.get(path="tools/web/tool.md").head
    assert head.content == TOOL_V2
    assert head.gallery_tool == "web"


def test_bob_may_list_the_gallery_but_not_install_or_upgrade(bob_api, shelf):
    assert bob_api.get("/api/gallery").status_code == 200
    assert bob_api.post("/api/library/gallery/web/install", {}, format="json").status_code == 403
    assert bob_api.post("/api/library/gallery/web/upgrade", {}, format="json").status_code == 403


def test_charlie_cannot_install_into_alices_workspace(charlie_api, workspace, shelf):
    response = charlie_api.post("/api/library/gallery/web/install", {"workspace": "rank-desk"}, format="json")
    assert response.json() == NOT_FOUND
    response = charlie_api.post("/api/library/gallery/web/upgrade", {"workspace": "rank-desk"}, format="json")
    assert response.json() == NOT_FOUND
    assert LibraryFile.objects.filter(workspace=workspace).count() == 0


def test_charlie_sees_no_copies_of_alices_account(alice_api, charlie_api, shelf):
    alice_api.post("/api/library/gallery/web/install", {}, format="json")
    assert charlie_api.get("/api/gallery").json()["results"][0]["kept"] is False


def test_one_shelf_tool_comes_with_its_content_for_a_laptop(alice_api, bob_api, shelf):
    body = alice_api.get("/api/gallery/web").json()
    assert body["files"][0]["path"] == "tools/web/tool.md"
    assert body["files"][0]["content"] == TOOL_V1
    assert bob_api.get("/api/gallery/web").status_code == 200
    assert alice_api.get("/api/gallery/slack").json() == NOT_FOUND


def test_the_sync_task_reports_how_many_copies_it_updated(alice_api, shelf):
    from library.tasks import sync_gallery

    alice_api.post("/api/library/gallery/web/install", {}, format="json")
    shelf.write_text(TOOL_V2)
    assert sync_gallery.apply().get() == 1
    assert sync_gallery.apply().get() == 0


def test_a_migrate_of_a_new_platform_version_brings_unedited_copies_along(alice_api, shelf):
    alice_api.post("/api/library/gallery/web/install", {}, format="json")
    shelf.write_text(TOOL_V2)
    call_command("migrate", verbosity=0)
    assert LibraryFile.objects.get(path="tools/web/tool.md").head.content == TOOL_V2
