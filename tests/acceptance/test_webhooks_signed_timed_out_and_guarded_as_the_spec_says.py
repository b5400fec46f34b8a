"""Issue 5, items 3 and 4 (audit5): webhook deliveries held to the spec.

Signatures are checked by receivers written from the spec's own code (the
Node snippet run verbatim by a real Node HTTP server on loopback, the Python
one copied verbatim), by the real `standardwebhooks` library, and by another
workspace's inbound `signature: hmac` flow. Timeouts are checked against
loopback receivers that sleep or trickle; private destinations with the
install's opt-in switched off.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import socket
import subprocess
import time
from datetime import timedelta
from urllib.parse import urlsplit

import httpx
import pytest
from django.utils import timezone
from standardwebhooks.webhooks import Webhook, WebhookVerificationError

from foldrun import net
from notify.actions import dispatch, do_record_delivery, do_redeliver, do_send_test, perform_attempt
from notify.models import Delivery, SigningKeyState
from runs.models import Run
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.loopback import QuietHandler
from tests.fakes.tls import TlsLoopbackServer
from tests.fakes.trickler import Trickler
from tests.notify.conftest import receiver, write_agents_md  # noqa: F401
from tests.runs.helpers import agent_file, push
from vault.actions import do_set_secret

SECRET = "audit5-signing-secret"

# spec/notifications.md, "Verifying a delivery", Node — verbatim.
SPEC_NODE = """import crypto from "node:crypto";

export function verifyFoldrun(rawBody, headers, secret, toleranceSec = 300) {
  const ts = headers["x-foldrun-timestamp"];
  const sig = (headers["x-foldrun-signature"] ?? "").replace(/^sha256=/, "");
  if (!ts || !sig) return false;
  if (Math.abs(Date.now() / 1000 - Number(ts)) > toleranceSec) return false;
  const want = crypto.createHmac("sha256", secret).update(`${ts}.${rawBody}`).digest("hex");
  return sig.length === want.length && crypto.timingSafeEqual(Buffer.from(sig), Buffer.from(want));
}
"""

# A receiver around it: Node's http server, answering 200 only to what verifies.
NODE_SERVER = """import http from "node:http";
import { verifyFoldrun } from "./verify.mjs";

const server = http.createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    const ok = verifyFoldrun(Buffer.concat(chunks), req.headers, process.env.SECRET);
    res.writeHead(ok ? 200 : 401);
    res.end(ok ? "verified" : "signature refused");
  });
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
"""


# spec/notifications.md, "Verifying a delivery", Python — verbatim.
import hashlib, hmac, time  # noqa: E401,E402,F811


def verify_foldrun(raw_body: bytes, headers, secret: str, tolerance=300) -> bool:
    ts = headers.get("X-Foldrun-Timestamp")
    sig = (headers.get("X-Foldrun-Signature") or "").removeprefix("sha256=")
    if not ts or not sig or abs(time.time() - int(ts)) > tolerance:
        return False
    want = hmac.new(secret.encode(), f"{ts}.".encode() + raw_body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(sig, want)


@pytest.fixture
def node_receiver(tmp_path):
    (tmp_path / "verify.mjs").write_text(SPEC_NODE)
    (tmp_path / "server.mjs").write_text(NODE_SERVER)
    process = subprocess.Popen(
        ["node", "server.mjs"],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env={"SECRET": SECRET, "PATH": "/usr/bin:/bin"},
    )
    port = int(process.stdout.readline())
    yield f"http://127.0.0.1:{port}/hook"
    process.terminate()
    process.wait(timeout=10)


def _signed(workspace, url: str) -> None:
    do_set_secret(workspace.account, None, "OPS_WEBHOOK_SIGNING_KEY", value=SECRET)
    write_agents_md(workspace, f"---\nnotify:\n  url: {url}\n  signing_secret: OPS_WEBHOOK_SIGNING_KEY\n---\n")


def _deliver(workspace, body: str = '{"text": "BAD \\u2014 caf\\u00e9 fell out of the top 20"}'):
    delivery = do_record_delivery(workspace, "failed", body)
    return delivery, perform_attempt(delivery.pk)


# ------------------------------------------------------------ signatures


def test_a_node_receiver_running_the_spec_s_own_code_accepts_a_signed_delivery(workspace, node_receiver):
    _signed(workspace, node_receiver)
    _delivery, result = _deliver(workspace)
    assert (result.attempt.ok, result.attempt.status_code, result.attempt.response_excerpt) == (True, 200, "verified")


def test_the_spec_s_node_receiver_refuses_a_delivery_signed_with_another_secret(workspace, node_receiver):
    do_set_secret(workspace.account, None, "OPS_WEBHOOK_SIGNING_KEY", value="not-the-receiver-s-secret")
    write_agents_md(
        workspace, f"---\nnotify:\n  url: {node_receiver}\n  signing_secret: OPS_WEBHOOK_SIGNING_KEY\n---\n"
    )
    _delivery, result = _deliver(workspace)
    assert (result.attempt.ok, result.attempt.status_code) == (False, 401)


def test_the_spec_s_python_code_verifies_a_delivery_and_its_redelivery(workspace, receiver):
    _signed(workspace, receiver.url)
    delivery, _ = _deliver(workspace)
    time.sleep(1.1)  # the redelivery's timestamp is a later second
    do_redeliver(Delivery.objects.get(pk=delivery.pk))
    first, again = receiver.requests
    assert verify_foldrun(first["body"], first["headers"], SECRET) is True
    assert verify_foldrun(again["body"], again["headers"], SECRET) is True
    assert again["body"] == first["body"]
    assert again["headers"]["X-Foldrun-Delivery"] == first["headers"]["X-Foldrun-Delivery"] == delivery.public_id
    assert int(again["headers"]["X-Foldrun-Timestamp"]) > int(first["headers"]["X-Foldrun-Timestamp"])
    assert again["headers"]["X-Foldrun-Signature"] != first["headers"]["X-Foldrun-Signature"]


def test_the_signature_is_sha256_hex_over_timestamp_dot_body(workspace, receiver):
    _signed(workspace, receiver.url)
    _deliver(workspace)
    request = receiver.requests[0]
    ts = request["headers"]["X-Foldrun-Timestamp"]
    want = hmac.new(SECRET.encode(), f"{ts}.".encode() + request["body"], hashlib.sha256).hexdigest()
    assert request["headers"]["X-Foldrun-Signature"] == f"sha256={want}"
    assert request["headers"]["x-signature"] == hmac.new(SECRET.encode(), request["body"], hashlib.sha256).hexdigest()


def test_an_unsigned_destination_gets_no_signature_headers(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    _deliver(workspace)
    names = {name.lower() for name in receiver.requests[0]["headers"]}
    assert names & {"x-foldrun-timestamp", "x-foldrun-signature", "x-signature", "webhook-signature"} == set()


@pytest.fixture
def fresh_connections():
    # The platform keeps its webhook connections alive; the live server's
    # request thread (and its database session) lives as long as one does.
    yield
    net.configure()  # the shared clients are dropped and their connections closed


def test_another_workspace_s_inbound_hmac_flow_accepts_a_delivery_and_dedupes_its_redelivery(
    workspace, account, live_server, fake_provider, fresh_connections
):
    from accounts.models import Workspace

    intake = Workspace.objects.create(account=account, name="intake-desk")
    do_set_secret(account, intake, "INBOUND_KEY", value=SECRET)
    push(
        intake,
        {
            "agents/intake/agent.md": agent_file("intake", fake_provider),
            "flows/intake.md": "---\nname: intake\nwebhook: {signature: hmac, secret: INBOUND_KEY}\n---\n"
            "1. [[intake]] ! — Read the notification: {{text}}.\n",
        },
    )
    _signed(workspace, f"{live_server.url}/api/hooks/{intake.public_id}/intake")
    delivery, result = _deliver(workspace)
    assert (result.attempt.ok, result.attempt.status_code) == (True, 202), result.attempt.response_excerpt
    again = do_redeliver(Delivery.objects.get(pk=delivery.pk))
    assert again.status_code == 200 and json.loads(again.response_excerpt)["duplicate"] is True
    assert list(Run.objects.filter(workspace=intake).values_list("delivery_id", flat=True)) == [delivery.public_id]


def _whsec(secret: str) -> Webhook:
    return Webhook("whsec_" + base64.b64encode(secret.encode()).decode())


def test_a_standard_webhooks_library_verifies_a_delivery(workspace, receiver):
    _signed(workspace, receiver.url)
    delivery, _ = _deliver(workspace)
    request = receiver.requests[0]
    assert request["headers"]["webhook-id"] == delivery.public_id
    assert request["headers"]["webhook-timestamp"] == request["headers"]["X-Foldrun-Timestamp"]
    assert _whsec(SECRET).verify(request["body"], request["headers"])["text"] == "BAD — café fell out of the top 20"
    with pytest.raises(WebhookVerificationError):
        _whsec("another-secret").verify(request["body"], request["headers"])


def test_a_rotated_signing_secret_is_in_webhook_signature_beside_the_old_for_24_hours(workspace, receiver):
    _signed(workspace, receiver.url)
    _deliver(workspace)
    do_set_secret(workspace.account, None, "OPS_WEBHOOK_SIGNING_KEY", value="audit5-new-signing-secret")
    _deliver(workspace)
    SigningKeyState.objects.update(rotated_at=timezone.now() - timedelta(hours=23, minutes=50))
    _deliver(workspace)
    SigningKeyState.objects.update(rotated_at=timezone.now() - timedelta(hours=24, minutes=10))
    _deliver(workspace)
    _before, just_rotated, a_day_less, after = receiver.requests
    for request in (just_rotated, a_day_less):
        assert len(request["headers"]["webhook-signature"].split(" ")) == 2
        _whsec(SECRET).verify(request["body"], request["headers"])
        _whsec("audit5-new-signing-secret").verify(request["body"], request["headers"])
        assert verify_foldrun(request["body"], request["headers"], "audit5-new-signing-secret") is True
        assert verify_foldrun(request["body"], request["headers"], SECRET) is False
        assert " " not in request["headers"]["X-Foldrun-Signature"]
    assert len(after["headers"]["webhook-signature"].split(" ")) == 1
    _whsec("audit5-new-signing-secret").verify(after["body"], after["headers"])
    with pytest.raises(WebhookVerificationError):
        _whsec(SECRET).verify(after["body"], after["headers"])


# ------------------------------------------------------------ what it carries


@pytest.mark.parametrize(
    "event", ["failed", "completed", "blocked", "awaiting-approval", "quarantined", "sla", "budget"]
)
def test_x_foldrun_event_names_each_spec_event(workspace, receiver, event):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n  events: [{event}]\n---\n")
    dispatch(workspace, event, payload_for=lambda _a: {"text": event})
    perform_attempt(Delivery.objects.get().pk)
    headers = receiver.requests[0]["headers"]
    assert headers["X-Foldrun-Event"] == event
    assert headers["X-Foldrun-Attempt"] == "1"
    assert headers["X-Foldrun-Delivery"] == Delivery.objects.get().public_id


def test_the_test_send_is_event_test(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    do_send_test(workspace)
    assert receiver.requests[0]["headers"]["X-Foldrun-Event"] == "test"
    assert receiver.requests[0]["headers"]["X-Foldrun-Delivery"].startswith("dlv_")


def test_the_delivery_id_is_the_same_on_every_retry_and_redelivery(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(503, b"", 0.0)] * 6 + [(200, b"ok", 0.0)]
    delivery = do_record_delivery(workspace, "failed", '{"text": "x"}')
    now = timezone.now()
    for _ in range(6):
        result = perform_attempt(delivery.pk, now=now, clock=lambda n=now: n)
        now = result.next_attempt_at or now
    do_redeliver(Delivery.objects.get(pk=delivery.pk))
    assert [r["headers"]["X-Foldrun-Attempt"] for r in receiver.requests] == ["1", "2", "3", "4", "5", "6", "7"]
    assert {r["headers"]["X-Foldrun-Delivery"] for r in receiver.requests} == {delivery.public_id}
    assert len({r["body"] for r in receiver.requests}) == 1


# ------------------------------------------------------------ the schedule


def test_the_schedule_is_at_once_then_1m_5m_30m_2h_6h_after_each_previous_failure(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(500, b"down", 0.0)]
    t0 = timezone.now().replace(microsecond=0)
    delivery = do_record_delivery(workspace, "failed", "{}", now=t0)
    assert Delivery.objects.get(pk=delivery.pk).next_attempt_at == t0  # attempt 1: at once
    failed_at, due = [], []
    now = t0
    for n in range(6):
        # Each attempt takes 7 seconds to fail: the next counts from its failure, not its start.
        finished = now + timedelta(seconds=7)
        result = perform_attempt(delivery.pk, now=now, clock=lambda f=finished: f)
        failed_at.append(finished)
        due.append(result.next_attempt_at)
        now = result.next_attempt_at or now
    gaps = [d - f for d, f in zip(due[:5], failed_at[:5])]
    assert gaps == [
        timedelta(minutes=1),
        timedelta(minutes=5),
        timedelta(minutes=30),
        timedelta(hours=2),
        timedelta(hours=6),
    ]
    assert due[5] is None
    final = Delivery.objects.get(pk=delivery.pk)
    assert (final.status, final.attempts_made, final.attempts.count()) == ("failed", 6, 6)


# ------------------------------------------------------------ 8 seconds


@pytest.mark.parametrize("part", ["headers", "body"])
def test_a_receiver_that_trickles_its_answer_is_cut_off_at_8_seconds(workspace, part):
    slow = Trickler(part)
    write_agents_md(workspace, f"---\nnotify:\n  url: {slow.url}\n---\n")
    started = time.monotonic()
    _delivery, result = _deliver(workspace)
    assert time.monotonic() - started < 9.5
    assert (result.attempt.ok, result.attempt.error) == (False, "timed out after 8 seconds")
    assert 7900 <= result.attempt.duration_ms < 9500
    assert result.next_attempt_at is not None


def test_a_receiver_sleeping_9_seconds_is_a_failed_attempt_at_8(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(200, b"late", 9.0)]
    _delivery, result = _deliver(workspace)
    assert (result.attempt.ok, result.attempt.status_code, result.attempt.error) == (
        False,
        None,
        "timed out after 8 seconds",
    )
    assert 7900 <= result.attempt.duration_ms < 9000


def test_a_down_receiver_a_5xx_and_a_2mb_answer_are_each_recorded(workspace, receiver):
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    down_url = f"http://127.0.0.1:{free.getsockname()[1]}/hook"
    free.close()
    write_agents_md(workspace, f"---\nnotify:\n  url: {down_url}\n---\n")
    _d, down = _deliver(workspace)
    assert down.attempt.ok is False and down.attempt.status_code is None
    assert (
        down.attempt.error == "nothing is listening there (connection refused)" and down_url not in down.attempt.error
    )
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(502, "é".encode() * (1024 * 1024), 0.0)]
    _d, big = _deliver(workspace)
    assert (big.attempt.status_code, big.attempt.error) == (502, "answered 502")
    assert big.attempt.response_excerpt == "é" * 500
    assert {d.status for d in Delivery.objects.all()} == {"pending"}  # both wait for their retry


# ------------------------------------------------------------ private addresses


def _private_urls(port: int) -> list[str]:
    name = socket.gethostname()
    assert socket.getaddrinfo(name, port)[0][4][0] == "127.0.0.1"  # this machine's own name resolves to loopback
    return [
        f"http://127.0.0.1:{port}/hook",
        f"http://localhost:{port}/hook",  # a name that resolves to 127.0.0.1
        f"http://{name}:{port}/hook",  # another one
        f"http://2130706433:{port}/hook",  # 127.0.0.1 as a number
        f"http://0x7f.1:{port}/hook",
        f"http://[::1]:{port}/hook",
        f"http://[::ffff:127.0.0.1]:{port}/hook",
        f"http://0.0.0.0:{port}/hook",
        "http://10.20.30.40/hook",
        "http://172.16.5.4/hook",
        "http://192.168.1.1/hook",
        "http://100.64.0.1/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[fe80::1]/hook",
        "http://[fd00::1]/hook",
    ]


def test_every_loopback_private_and_link_local_destination_is_refused_when_the_install_does_not_opt_in(
    workspace, receiver, settings
):
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False
    port = int(receiver.url.split(":")[2].split("/")[0])
    errors = {}
    for url in _private_urls(port):
        write_agents_md(workspace, f"---\nnotify:\n  url: {url}\n---\n")
        _d, result = _deliver(workspace)
        errors[url] = result.attempt.error
    for url, error in errors.items():
        host = urlsplit(url).hostname
        assert error.startswith(f"{host} resolves to ") and error.endswith(
            ": private, loopback, link-local and other non-public addresses cannot be called"
        ), (url, error)
    assert receiver.requests == []


def test_the_test_send_and_a_redelivery_are_refused_a_private_destination_too(workspace, receiver, settings):
    write_agents_md(workspace, f"---\nnotify:\n  url: http://localhost:{receiver.url.split(':')[2]}\n---\n")
    receiver.answers = [(500, b"", 0.0)]
    delivery, _ = _deliver(workspace)
    Delivery.objects.filter(pk=delivery.pk).update(status="failed", next_attempt_at=None)
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False
    count = len(receiver.requests)
    test = do_send_test(workspace)
    again = do_redeliver(Delivery.objects.get(pk=delivery.pk))
    assert test["ok"] is False and "localhost resolves to 127.0.0.1: private, loopback" in test["message"]
    assert again.ok is False and "localhost resolves to 127.0.0.1: private, loopback" in again.error
    assert len(receiver.requests) == count


def test_a_redirect_to_a_private_address_is_not_followed(workspace, receiver):
    write_agents_md(workspace, f"---\nnotify:\n  url: {receiver.url}\n---\n")
    receiver.answers = [(307, b"", 0.0)]
    _d, result = _deliver(workspace)
    assert (result.attempt.status_code, result.attempt.ok) == (307, False)
    assert result.attempt.error == "answered 307 with a redirect, which foldrun does not follow"
    assert len(receiver.requests) == 1


def test_the_request_goes_to_the_checked_address_with_the_name_as_its_host(workspace, receiver):
    port = receiver.url.split(":")[2].split("/")[0]
    write_agents_md(workspace, f"---\nnotify:\n  url: http://localhost:{port}/hook?k=1\n---\n")
    _deliver(workspace)
    assert receiver.requests[0]["headers"]["Host"] == f"localhost:{port}"
    assert receiver.requests[0]["path"] == "/hook?k=1"


def test_a_bare_httpx_client_is_not_what_refuses(receiver):
    # The refusal above is the platform's, not an accident of the network: the
    # same receiver answers a plain POST.
    assert httpx.post(receiver.url, content=b"{}").status_code == 200


# ------------------------------------------------------------ https, pinned


@pytest.fixture
def tls_receiver(tmp_path):
    """An HTTPS receiver on loopback with a certificate for `localhost` from a
    throwaway CA, which the platform's own client is made to trust."""
    hosts: list[str] = []

    class Handler(QuietHandler):
        def do_POST(self):  # noqa: N802
            hosts.append(self.headers.get("Host"))
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

    with TlsLoopbackServer(Handler, tmp_path) as server:
        old = net.configure(ca_files=(str(server.ca),))  # fresh clients trusting the throwaway CA too
        server.hosts = hosts
        yield server
        net.restore(old)


def test_an_https_delivery_goes_to_the_checked_address_and_verifies_the_name_s_certificate(workspace, tls_receiver):
    port = tls_receiver.port
    write_agents_md(workspace, f"---\nnotify:\n  url: https://localhost:{port}/hook\n---\n")
    _d, by_name = _deliver(workspace)
    assert (by_name.attempt.ok, by_name.attempt.status_code) == (True, 200)
    assert tls_receiver.hosts == [f"localhost:{port}"]
    write_agents_md(workspace, f"---\nnotify:\n  url: https://127.0.0.1:{port}/hook\n---\n")
    _d, by_address = _deliver(workspace)
    assert by_address.attempt.ok is False and by_address.attempt.error == "its TLS certificate could not be verified"


def test_a_webhook_url_kept_as_a_secret_never_reaches_the_log_or_the_api(workspace, alice_api, caplog):
    free = socket.socket()
    free.bind(("127.0.0.1", 0))
    port = free.getsockname()[1]
    free.close()
    url = f"http://127.0.0.1:{port}/services/T0AUDIT5/B0AUDIT5/hook-secret-path-5151"
    do_set_secret(workspace.account, None, "SLACK_WEBHOOK_URL", value=url)
    write_agents_md(workspace, "---\nnotify:\n  url: ${SLACK_WEBHOOK_URL}\n---\n")
    with caplog.at_level("DEBUG"):
        _d, result = _deliver(workspace)
    assert result.attempt.ok is False and result.attempt.error == "nothing is listening there (connection refused)"
    listing = alice_api.get("/api/workspaces/rank-desk/notify/deliveries").content.decode()
    page_words = " ".join(r.getMessage() for r in caplog.records)
    for text in (result.attempt.error, listing, page_words):
        assert "hook-secret-path-5151" not in text


def test_the_24_hours_count_from_the_rotation_not_from_the_next_delivery(workspace, receiver):
    from vault.models import Secret

    _signed(workspace, receiver.url)
    _deliver(workspace)
    do_set_secret(workspace.account, None, "OPS_WEBHOOK_SIGNING_KEY", value="audit5-new-signing-secret")
    # Rotated a day and a bit ago; nothing was delivered since.
    Secret.objects.filter(name="OPS_WEBHOOK_SIGNING_KEY").update(updated_at=timezone.now() - timedelta(hours=25))
    _deliver(workspace)
    later = receiver.requests[1]
    assert len(later["headers"]["webhook-signature"].split(" ")) == 1
    _whsec("audit5-new-signing-secret").verify(later["body"], later["headers"])
