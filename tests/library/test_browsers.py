"""The install's browsers: /api/version reports them, and deploy and the
server's check compare a pinned user_agent: with them (spec/tools.md, "A
pinned user agent has to keep up with Chrome")."""

from __future__ import annotations

import pytest

from accounts.browsers import browser_versions

from .conftest import files, push

WS = "workspaces/rank-desk"
UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/{}.0.0.0 Safari/537.36"


def pinned(major: int) -> str:
    return (
        f'---\nname: a\ndescription: d.\ntools: [web]\nweb:\n  browse:\n    user_agent: "{UA.format(major)}"\n---\nx\n'
    )


@pytest.fixture
def chromium(tmp_path, monkeypatch):
    """A Chromium that says it is 157 (read once per process: the cache is emptied around the test)."""

    def install(output: str):
        binary = tmp_path / "chromium"
        binary.write_text(f"#!/bin/sh\necho '{output}'\n")
        binary.chmod(0o755)
        monkeypatch.setenv("FOLDRUN_CHROMIUM", str(binary))
        browser_versions.cache_clear()

    yield install
    browser_versions.cache_clear()


def test_version_reports_the_chromium_the_web_tool_drives(client, db, chromium):
    chromium("Chromium 157.0.8100.12 built on Debian GNU/Linux 12 (bookworm)")
    body = client.get("/api/version").json()
    assert (body["browsers"], body["browser_versions"]["chromium"]) == (["chromium"], "157.0.8100.12")


def test_version_leaves_browsers_out_when_none_answers(client, db, chromium, monkeypatch, tmp_path):
    chromium("not a browser")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert sorted(client.get("/api/version").json()) == ["api", "version"]


def test_a_deploy_warns_about_a_pin_of_another_major_naming_both(alice_api, workspace, chromium):
    chromium("Chromium 157.0.8100.12")
    response = push(alice_api, WS, verb="deploy", files=files(**{"agents/a/agent.md": pinned(99)}))
    assert response.status_code == 201
    assert [w["message"] for w in response.json()["warnings"]] == [
        "web.browse.user_agent claims Chrome 99, but the browser that sends it is Chromium 157; a site sees the mismatch "
        "beside the client hints and the JavaScript engine, which say 157 — drop the pin so the user agent follows the "
        "browser, or raise it to Chrome/157."
    ]


def test_a_deploy_of_a_pin_that_matches_says_nothing(alice_api, workspace, chromium):
    chromium("Chromium 157.0.8100.12")
    response = push(alice_api, WS, verb="deploy", files=files(**{"agents/a/agent.md": pinned(157)}))
    assert response.json()["warnings"] == []


def test_the_servers_check_warns_too(alice_api, workspace, chromium):
    chromium("Chromium 157.0.8100.12")
    answer = alice_api.post(f"/api/{WS}/check", {"files": files(**{"agents/a/agent.md": pinned(99)})}, format="json")
    assert [f["code"] for f in answer.json()["findings"]] == ["web.user_agent_stale"]
