"""Issue 29, item 1: on a real run a step's program starts in a network namespace whose only way out is the
egress proxy, which connects only where the network guard allows. Through a real Celery worker whose programs
may reach public addresses only, a script tool's run.py tries a loopback listener (by IP, by a name resolving
to it, in octal, padded, decimal, hex and IPv6 forms), 10.0.0.1, 169.254.169.254 and other private ranges, the
worker's Redis and PostgreSQL, through the proxy and with raw sockets: nothing is reached and the trace says
why, one sentence a refusal. (The model stand-in lives on loopback, so that worker keeps the install's opt-in
for its own calls and switches its programs' off with FOLDRUN_PROGRAMS_ALLOW_PRIVATE_URLS=0; the Tool Test
route, which calls no model, proves the install's own switch off.) With the opt-in the same listener is
reached through the proxy — and still not by a raw socket."""

from __future__ import annotations

import json
import os
import socket
import threading

import pytest

from runs.actions import check_start_run
from runs.models import Run, TraceEvent
from tests.conftest import start_worker, stop_worker, wait_for
from tests.fakes.conftest_plugin import echo_server, fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from vault.actions import do_set_secret

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(os.geteuid() != 0 and os.system("unshare -rn true") != 0, reason="needs network namespaces"),
]

LOOPBACK = [
    "127.0.0.1",
    "localhost",
    "127.1",
    "0177.0.0.1",
    "127.000.000.001",
    "2130706433",
    "0x7f000001",
    "[::1]",
    "[::ffff:127.0.0.1]",
]
ELSEWHERE = [
    "10.0.0.1",
    "172.16.0.1",
    "192.168.0.1",
    "100.64.0.1",
    "169.254.169.254",
    "0.0.0.0",
    "[fd00::1]",
    "[fe80::1]",
]

PROBE = (
    f"LOOPBACK = {LOOPBACK!r}\nELSEWHERE = {ELSEWHERE!r}\n"
    + r"""import json, os, socket, sys, urllib.request, urllib.error
args = json.load(sys.stdin)
port, out = int(args["port"]), {}
def fetch(url):
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return "reached " + answer.read().decode()
    except urllib.error.HTTPError as err:
        return "HTTP %d %s" % (err.code, err.read().decode())
    except Exception as exc:
        return "error " + str(exc)
def raw(host, port):
    s = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
    s.settimeout(5)
    try:
        s.connect((host, port))
        return "connected"
    except OSError as exc:
        return "error " + (exc.strerror or str(exc))
    finally:
        s.close()
for name in LOOPBACK:
    out["http " + name] = fetch("http://%s:%d/" % (name, port))
out["https 127.0.0.1"] = fetch("https://127.0.0.1:%d/" % port)
if args["wide"] == "1":  # with the opt-in these would be this machine's own neighbours: not asked then
    for name in ELSEWHERE:
        out["http " + name] = fetch("http://%s/" % name)
out["http redis"] = fetch("http://127.0.0.1:%d/" % int(args["redis"]))
out["raw 127.0.0.1"] = raw("127.0.0.1", port)
out["raw [::1]"] = raw("::1", port)
out["raw redis"] = raw("127.0.0.1", int(args["redis"]))
out["raw postgres"] = raw("127.0.0.1", int(args["postgres"]))
out["raw 10.0.0.1"] = raw("10.0.0.1", 80)
out["raw 169.254.169.254"] = raw("169.254.169.254", 80)
unix = socket.socket(socket.AF_UNIX)
try:
    unix.connect("/var/run/postgresql/.s.PGSQL.5432")
    out["unix postgres"] = "connected"
except OSError as exc:
    out["unix postgres"] = "error " + (exc.strerror or str(exc))
if os.environ.get("FOLDRUN_EGRESS"):
    out["egress"] = fetch(os.environ["FOLDRUN_EGRESS"] + "http://127.0.0.1:%d/via-egress" % port)
    direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # a client that ignores HTTP_PROXY
    try:
        out["egress direct"] = "reached " + direct.open(os.environ["FOLDRUN_EGRESS"]
                                                        + "http://127.0.0.1:%d/direct" % port).read().decode()
    except Exception as exc:
        out["egress direct"] = "error " + str(exc)
print(json.dumps(out))
"""
)


class Listener:
    """A loopback listener that counts every connection made to it and answers each as HTTP."""

    def __init__(self) -> None:
        self.accepted: list[bytes] = []
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.server.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(5)
                try:
                    first = conn.recv(4096)
                except OSError:
                    first = b""
                self.accepted.append(first)
                body = b"hello-from-loopback"
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\nconnection: close\r\n\r\n%s" % (len(body), body)
                )

    def close(self) -> None:
        self.server.close()


@pytest.fixture
def listener():
    found = Listener()
    yield found
    found.close()


def _desk(workspace, fake, *, proxied: bool = False) -> None:
    extra = "secrets: proxied\n" if proxied else ""
    push(
        workspace,
        {
            "agents/worker/agent.md": agent_file(
                "worker", fake, tools="[probe]", extra="secrets: [CRM_KEY]\n" if proxied else ""
            ),
            "tools/probe/tool.md": (
                "---\ntransport: script\nname: probe\nrun: run.py\n"
                f"args: {{port: p, redis: r, postgres: q, wide: w}}\n{extra}---\n"
            ),
            "tools/probe/run.py": PROBE,
        },
    )


def _arguments(listener: Listener, *, wide: bool) -> dict[str, str]:
    return {"port": str(listener.port), "redis": "6379", "postgres": "5432", "wide": "1" if wide else "0"}


def _run_probe(workspace, alice, fake, tmp_path, listener, *, allow_private: bool, proxied: bool = False):
    _desk(workspace, fake, proxied=proxied)
    if proxied:
        do_set_secret(workspace.account, workspace, "CRM_KEY", value="crm-fenced-value", hosts=["127.0.0.1"])
    worker = start_worker(
        tmp_path / "worker.log", {"FOLDRUN_PROGRAMS_ALLOW_PRIVATE_URLS": "1" if allow_private else "0"}
    )
    try:
        fake.reply_tool_use("probe", _arguments(listener, wide=not allow_private))
        fake.reply_text("GOOD probed")
        run = check_start_run(workspace=workspace, user=alice, agent="worker", task="Probe.")
        done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=90)
    finally:
        stop_worker(worker)
    assert done.status == "completed", done.error
    result = TraceEvent.objects.get(run=done, kind="tool_result").data["content"]
    logs = [e.data.get("message", "") for e in TraceEvent.objects.filter(run=done, kind="log").order_by("pk")]
    return json.loads(result), logs


def test_without_the_opt_in_nothing_private_is_reached_and_the_trace_says_why(
    transactional_db, workspace, alice, fake_provider, tmp_path, listener
):
    seen, logs = _run_probe(workspace, alice, fake_provider, tmp_path, listener, allow_private=False)
    port = listener.port
    print("\nprogram egress, private addresses off:")
    for form, outcome in seen.items():
        print(f"  {form:28} {outcome[:110]}")
    refusals = [line for line in logs if line.startswith("a program's connection to ")]
    print(
        f"  {len(refusals)} refusal sentences on the trace; the loopback listener accepted "
        f"{len(listener.accepted)} connections"
    )
    assert listener.accepted == []  # the loopback listener saw no connection at all
    for name in LOOPBACK + ELSEWHERE + ["redis"]:
        assert seen[f"http {name}"].startswith("HTTP 403 refused by foldrun: "), name
    assert "403" in seen["https 127.0.0.1"]  # the CONNECT tunnel is refused too
    assert "non-public addresses cannot be called" in seen["http 169.254.169.254"]
    # A raw socket has no route: loopback is the namespace's own, with nothing on the worker's ports.
    assert seen["raw 127.0.0.1"] == seen["raw [::1]"] == "error Connection refused"
    assert seen["raw redis"] == seen["raw postgres"] == "error Connection refused"
    assert seen["raw 10.0.0.1"] == seen["raw 169.254.169.254"] == "error Network is unreachable"
    if os.path.exists("/var/run/postgresql/.s.PGSQL.5432"):
        assert seen["unix postgres"] == "error Connection refused"  # the worker's own socket file is masked
    assert (
        "programs run in a network namespace of their own: their only way out is the egress proxy (HTTP_PROXY "
        "and HTTPS_PROXY, set for them), which reaches public addresses only, and a connection to any other "
        "address fails"
    ) in logs
    sentence = "private, loopback, link-local and other non-public addresses cannot be called"
    for where in (
        f"127.0.0.1:{port}",
        f"localhost:{port}",
        f"0177.0.0.1:{port}",
        f"2130706433:{port}",
        f"[::1]:{port}",
        "10.0.0.1:80",
        "169.254.169.254:80",
        "[fd00::1]:80",
        "127.0.0.1:6379",
    ):
        host = where.rsplit(":", 1)[0].strip("[]")
        said = [
            line
            for line in logs
            if line.startswith(f"a program's connection to {where} was refused: {host} resolves to ")
        ]
        assert said and all(line.endswith(sentence) for line in said), (where, said)
    assert any(line.startswith(f"a program's connection to 127.0.0.1:{port} was refused") for line in logs)


def test_with_the_installs_opt_in_the_proxy_reaches_the_same_listener_and_a_raw_socket_still_does_not(
    transactional_db, workspace, alice, fake_provider, tmp_path, listener
):
    seen, logs = _run_probe(workspace, alice, fake_provider, tmp_path, listener, allow_private=True, proxied=True)
    assert seen["http 127.0.0.1"] == "reached hello-from-loopback"
    assert seen["http localhost"] == "reached hello-from-loopback"
    assert seen["raw 127.0.0.1"] == "error Connection refused"  # only through the proxy
    assert seen["raw redis"] == "error Connection refused"
    # The proxied-secrets egress rides the same way out, and fills the secret for its own host.
    assert seen["egress"] == "reached hello-from-loopback"
    assert any(b"GET /via-egress" in first for first in listener.accepted)
    assert seen["egress direct"] == "reached hello-from-loopback"
    assert any(b"GET /direct" in first for first in listener.accepted)
    assert any(b"GET / HTTP/1.1" in first or b"GET / " in first for first in listener.accepted)
    assert any(
        "which reaches private addresses too, as this install opted in (FOLDRUN_ALLOW_PRIVATE_URLS)" in line
        for line in logs
    )


def test_with_the_installs_own_switch_off_the_tool_test_button_reaches_nothing_private_either(
    transactional_db, workspace, alice_api, fake_provider, listener, settings
):
    settings.FOLDRUN_ALLOW_PRIVATE_URLS = False  # production's default: foldrun.net's policy follows it
    _desk(workspace, fake_provider)
    answer = alice_api.post(
        f"/api/workspaces/{workspace.name}/tools/probe/test",
        {"arguments": _arguments(listener, wide=True), "agent": "worker"},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    body = answer.json()
    seen = json.loads(body["result"])
    assert listener.accepted == []
    for name in LOOPBACK + ELSEWHERE + ["redis"]:
        assert seen[f"http {name}"].startswith("HTTP 403 refused by foldrun: "), name
    assert seen["raw 127.0.0.1"] == seen["raw redis"] == "error Connection refused"
    logs = [e["data"].get("message", "") for e in body["trace"] if e["kind"] == "log"]
    assert (
        f"a program's connection to 127.0.0.1:{listener.port} was refused: 127.0.0.1 resolves to 127.0.0.1: "
        "private, loopback, link-local and other non-public addresses cannot be called"
    ) in logs
