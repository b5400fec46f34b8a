"""Every role, through its own entry point, where a global address is really reachable.

In a fresh network namespace 9.9.9.9 sits on loopback, so a role can be shown to
reach a public host by a name; then the same name re-resolves to 127.0.0.1
(DNS rebinding) and the role is refused at its connect; then the public host
redirects to 127.0.0.1 and the hop is refused (or, for a role that follows no
redirect, not followed). The loopback site behind 127.0.0.1 must see nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import refusal

ROOT = Path(__file__).resolve().parents[2]
SETUP = 'ip link set lo up && ip addr add 9.9.9.9/32 dev lo && exec "$@"'


def _namespace_works() -> bool:
    if not (shutil.which("unshare") and shutil.which("ip")):
        return False
    return subprocess.run(["unshare", "-n", "sh", "-c", SETUP, "sh", "true"], capture_output=True).returncode == 0


pytestmark = pytest.mark.skipif(not _namespace_works(), reason="needs `unshare -n` (a network namespace of its own)")


@pytest.fixture(scope="module")
def found() -> dict:
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}  # the roles need no Django
    done = subprocess.run(
        ["unshare", "-n", "sh", "-c", SETUP, "sh", sys.executable, "-m", "tests.net.roles_in_netns"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


REBOUND = refusal("rebind.example", "127.0.0.1")
HOP = refusal("127.0.0.1", "127.0.0.1")


def test_no_role_ever_reached_the_loopback_site(found):
    assert found["private_seen"] == []


@pytest.mark.parametrize("role", ["webhook", "model", "http_tool", "oauth", "egress", "web"])
def test_each_client_reaches_a_public_name_then_refuses_it_rebound_and_refuses_a_redirect_hop(found, role):
    assert found["roles"][f"net.client({role!r})"] == {"first": "200", "second": REBOUND, "redirect": HOP}


def test_the_http_tool(found):
    assert found["roles"]["http tool"] == {
        "first": "HTTP 200\nok",
        "second": f"crm: GET /x: {REBOUND}",
        "redirect": "HTTP 302\n",
    }
    openapi = found["roles"]["http tool openapi"]
    assert openapi["first"] == "crm: the openapi document did not load (it has no `paths`); only the generic call_crm"
    assert openapi["second"] == f"crm: the openapi document did not load ({REBOUND}); only the generic call_crm"
    assert openapi["redirect"] == f"crm: the openapi document did not load ({HOP}); only the generic call_crm"


def test_the_model_provider(found):
    assert found["roles"]["model provider"] == {
        "first": "the provider's answer was neither a stream nor JSON",  # it reached the public host
        "second": f"base_url: {REBOUND}",
        "redirect": "the provider's answer was neither a stream nor JSON",
    }  # a 302, not followed


def test_the_webhook(found):
    assert found["roles"]["webhook"] == {
        "first": "answered 200",
        "second": REBOUND,
        "redirect": "answered 302 with a redirect, which foldrun does not follow",
    }


def test_the_oauth_token_endpoint(found):
    assert found["roles"]["oauth token endpoint"] == {
        "first": "the token endpoint for CRM refused the refresh (HTTP 200: no access token in the answer)",
        "second": f"the token endpoint for CRM cannot be called: {REBOUND}",
        "redirect": "the token endpoint for CRM refused the refresh (HTTP 302: no access token in the answer)",
    }


def test_web_fetch(found):
    role = found["roles"]["web fetch"]
    assert role["first"] == "ok"
    assert role["second"].endswith(f"/x: {REBOUND}")
    assert role["redirect"].endswith(f"/in: {HOP}")


def test_the_egress_proxy(found):
    assert found["roles"]["egress proxy"] == {
        "first": "200 ok",
        "second": f"403 egress: refused GET rebind.example — {REBOUND}",
        "redirect": f"403 egress: refused GET 127.0.0.1 — {HOP}",
    }


def test_the_browser_s_guard_proxy(found):
    assert found["roles"]["browser guard proxy"] == {
        "first": "200 ok",
        "second": f"403 refused by foldrun: {REBOUND}",
        "redirect": f"403 refused by foldrun: {HOP}",
    }
