"""A push of many files is atomic: fifty good files land as one revision; one bad file among them writes
nothing and names that file. (Issue 2, item 5.)"""

from __future__ import annotations

from library.models import Changeset, LibraryFile


P = "/api/workspaces/rank-desk"


def test_fifty_files_with_one_bad_one_write_nothing(world, alice_api):
    before = (Changeset.objects.count(), LibraryFile.objects.count())
    good = [
        {
            "path": f"knowledge/topic-{n:02}.md",
            "content": f"---\ntype: Reference\ntitle: Topic {n}\ndescription: About {n}.\n---\nx\n",
        }
        for n in range(49)
    ]
    bad = {"path": "agents/broken/agent.md", "content": "---\nname: [unclosed\n---\nbody\n"}
    response = alice_api.post(f"{P}/push", {"message": "fifty", "files": good[:25] + [bad] + good[25:]}, format="json")
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["file"] == "agents/broken/agent.md"
    assert response.json()["message"].startswith("Nothing was written: agents/broken/agent.md")
    assert (Changeset.objects.count(), LibraryFile.objects.count()) == before
    assert alice_api.get(f"{P}/files/knowledge/topic-00.md").status_code == 404


def test_fifty_good_files_land_as_one_revision(world, alice_api):
    good = [
        {
            "path": f"knowledge/topic-{n:02}.md",
            "content": f"---\ntype: Reference\ntitle: Topic {n}\ndescription: About {n}.\n---\nx\n",
        }
        for n in range(50)
    ]
    response = alice_api.post(f"{P}/push", {"message": "fifty", "files": good}, format="json")
    assert response.status_code == 201
    assert response.json()["revision"]["number"] == 2
    assert len(alice_api.get(f"{P}/revisions/2").json()["changed"]) == 52  # and index.md, log.md
