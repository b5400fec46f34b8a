"""At the boundary: `${NAME}` filled as the request leaves, only for the secret's own host;
a planted value is in no file, argument, output, trace or API answer."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from vault.actions import do_set_secret, egress_grants
from vault.boundary import BoundaryError, EgressProxy, Grant, fill_request, redact

PLANTED = "crm-planted-9f8e7d6c"

SCRIPT = r"""
import json, os, sys, urllib.request, urllib.error
target = sys.argv[1]
request = urllib.request.Request(os.environ["FOLDRUN_EGRESS"] + target,
                                 headers={"Authorization": "Bearer ${CRM_KEY}"})
try:
    with urllib.request.urlopen(request) as answer:
        print(answer.status, answer.read().decode())
except urllib.error.HTTPError as err:
    print(err.code, err.read().decode())
"""


def test_http_tool_headers_and_query_are_filled_host_side():
    headers, query = fill_request(
        {"Authorization": "Bearer ${CRM_KEY}", "Accept": "application/json"},
        {"api_key": "${CRM_KEY}", "q": "x"},
        {"CRM_KEY": PLANTED},
    )
    assert headers == {"Authorization": f"Bearer {PLANTED}", "Accept": "application/json"}
    assert query == {"api_key": PLANTED, "q": "x"}


def test_a_placeholder_not_given_to_the_step_is_named():
    with pytest.raises(BoundaryError, match="secret OTHER_KEY is not available to this step"):
        fill_request({"X": "${OTHER_KEY}"}, {}, {"CRM_KEY": PLANTED})


def test_redact_takes_values_out_of_text():
    assert redact(f"token={PLANTED}; again {PLANTED}", {"CRM_KEY": PLANTED}) == "token=[CRM_KEY]; again [CRM_KEY]"


@pytest.fixture
def proxied(account, workspace, echo_server):
    do_set_secret(account, workspace, "CRM_KEY", value=PLANTED, hosts=["127.0.0.1"])
    grants, found = egress_grants(workspace, ["CRM_KEY"])
    lines: list[str] = []
    with EgressProxy(grants, on_line=lines.append, allow_private=True) as proxy:
        yield proxy, lines, found


def run_script(tmp_path, proxy, target):
    path = tmp_path / "run.py"
    path.write_text(SCRIPT)
    env = {"PATH": os.environ.get("PATH", ""), **proxy.env()}
    argv = [sys.executable, str(path), target]
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=30)
    return path, argv, env, done


def test_a_proxied_script_reaches_the_secrets_own_host_with_the_value_filled(proxied, echo_server, tmp_path):
    proxy, lines, found = proxied
    path, argv, env, done = run_script(tmp_path, proxy, echo_server.url + "/v1/contacts?limit=5")
    assert done.stdout.startswith("200 ")
    assert echo_server.seen[0]["headers"]["authorization"] == f"Bearer {PLANTED}"
    assert echo_server.seen[0]["query"] == {"limit": "5"}
    assert lines == ["egress: GET 127.0.0.1/v1/contacts → 200 [CRM_KEY]"]
    assert found.scopes() == {"CRM_KEY": "workspace"}
    # The value went out, and nowhere else: not the file, the argv, the env, the output, the trace.
    for place in (path.read_text(), json.dumps(argv), json.dumps(env), done.stdout, done.stderr, json.dumps(lines)):
        assert PLANTED not in place
    assert "[CRM_KEY]" in done.stdout  # the far side echoed it back; the proxy took it out


def test_a_request_to_another_host_is_refused_and_nothing_is_sent(proxied, echo_server, tmp_path):
    proxy, lines, _ = proxied
    other = echo_server.url.replace("127.0.0.1", "localhost")
    _, _, _, done = run_script(tmp_path, proxy, other + "/steal")
    assert done.stdout.startswith("403 egress: refused GET localhost — CRM_KEY may only be sent to 127.0.0.1")
    assert echo_server.seen == []
    assert lines == ["egress: refused GET localhost — CRM_KEY may only be sent to 127.0.0.1"]


def test_a_secret_with_no_hosts_is_never_filled(account, workspace, echo_server, tmp_path):
    proxy = EgressProxy({"CRM_KEY": Grant(PLANTED, [])}, allow_private=True).start()
    try:
        _, _, _, done = run_script(tmp_path, proxy, echo_server.url + "/x")
    finally:
        proxy.stop()
    assert done.stdout.startswith("403 egress: refused GET 127.0.0.1 — CRM_KEY names no host it may be sent to")
    assert echo_server.seen == []


def test_the_endpoint_refuses_a_request_without_its_step_token(proxied):
    import httpx

    proxy, _, _ = proxied
    wrong = proxy.url.rsplit("/", 2)[0] + "/not-the-token/http://127.0.0.1/"
    assert httpx.get(wrong).status_code == 404


def test_a_private_target_is_refused_unless_the_install_allows_it(echo_server, tmp_path):
    proxy = EgressProxy({"CRM_KEY": Grant(PLANTED, ["127.0.0.1"])}, allow_private=False).start()
    try:
        _, _, _, done = run_script(tmp_path, proxy, echo_server.url + "/x")
    finally:
        proxy.stop()
    assert done.stdout.startswith(
        "403 egress: refused GET 127.0.0.1 — 127.0.0.1 resolves to 127.0.0.1: private, "
        "loopback, link-local and other non-public addresses cannot be called"
    )


def test_no_api_answer_carries_the_value(alice_api, workspace, proxied):
    answers = [
        alice_api.get("/api/secrets"),
        alice_api.get("/api/workspaces/rank-desk/secrets"),
        alice_api.get("/api/workspaces/rank-desk/secrets/CRM_KEY"),
        alice_api.get("/api/account/providers"),
    ]
    for answer in answers:
        assert answer.status_code == 200
        assert PLANTED not in answer.content.decode()


def test_a_value_filled_into_a_query_never_reaches_the_log(proxied, echo_server, caplog):
    import logging

    import httpx

    proxy, _, _ = proxied
    with caplog.at_level(logging.DEBUG):
        answer = httpx.get(proxy.url + echo_server.url + "/v1/find?api_key=${CRM_KEY}")
    assert answer.status_code == 200
    assert echo_server.seen[0]["query"] == {"api_key": PLANTED}
    assert PLANTED not in caplog.text
