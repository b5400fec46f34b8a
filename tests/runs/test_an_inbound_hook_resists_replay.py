"""Issue 29, item 7: an inbound hook resists replay. Standard Webhooks (signed by the real `standardwebhooks`
library), foldrun's `hmac` with a signed timestamp, GitHub's X-Hub-Signature-256 and Stripe's
Stripe-Signature (checked by the real `stripe` library) are each accepted by the flow's `signature:`; a
signed timestamp an hour old is refused with a sentence; the same signed request again — with a new
delivery id, or stripped of its timestamp — starts no second run; a start refused for another reason keeps
nothing, so nothing is lost. The senders sign with the Python and the curl+openssl the docs show."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest
import stripe
from rest_framework.test import APIClient
from standardwebhooks.webhooks import Webhook

from runs.models import HookReceipt, Run
from tests.runs.helpers import agent_file, push
from vault.actions import do_set_secret

SECRET = "inbound-secret-value-1"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "inbound-webhooks.md"
BODY = json.dumps({"order": "A-17"}).encode()
HOUR = 3600


@pytest.fixture
def hooked(workspace, fake_provider):
    files = {"agents/intake/agent.md": agent_file("intake", fake_provider)}
    for scheme in ("hmac", "standard", "github", "stripe"):
        files[f"flows/{scheme}.md"] = (
            f"---\nname: {scheme}\nwebhook: {{signature: {scheme}, secret: INBOUND_KEY}}\n"
            f"---\n1. [[intake]] — Handle {{{{order}}}}.\n"
        )
    push(workspace, files)
    do_set_secret(workspace.account, workspace, "INBOUND_KEY", value=SECRET)
    return workspace


def docs_block(language: str) -> str:
    """The first ```language block of docs/inbound-webhooks.md: what a sender is told to run."""
    return re.search(rf"```{language}\n(.*?)```", DOCS.read_text(), re.S).group(1)


def docs_signer():
    scope: dict = {"__name__": "docs"}
    exec(compile(docs_block("python"), str(DOCS), "exec"), scope)  # noqa: S102 - the docs' own example
    return scope["signed_headers"]


def hook(workspace, flow: str, headers: dict[str, str], body: bytes = BODY):
    meta = {"HTTP_" + name.upper().replace("-", "_"): value for name, value in headers.items()}
    return APIClient().post(
        f"/api/hooks/{workspace.public_id}/{flow}", data=body, content_type="application/json", **meta
    )


def runs(flow: str) -> int:
    return Run.objects.filter(name=flow).count()


def foldrun_headers(at: int, body: bytes = BODY, delivery: str = "dlv_1") -> dict[str, str]:
    digest = hmac.new(SECRET.encode(), f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Foldrun-Timestamp": str(at), "X-Foldrun-Signature": f"sha256={digest}", "X-Foldrun-Delivery": delivery}


# ------------------------------------------------------------------ each scheme, as its own sender signs


@pytest.mark.parametrize("scheme", ["hmac", "standard", "github", "stripe"])
def test_each_scheme_signed_as_the_docs_show_starts_one_run(hooked, scheme):
    answer = hook(hooked, scheme, docs_signer()(scheme, SECRET, BODY))
    assert answer.status_code == 202, answer.json()
    assert Run.objects.get(name=scheme).inputs["order"] == "A-17"


def test_the_standard_webhooks_library_signs_what_the_standard_flow_accepts(hooked):
    secret = "whsec_" + base64.b64encode(b"a key of raw bytes \x00\xff").decode()
    do_set_secret(hooked.account, hooked, "INBOUND_KEY", value=secret)
    now = int(time.time())
    signature = Webhook(secret).sign("msg_2xa", _utc(now), BODY.decode())
    answer = hook(
        hooked,
        "standard",
        {"webhook-id": "msg_2xa", "webhook-timestamp": str(now), "webhook-signature": f"v1,bogus {signature}"},
    )
    assert answer.status_code == 202, answer.json()


def test_the_stripe_library_accepts_the_header_the_docs_sign_and_so_does_the_stripe_flow(hooked):
    headers = docs_signer()("stripe", SECRET, BODY)
    stripe.WebhookSignature.verify_header(BODY.decode(), headers["Stripe-Signature"], SECRET, tolerance=300)
    assert hook(hooked, "stripe", headers).status_code == 202


def test_a_github_delivery_with_a_wrong_signature_is_refused_with_a_sentence(hooked):
    answer = hook(hooked, "github", {"X-Hub-Signature-256": "sha256=" + "0" * 64})
    assert (answer.status_code, answer.json()["code"], answer.json()["message"]) == (
        401,
        "bad_signature",
        "The X-Hub-Signature-256 header is missing or wrong; nothing was started.",
    )
    assert runs("github") == 0


def test_the_specs_plain_x_signature_still_starts_the_hmac_flow(hooked):
    plain = hmac.new(SECRET.encode(), BODY, hashlib.sha256).hexdigest()
    assert hook(hooked, "hmac", {"x-signature": plain}).status_code == 202
    wrong = hook(hooked, "hmac", {"x-signature": "0" * 64})
    assert (wrong.status_code, wrong.json()["message"]) == (
        401,
        "The x-signature header is missing or wrong; nothing was started.",
    )


# ------------------------------------------------------------------ an hour later


def test_a_replay_an_hour_later_is_refused_with_a_sentence_in_each_timestamped_scheme(hooked):
    then = int(time.time()) - HOUR
    standard_secret = SECRET
    signature = Webhook("whsec_" + base64.b64encode(standard_secret.encode()).decode()).sign(
        "msg_old", _utc(then), BODY.decode()
    )
    stripe_sig = hmac.new(SECRET.encode(), f"{then}.".encode() + BODY, hashlib.sha256).hexdigest()
    answers = {
        "hmac": hook(hooked, "hmac", foldrun_headers(then)),
        "standard": hook(
            hooked,
            "standard",
            {"webhook-id": "msg_old", "webhook-timestamp": str(then), "webhook-signature": signature},
        ),
        "stripe": hook(hooked, "stripe", {"Stripe-Signature": f"t={then},v1={stripe_sig}"}),
    }
    said = {name: (a.status_code, a.json()["code"], a.json()["message"]) for name, a in answers.items()}
    header = {
        "hmac": "X-Foldrun-Timestamp",
        "standard": "webhook-timestamp",
        "stripe": "Stripe-Signature timestamp (t=)",
    }
    for name, (status, code, message) in said.items():
        assert (status, code) == (401, "stale_signature"), said
        assert re.fullmatch(
            rf"The {re.escape(header[name])} is 3,6\d\d s from this server's clock, more than the "
            r"300 s a signed webhook may be old: a replay, or a sender whose clock is wrong; "
            r"nothing was started\.",
            message,
        ), message
    assert Run.objects.count() == 0


def test_a_timestamp_just_inside_five_minutes_is_accepted(hooked):
    assert hook(hooked, "hmac", foldrun_headers(int(time.time()) - 290)).status_code == 202


# ------------------------------------------------------------------ within the window


def test_the_same_signed_request_with_a_new_delivery_id_starts_no_second_run(hooked):
    now = int(time.time())
    first = hook(hooked, "hmac", foldrun_headers(now, delivery="dlv_1"))
    again = hook(hooked, "hmac", foldrun_headers(now, delivery="dlv_2"))
    assert first.status_code == 202
    assert (again.status_code, again.json()) == (
        409,
        {
            "code": "replayed",
            "details": {},
            "message": "This signed request was delivered before, and a replay starts nothing; a sender that means to "
            "send the same body again signs it anew.",
        },
    )
    assert runs("hmac") == 1


def test_the_same_webhook_id_within_the_window_is_the_run_it_started(hooked):
    now = int(time.time())
    key = "whsec_" + base64.b64encode(SECRET.encode()).decode()
    headers = {
        "webhook-id": "msg_1",
        "webhook-timestamp": str(now),
        "webhook-signature": Webhook(key).sign("msg_1", _utc(now), BODY.decode()),
    }
    first = hook(hooked, "standard", headers)
    again = hook(hooked, "standard", {**headers, "X-Foldrun-Delivery": "another"})
    retried = hook(hooked, "standard", headers)
    assert first.status_code == 202
    assert again.status_code == 409  # a new delivery id cannot make a signed webhook-id new
    assert (retried.status_code, retried.json()["duplicate"], retried.json()["run"]) == (200, True, first.json()["run"])
    assert runs("standard") == 1


def test_the_body_only_signatures_refuse_the_same_body_however_it_is_dressed(hooked):
    plain = hmac.new(SECRET.encode(), BODY, hashlib.sha256).hexdigest()
    first = hook(hooked, "hmac", foldrun_headers(int(time.time())))
    stripped = hook(hooked, "hmac", {"x-signature": plain, "X-Foldrun-Delivery": "dlv_9"})  # timestamp headers gone
    github = [
        hook(hooked, "github", {"X-Hub-Signature-256": f"sha256={plain}", "X-GitHub-Delivery": guid})
        for guid in ("g-1", "g-2")
    ]
    assert first.status_code == 202
    assert (stripped.status_code, stripped.json()["code"]) == (409, "replayed")
    assert [a.status_code for a in github] == [202, 409]
    assert (runs("hmac"), runs("github")) == (1, 1)


def test_a_start_refused_for_another_reason_keeps_nothing_so_the_retry_starts_the_run(hooked, fake_provider):
    push(
        hooked,
        {
            "flows/hmac.md": "---\nname: hmac\nwebhook: {signature: hmac, secret: INBOUND_KEY}\n---\n"
            "1. [[nobody]] — Handle it.\n"
        },
    )
    headers = foldrun_headers(int(time.time()))
    refused = hook(hooked, "hmac", headers)
    assert refused.status_code == 400
    assert HookReceipt.objects.count() == 0
    push(
        hooked,
        {
            "flows/hmac.md": "---\nname: hmac\nwebhook: {signature: hmac, secret: INBOUND_KEY}\n---\n"
            "1. [[intake]] — Handle it.\n"
        },
    )
    assert hook(hooked, "hmac", headers).status_code == 202
    assert HookReceipt.objects.filter(run__name="hmac").count() == 2  # its own key and its body's


def test_an_unknown_scheme_in_a_pushed_flow_is_refused_not_taken_as_unsigned(hooked, fake_provider):
    push(
        hooked,
        {
            "flows/gitlab.md": "---\nname: gitlab\nwebhook: {signature: gitlab, secret: INBOUND_KEY}\n---\n"
            "1. [[intake]] — Handle it.\n"
        },
    )
    answer = hook(hooked, "gitlab", {})
    assert (answer.status_code, answer.json()["message"]) == (
        401,
        "signature: gitlab is not a scheme this platform checks; nothing was started.",
    )
    assert runs("gitlab") == 0


# ------------------------------------------------------------------ simultaneous, over real connections


@pytest.mark.django_db(transaction=True)
def test_eight_simultaneous_replays_with_eight_delivery_ids_start_one_run(hooked, live_server):
    headers = {"content-type": "application/json", **foldrun_headers(int(time.time()))}
    url = f"{live_server.url}/api/hooks/{hooked.public_id}/hmac"
    start = threading.Barrier(8)
    answers: list[int] = []

    def post(n: int) -> None:
        with httpx.Client(timeout=60) as client:
            start.wait()
            answers.append(
                client.post(url, content=BODY, headers={**headers, "X-Foldrun-Delivery": f"d{n}"}).status_code
            )

    threads = [threading.Thread(target=post, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answers) == [202] + [409] * 7
    assert runs("hmac") == 1


@pytest.mark.django_db(transaction=True)
def test_the_docs_curl_and_openssl_example_is_accepted_once(hooked, live_server):
    script = docs_block("bash").replace(
        "https://foldrun.example.com/api/hooks/ws_123/intake", f"{live_server.url}/api/hooks/{hooked.public_id}/hmac"
    )
    script = script.replace("'the-secret-value'", f"'{SECRET}'")
    first = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert json.loads(first.stdout)["duplicate"] is False, first.stdout + first.stderr
    assert Run.objects.get(name="hmac").inputs["order"] == "A-17"


def _utc(seconds: int):
    import datetime as dt

    return dt.datetime.fromtimestamp(seconds, tz=dt.timezone.utc)


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("scheme", ["standard", "hmac"])
def test_a_foldrun_notification_starts_another_installs_flow_once_and_its_redelivery_is_the_duplicate(
    hooked, account, live_server, scheme
):
    from foldrun import net
    from notify.actions import do_record_delivery, do_redeliver, perform_attempt
    from notify.models import Delivery
    from tests.notify.conftest import write_agents_md

    from accounts.models import Workspace

    sender = Workspace.objects.create(account=account, name="sender-desk")
    do_set_secret(account, None, "OPS_SIGNING_KEY", value=SECRET)
    write_agents_md(
        sender,
        f"---\nnotify:\n  url: {live_server.url}/api/hooks/{hooked.public_id}/{scheme}\n"
        f"  signing_secret: OPS_SIGNING_KEY\n---\n",
    )
    try:
        delivery = do_record_delivery(sender, "failed", '{"order": "B-2"}')
        first = perform_attempt(delivery.pk)
        again = do_redeliver(Delivery.objects.get(pk=delivery.pk))
    finally:
        net.configure()  # the shared webhook connections closed, and the live server's threads with them
    assert (first.attempt.ok, first.attempt.status_code) == (True, 202), first.attempt.response_excerpt
    assert again.status_code == 200 and json.loads(again.response_excerpt)["duplicate"] is True
    assert runs(scheme) == 1
