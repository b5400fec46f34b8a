"""Issue 34, item 2: `foldrun run FLOW --idempotency-key KEY` sends the Idempotency-Key header — run twice with one
key and the same inputs it names one run; with other inputs the server's 422 names the key; a bad key is the
server's sentence naming the header, and a --local run takes no key. On a real server, no worker."""

from __future__ import annotations

import pytest

from runs.models import Run
from tests.runs.helpers import agent_file, push

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def desk(workspace, fake_provider):
    push(
        workspace,
        {
            "agents/intake/agent.md": agent_file("intake", fake_provider),
            "flows/intake.md": "---\nname: intake\n---\n1. [[intake]] — Handle {{order}}.\n",
        },
    )
    return workspace


def run_with_key(cli, key: str, order: str = "A-17"):
    return cli("run", "intake", "--to", "rank-desk", "--input", f"order={order}", "--idempotency-key", key, "--json")


def test_run_twice_with_one_key_and_the_same_inputs_names_one_run(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    first = run_with_key(cli, "nightly-2026-12-08")
    again = run_with_key(cli, "nightly-2026-12-08")
    assert (first.code, again.code) == (0, 0)
    assert first.json["id"] == again.json["id"]
    assert Run.objects.count() == 1


def test_the_second_run_with_the_key_says_it_started_nothing_new(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    first = cli("run", "intake", "--to", "rank-desk", "--input", "order=A-17", "--idempotency-key", "k-1")
    again = cli("run", "intake", "--to", "rank-desk", "--input", "order=A-17", "--idempotency-key", "k-1")
    run = Run.objects.get().public_id
    see = f"(intake in rank-desk). See it with `foldrun report {run} --to rank-desk`."
    assert (first.code, first.out) == (0, f"Started {run} {see}\n")
    assert (again.code, again.out) == (0, f"Key k-1 started {run} before; nothing new was started {see}\n")


def test_the_same_key_with_other_inputs_is_refused_naming_the_key(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    first = run_with_key(cli, "nightly-2026-12-08").json["id"]
    other = cli("run", "intake", "--to", "rank-desk", "--input", "order=B-2", "--idempotency-key", "nightly-2026-12-08")
    assert (other.code, other.out) == (1, "")
    assert other.err == (
        f"Idempotency-Key nightly-2026-12-08 was used within the last 24 hours with another request (it started "
        f"{first}); a key stands for one request: send that request again, or use a new key to start something new.\n"
    )
    assert Run.objects.count() == 1


def test_an_empty_key_is_the_servers_sentence_naming_the_header(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    result = cli("run", "intake", "--to", "rank-desk", "--idempotency-key", "")
    assert result.code == 1
    assert result.err == (
        "Idempotency-Key: a key is 1 to 255 printable ASCII characters (a UUID makes a good one), and this one is "
        "empty; nothing was started.\n"
    )
    assert not Run.objects.exists()


def test_a_key_that_is_not_ascii_is_refused_before_anything_is_sent(cli, desk, alice, signed_in_as):
    signed_in_as(alice)
    result = cli("run", "intake", "--to", "rank-desk", "--idempotency-key", "clé")
    assert result.code == 2
    assert result.err == "--idempotency-key: a key is 1 to 255 printable ASCII characters.\n"
    assert not Run.objects.exists()


def test_a_local_run_takes_no_key(cli, tmp_path):
    result = cli("run", "intake", "--local", "--path", tmp_path, "--idempotency-key", "k1")
    assert result.code == 2
    assert result.err == "--idempotency-key is for a run on the server (--to); a --local run takes none.\n"
