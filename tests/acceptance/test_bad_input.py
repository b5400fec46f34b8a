"""Issue 2, "Bad input, and what it gets": malformed frontmatter, a binary
file where markdown belongs, a file over the size limit, `..` or an absolute
path in a push, a name with odd characters, an unknown workspace, a duplicate
name, an expired token — each a 4xx with a clear sentence naming the file or
field, and nothing half-written.

Each push carries a good file beside the bad one: neither may land."""

from __future__ import annotations

import base64
import datetime as dt

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import ApiToken, Workspace
from library.models import Changeset, LibraryFile

from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401  (fixtures)

from .conftest import AGENT, NOT_FOUND

P = "/api/workspaces/rank-desk"
GOOD = {"path": "agents/helper/agent.md", "content": AGENT.replace("researcher", "helper")}


def written() -> tuple[int, int]:
    return Changeset.objects.count(), LibraryFile.objects.count()


def push_with_good(api, bad: dict, verb: str = "push"):
    return api.post(f"{P}/{verb}", {"message": "m", "files": [GOOD, bad]}, format="json")


def test_malformed_frontmatter_names_the_file_the_line_and_the_parser_and_writes_nothing(world, alice_api):
    before = written()
    response = push_with_good(
        alice_api, {"path": "agents/broken/agent.md", "content": "---\nname: [unclosed\n---\nbody\n"}
    )
    assert response.status_code == 422
    assert response.json()["message"] == (
        "Nothing was written: agents/broken/agent.md:2: error: the YAML frontmatter is "
        "malformed: while parsing a flow sequence, did not find expected ',' or ']'."
    )
    assert written() == before


def test_frontmatter_that_is_not_a_mapping_is_refused_naming_the_file(world, alice_api):
    before = written()
    response = push_with_good(alice_api, {"path": "agents/listy/agent.md", "content": "---\n- a\n- b\n---\nbody\n"})
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["file"] == "agents/listy/agent.md"
    assert written() == before


def test_a_binary_file_where_markdown_belongs_names_the_file_and_writes_nothing(world, alice_api):
    before = written()
    blob = base64.b64encode(b"\x89PNG\r\n\x1a\n\x00\xff").decode()
    response = push_with_good(alice_api, {"path": "knowledge/logo.md", "content": blob, "encoding": "base64"})
    assert response.status_code == 422
    assert response.json()["message"] == (
        "Nothing was written: knowledge/logo.md: error: is not UTF-8 text; a markdown file or a program must be text"
        " — keep other bytes in storage/."
    )
    assert written() == before


def test_a_nul_byte_in_text_content_names_the_file(world, alice_api):
    response = push_with_good(alice_api, {"path": "agents/z/agent.md", "content": "---\nname: z\n---\n\x00\x01"})
    assert response.status_code in (400, 422)
    assert "agents/z/agent.md" in response.json()["message"]


def test_a_file_over_the_size_limit_names_the_file_and_the_limit_and_writes_nothing(world, alice_api, settings):
    settings.FOLDRUN_MAX_FILE_BYTES = 1000
    before = written()
    response = push_with_good(alice_api, {"path": "state/big.csv", "content": "x" * 1001})
    assert response.status_code == 422
    assert (
        response.json()["message"]
        == "Nothing was written: state/big.csv: error: is 1001 bytes; a file may be at most 1000 bytes."
    )
    assert written() == before


def test_a_dashboard_edit_over_the_size_limit_is_refused_too(world, alice_api, settings):
    settings.FOLDRUN_MAX_FILE_BYTES = 1000
    before = written()
    response = alice_api.put(f"{P}/files/knowledge/keywords.md", {"message": "m", "content": "x" * 1001}, format="json")
    assert response.status_code == 422
    assert "knowledge/keywords.md" in response.json()["message"]
    assert written() == before


def test_a_dot_dot_path_in_a_push_is_refused_naming_it_and_writes_nothing(world, alice_api):
    before = written()
    response = push_with_good(alice_api, {"path": "agents/../../etc/passwd", "content": "x"})
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["message"] == (
        "agents/../../etc/passwd: '..' is refused; a path must stay inside the desk."
    )
    assert written() == before


def test_a_backslash_dot_dot_path_is_refused_too(world, alice_api):
    before = written()
    response = push_with_good(alice_api, {"path": "notes\\..\\..\\x.md", "content": "x"})
    assert response.status_code == 422
    assert written() == before


def test_an_absolute_path_in_a_push_is_refused_naming_it_and_writes_nothing(world, alice_api):
    before = written()
    response = push_with_good(alice_api, {"path": "/etc/passwd", "content": "x"})
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["message"] == (
        "/etc/passwd: absolute paths are refused; give a path relative to the desk."
    )
    assert written() == before


def test_a_dot_dot_path_in_a_deploy_or_an_edit_is_refused(world, alice_api):
    before = written()
    deployed = push_with_good(alice_api, {"path": "../x.md", "content": "x"}, verb="deploy")
    edited = alice_api.put(f"{P}/files/agents/%2E%2E/%2E%2E/etc/x.md", {"message": "m", "content": "x"}, format="json")
    assert (deployed.status_code, edited.status_code) == (422, 422)
    assert "'..' is refused" in edited.json()["message"]
    assert written() == before


def test_odd_characters_in_a_path_are_refused_naming_it(world, alice_api):
    before = written()
    response = push_with_good(alice_api, {"path": "notes/a*b.md", "content": "x"})
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["message"] == (
        "notes/a*b.md: 'a*b.md' has characters foldrun does not accept in a path; use letters, digits, '.', '-', '_', "
        "'@', '+' and spaces."
    )
    assert written() == before


def test_a_path_ending_in_a_newline_is_refused(world, alice_api):
    before = written()
    response = push_with_good(alice_api, {"path": "agents/x/agent.md\n", "content": AGENT})
    assert response.status_code == 422
    assert written() == before


def test_a_file_where_a_folder_of_the_desk_is_a_conflict_and_refused(world, alice_api):
    before = written()
    response = push_with_good(alice_api, {"path": "agents", "content": "x"})
    assert response.status_code == 409  # a clash with the desk's own folders
    assert "agents" in response.json()["message"]
    assert written() == before


def test_a_workspace_name_with_odd_characters_is_refused_naming_the_field(world, alice_api):
    created = alice_api.post("/api/workspaces", {"name": "Rank Desk!"}, format="json")
    renamed = alice_api.patch(P, {"name": "a/b"}, format="json")
    assert created.status_code == renamed.status_code == 400
    assert created.json()["message"] == (
        "name: 'Rank Desk!' is not a valid workspace name; use lowercase letters, "
        "digits and dashes, starting with a letter or digit, at most 63 characters."
    )
    assert created.json()["details"] == {"field": "name"}
    assert list(Workspace.objects.values_list("name", flat=True)) == ["rank-desk"]


def test_a_secret_name_with_odd_characters_is_refused_naming_the_field(world, alice_api):
    response = alice_api.put("/api/secrets/lower-case", {"value": "v"}, format="json")
    assert response.status_code == 400
    assert response.json()["details"] == {"field": "name"}
    assert "UPPER_SNAKE_CASE" in response.json()["message"]


def test_an_agent_name_with_odd_characters_is_refused_on_deploy_naming_the_file(world, alice_api):
    before = written()
    response = alice_api.post(
        f"{P}/deploy",
        {
            "message": "m",
            "files": [
                {
                    "path": "agents/odd/agent.md",
                    "content": "---\nname: Odd Agent!\ndescription: d\ntools: [read]\n---\nx\n",
                }
            ],
        },
        format="json",
    )
    assert response.status_code == 422
    assert response.json()["details"]["findings"][0]["file"] == "agents/odd/agent.md"
    assert written() == before


def test_an_unknown_workspace_is_a_404_and_nothing_is_created(world, alice_api):
    response = alice_api.post("/api/workspaces/no-such-desk/push", {"message": "m", "files": [GOOD]}, format="json")
    assert (response.status_code, response.json()) == (404, NOT_FOUND)
    assert not Workspace.objects.filter(name="no-such-desk").exists()


# The CLI's sentence for an unknown workspace ("There is no workspace called
# no-such-desk in this account; …") is proven in tests/cli/test_desk_live.py.


def test_a_duplicate_workspace_name_is_a_409_naming_the_field(world, alice_api):
    created = alice_api.post("/api/workspaces", {"name": "rank-desk"}, format="json")
    alice_api.post("/api/workspaces", {"name": "other"}, format="json")
    renamed = alice_api.patch("/api/workspaces/other", {"name": "rank-desk"}, format="json")
    assert created.status_code == renamed.status_code == 409
    assert created.json() == {
        "code": "duplicate",
        "message": "name: a workspace called 'rank-desk' already exists in this account.",
        "details": {"field": "name"},
    }
    assert sorted(Workspace.objects.values_list("name", flat=True)) == ["other", "rank-desk"]


def test_a_duplicate_path_in_one_push_names_it_and_writes_nothing(world, alice_api):
    before = written()
    response = alice_api.post(f"{P}/push", {"message": "m", "files": [GOOD, dict(GOOD, content=AGENT)]}, format="json")
    assert response.status_code == 422
    assert response.json()["message"] == (
        "Nothing was written: agents/helper/agent.md: error: appears more than once "
        "in this request; send each path once."
    )
    assert written() == before


def test_two_agents_with_one_name_are_refused_on_deploy_naming_both_files(world, alice_api):
    before = written()
    response = alice_api.post(
        f"{P}/deploy", {"message": "m", "files": [{"path": "agents/other/agent.md", "content": AGENT}]}, format="json"
    )
    assert response.status_code == 422
    assert response.json()["message"].startswith(
        "The deploy was refused; nothing was written: agents/researcher/agent.md:2: error: the agent name researcher is "
        "also used by agents/other/agent.md; two agents in this workspace cannot share a name."
    )
    assert written() == before


def test_an_expired_token_is_a_401_with_a_sentence_and_writes_nothing(world, alice):
    token = alice_api_token = ApiToken.mint()
    from accounts.models import hash_token

    ApiToken.objects.create(
        user=alice,
        account=alice.memberships.first().account,
        name="old",
        token_hash=hash_token(alice_api_token),
        hint=token[:8],
        expires_at=timezone.now() - dt.timedelta(seconds=1),
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
    before = written()
    response = client.post(f"{P}/push", {"message": "m", "files": [GOOD]}, format="json")
    assert response.status_code == 401
    assert response.json() == {
        "code": "authentication_failed",
        "message": "This API token has expired; run `foldrun login` for a new one.",
        "details": {},
    }
    assert written() == before


def test_an_unknown_api_address_is_a_json_404(world, alice_api):
    response = alice_api.get("/api/no-such-thing")
    assert response.status_code == 404
    assert response.json() == NOT_FOUND


@pytest.fixture
def cli_desk(cli, signed_in_as, alice, workspace, tmp_path):
    """A clean desk from `foldrun init`, and the CLI signed in as alice."""
    signed_in_as(alice)
    assert cli("init", tmp_path / "d", "--name", "rank-desk").code == 0
    return tmp_path / "d"


@pytest.mark.django_db(transaction=True)
def test_the_cli_push_of_a_binary_agent_file_prints_the_sentence_and_writes_nothing(cli, cli_desk, workspace):
    (cli_desk / "agents/assistant/agent.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff")
    result = cli("push", cli_desk, "--to", "rank-desk")
    assert result.code == 1
    assert (
        "agents/assistant/agent.md: error: is not UTF-8 text; a markdown file or a program must be text — keep "
        "other bytes in storage/."
    ) in result.err_lines
    assert not Changeset.objects.filter(workspace=workspace).exists()


@pytest.mark.django_db(transaction=True)
def test_the_cli_push_of_malformed_frontmatter_prints_file_line_and_parser(cli, cli_desk, workspace):
    (cli_desk / "flows/hello.md").write_text("---\nname: [hello\n---\n1. [[assistant]] — Hi.\n")
    result = cli("push", cli_desk, "--to", "rank-desk")
    assert result.code == 1
    assert any(
        line.startswith("flows/hello.md:2: error: the YAML frontmatter is malformed:") for line in result.err_lines
    )
    assert not Changeset.objects.filter(workspace=workspace).exists()


@pytest.mark.django_db(transaction=True)
def test_the_cli_push_of_a_concept_without_type_prints_the_sentence(cli, cli_desk, workspace):
    (cli_desk / "knowledge/untyped.md").write_text("---\ntitle: T\ndescription: D.\n---\nx\n")
    result = cli("push", cli_desk, "--to", "rank-desk")
    assert result.code == 1
    assert any(
        line.startswith("knowledge/untyped.md:1: error: has no type: in its frontmatter;") for line in result.err_lines
    )
    assert not Changeset.objects.filter(workspace=workspace).exists()


def test_the_schema_without_its_slash_still_redirects(client, db):
    response = client.get("/api/schema")
    assert (response.status_code, response["Location"]) == (301, "/api/schema/")
