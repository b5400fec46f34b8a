"""Issue 34, item 2: an Idempotency-Key on `POST …/runs` starts one run. For 24 hours the same key and the same
body answer the run the first request started (201 again, `Idempotent-Replayed: true`); the same key with another
body is a 422 naming the key; keys are the workspace's own, so another account's never finds this run; a bad key
is a 400 naming the header; a key older than a day starts a new run; simultaneous requests with one key, behind a
barrier over real connections, start one run — the database's unique constraint decides."""

from __future__ import annotations

import datetime as dt
import threading

import httpx
import pytest
from django.utils import timezone

from accounts.models import Workspace
from runs.models import IdempotencyKey, Run
from runs.triggers import run_chores
from tests.cli.conftest import mint_token
from tests.conftest import client_for
from tests.runs.helpers import agent_file, push

URL = "/api/workspaces/rank-desk/runs"
BODY = {"flow": "intake", "inputs": {"order": "A-17"}}
KEY = "2f1c9a6e-order-A-17"
HEADER_SENTENCE = (
    "Idempotency-Key: a key is 1 to 255 printable ASCII characters (a UUID makes a good one), and this one is {what}; "
    "nothing was started."
)


def desk_files(fake) -> dict[str, str]:
    return {
        "agents/intake/agent.md": agent_file("intake", fake),
        "flows/intake.md": "---\nname: intake\n---\n1. [[intake]] — Handle {{order}}.\n",
    }


@pytest.fixture
def desk(workspace, fake_provider):
    push(workspace, desk_files(fake_provider))
    return workspace


def start(api, body=BODY, key: str | None = KEY, url: str = URL):
    headers = {"HTTP_IDEMPOTENCY_KEY": key} if key is not None else {}
    return api.post(url, body, format="json", **headers)


# ------------------------------------------------------------------ the same key, the same body: the same run


@pytest.mark.django_db
def test_the_same_key_and_body_sent_again_answer_the_run_the_first_started(desk, alice_api):
    first = start(alice_api)
    again = start(alice_api)
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.json()["id"] == first.json()["id"]
    assert Run.objects.count() == 1
    assert "Idempotent-Replayed" not in first.headers
    assert again.headers["Idempotent-Replayed"] == "true"


@pytest.mark.django_db
def test_the_body_is_compared_as_json_so_key_order_and_spacing_do_not_matter(desk, alice_api):
    first = start(alice_api, {"flow": "intake", "inputs": {"order": "A-17"}})
    again = alice_api.post(
        URL,
        '{ "inputs" : {"order": "A-17"},  "flow": "intake" }',
        content_type="application/json",
        HTTP_IDEMPOTENCY_KEY=KEY,
    )
    assert again.status_code == 201
    assert again.json()["id"] == first.json()["id"]


@pytest.mark.django_db
def test_without_a_key_each_request_starts_its_own_run(desk, alice_api):
    assert start(alice_api, key=None).json()["id"] != start(alice_api, key=None).json()["id"]
    assert Run.objects.count() == 2


# ------------------------------------------------------------------ the same key, another body: 422 naming it


@pytest.mark.django_db
def test_the_same_key_with_another_body_is_a_422_naming_the_key_and_starts_nothing(desk, alice_api):
    first = start(alice_api).json()["id"]
    other = start(alice_api, {"flow": "intake", "inputs": {"order": "B-2"}})
    assert other.status_code == 422
    assert other.json()["code"] == "idempotency_key_reused"
    assert other.json()["message"] == (
        f"Idempotency-Key {KEY} was used within the last 24 hours with another request (it started {first}); a key "
        "stands for one request: send that request again, or use a new key to start something new."
    )
    assert other.json()["details"] == {"field": "Idempotency-Key", "key": KEY}
    assert Run.objects.count() == 1


# ------------------------------------------------------------------ keys are the workspace's own


@pytest.mark.django_db
def test_another_accounts_same_key_never_finds_this_run(desk, alice_api, charlie, fake_provider):
    mine = start(alice_api).json()["id"]
    theirs = Workspace.objects.create(account=charlie.memberships.get().account, name="rank-desk")
    push(theirs, desk_files(fake_provider))
    answer = start(client_for(charlie))  # the same path, key and body: charlie's own rank-desk
    assert answer.status_code == 201
    assert answer.json()["id"] != mine
    assert "Idempotent-Replayed" not in answer.headers
    assert Run.objects.get(public_id=answer.json()["id"]).workspace == theirs
    assert Run.objects.get(public_id=mine).workspace == desk


@pytest.mark.django_db
def test_the_same_key_in_another_workspace_of_the_account_starts_its_own_run(desk, alice_api, fake_provider):
    second = Workspace.objects.create(account=desk.account, name="second-desk")
    push(second, desk_files(fake_provider))
    here = start(alice_api).json()["id"]
    there = start(alice_api, url="/api/workspaces/second-desk/runs").json()["id"]
    assert here != there
    assert Run.objects.count() == 2


@pytest.mark.django_db
def test_a_read_only_member_cannot_start_a_run_with_a_key(desk, alice_api, bob_api):
    start(alice_api)
    refused = start(bob_api)
    assert refused.status_code == 403
    assert Run.objects.count() == 1


# ------------------------------------------------------------------ bad keys: a 400 naming the header


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("key", "what"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("k" * 256, "256 characters long"),
        ("k" * 10_240, "10240 characters long"),
        ("clé-à-moi", "not printable ASCII"),
        ("tab\there", "not printable ASCII"),
    ],
)
def test_a_key_that_is_empty_too_long_or_not_ascii_is_a_400_naming_the_header(desk, alice_api, key, what):
    answer = start(alice_api, key=key)
    assert answer.status_code == 400
    assert answer.json()["message"] == HEADER_SENTENCE.format(what=what)
    assert answer.json()["details"] == {"field": "Idempotency-Key"}
    assert Run.objects.count() == 0
    assert IdempotencyKey.objects.count() == 0


@pytest.mark.django_db
def test_a_key_of_255_characters_is_taken(desk, alice_api):
    key = "k" * 255
    assert start(alice_api, key=key).status_code == 201
    assert start(alice_api, key=key).headers["Idempotent-Replayed"] == "true"


@pytest.mark.django_db
def test_a_start_that_is_refused_keeps_no_key_so_the_retry_can_start(workspace, alice_api, fake_provider):
    refused = start(alice_api)  # no flow intake yet
    assert refused.status_code == 404
    assert IdempotencyKey.objects.count() == 0
    push(workspace, desk_files(fake_provider))
    assert start(alice_api).status_code == 201
    assert Run.objects.count() == 1


# ------------------------------------------------------------------ a day later: the key no longer matches


def age(key: str, hours: float) -> None:
    IdempotencyKey.objects.filter(key=key).update(created_at=timezone.now() - dt.timedelta(hours=hours))


@pytest.mark.django_db
def test_a_key_23_hours_old_still_answers_its_run(desk, alice_api):
    first = start(alice_api).json()["id"]
    age(KEY, 23)
    assert start(alice_api).json()["id"] == first


@pytest.mark.django_db
def test_a_key_older_than_a_day_starts_a_new_run_even_with_another_body(desk, alice_api):
    first = start(alice_api).json()["id"]
    age(KEY, 25)
    again = start(alice_api, {"flow": "intake", "inputs": {"order": "B-2"}})
    assert again.status_code == 201
    assert again.json()["id"] != first
    assert "Idempotent-Replayed" not in again.headers
    assert IdempotencyKey.objects.get(key=KEY).run.public_id == again.json()["id"]


@pytest.mark.django_db
def test_the_chores_prune_keys_older_than_a_day_and_keep_the_rest(desk, alice_api):
    start(alice_api, key="old")
    start(alice_api, key="new")
    age("old", 25)
    run_chores()
    assert list(IdempotencyKey.objects.values_list("key", flat=True)) == ["new"]
    assert Run.objects.count() == 2  # the runs stay: only the keys go


# ------------------------------------------------------------------ simultaneous, over real connections


@pytest.mark.django_db(transaction=True)
def test_eight_simultaneous_requests_with_one_key_start_one_run(desk, alice, live_server):
    token = f"Bearer {mint_token(alice)}"
    url = f"{live_server.url}{URL}"
    barrier = threading.Barrier(8)
    answers: list[httpx.Response] = []

    def post() -> None:
        with httpx.Client(timeout=60) as client:
            barrier.wait()
            answers.append(client.post(url, json=BODY, headers={"Authorization": token, "Idempotency-Key": KEY}))

    threads = [threading.Thread(target=post) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert Run.objects.count() == 1
    run = Run.objects.get()
    assert [a.status_code for a in answers] == [201] * 8
    assert {a.json()["id"] for a in answers} == {run.public_id}
    assert [a.headers.get("Idempotent-Replayed") for a in answers].count("true") == 7


# ------------------------------------------------------------------ the schema says so


@pytest.mark.django_db
def test_the_openapi_schema_documents_the_header_and_the_422(alice_api):
    schema = alice_api.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    start_run = schema["paths"]["/api/workspaces/{ws}/runs"]["post"]
    header = next(p for p in start_run["parameters"] if p["name"] == "Idempotency-Key")
    assert (header["in"], header.get("required", False), header["schema"]["type"]) == ("header", False, "string")
    assert "Idempotent-Replayed: true" in header["description"]
    assert "422" in start_run["responses"]
