"""`foldrun check` signed in: the server's browsers (from /api/version) let it
warn about a pinned user_agent: of another Chrome major, as the deploy does;
offline, or with the server out of reach, it says nothing about it."""

from __future__ import annotations

import json

UA_99 = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/99.0.0.0 Safari/537.36"
PINNED = f'---\nname: a\ndescription: d.\ntools: [web]\nweb:\n  browse:\n    user_agent: "{UA_99}"\n---\nx\n'
STALE = (
    "agents/a/agent.md:7: warning: web.browse.user_agent claims Chrome 99, but the browser that sends it is "
    "Chromium 156; a site sees the mismatch beside the client hints and the JavaScript engine, which say 156 — "
    "drop the pin so the user agent follows the browser, or raise it to Chrome/156."
)


def desk_with_a_pin(tmp_path):
    (tmp_path / "agents/a").mkdir(parents=True)
    (tmp_path / "agents/a/agent.md").write_text(PINNED)
    return tmp_path


def version_server(canned_server):
    answer = {"version": "0.9.0", "api": 1, "browsers": ["chromium"], "browser_versions": {"chromium": "156.0.7000.1"}}
    return canned_server({"/api/version": (200, "application/json", json.dumps(answer).encode())})


def test_check_signed_in_warns_about_a_pin_of_another_major_than_the_servers_chromium(
    cli, monkeypatch, canned_server, tmp_path
):
    server = version_server(canned_server)
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("check", desk_with_a_pin(tmp_path))
    assert result.code == 0
    assert result.lines == [STALE, "0 errors, 1 warning"]
    assert server.requests == [("GET", "/api/version")]


def test_check_offline_says_nothing_about_the_pin(cli, tmp_path):
    result = cli("check", desk_with_a_pin(tmp_path))
    assert result.lines == ["0 errors, 0 warnings"]


def test_check_with_the_server_out_of_reach_still_checks_and_says_nothing_about_the_pin(
    cli, monkeypatch, canned_server, tmp_path
):
    server = canned_server({})
    url = server.url
    server.close()
    monkeypatch.setenv("FOLDRUN_URL", url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("check", desk_with_a_pin(tmp_path))
    assert (result.code, result.lines) == (0, ["0 errors, 0 warnings"])
