"""Engines as the machine has them: engines.json, written at install, read by the tool and /api/version."""

from __future__ import annotations

import json
import subprocess

import pytest

from accounts.browsers import browser_versions
from foldrun.web import WebToolError
from foldrun.web.browse import engines


@pytest.fixture
def engines_file(tmp_path, monkeypatch):
    def write(found: dict) -> None:
        target = tmp_path / "engines.json"
        target.write_text(json.dumps({"engines": found}))
        monkeypatch.setenv("FOLDRUN_ENGINES_FILE", str(target))
        engines.installed.cache_clear()
        browser_versions.cache_clear()

    yield write
    engines.installed.cache_clear()
    browser_versions.cache_clear()


def test_the_install_writes_what_the_machine_has(tmp_path):
    written = engines.write(tmp_path / "engines.json")
    version = subprocess.run(["/usr/bin/chromium", "--version"], capture_output=True, text=True).stdout
    assert written["engines"]["chromium"]["path"] == "/usr/bin/chromium"
    assert written["engines"]["chromium"]["version"] in version
    assert json.loads((tmp_path / "engines.json").read_text()) == written


def test_an_engine_the_machine_lacks_is_refused_with_the_engines_it_has(make_tool, engines_file, site):
    engines_file({"chromium": {"path": "/usr/bin/chromium", "version": "156.0.8078.114"}})
    with pytest.raises(WebToolError) as caught:
        make_tool().call({"action": "browse", "url": f"{site.url}/article", "browser": "webkit"})
    assert str(caught.value) == (
        "browse: this runner image was built without safari; it has chromium (and chrome, which runs as Chromium here)"
    )


@pytest.mark.e2e
def test_chrome_falls_back_to_chromium_and_says_so(make_tool, engines_file, site, recorder):
    engines_file({"chromium": {"path": "/usr/bin/chromium", "version": "156.0.8078.114"}})
    out = make_tool().call({"action": "browse", "url": f"{site.url}/article", "browser": "chrome", "mode": "text"})
    assert "browse: Google Chrome is not in this runner image; running Chromium" in recorder.lines
    assert out


def test_api_version_reports_what_engines_json_lists(client, engines_file):
    engines_file(
        {
            "chromium": {"path": "/usr/bin/chromium", "version": "156.0.8078.114"},
            "firefox": {"path": "/ms-playwright/firefox-1490", "version": "1490"},
        }
    )
    answer = client.get("/api/version").json()
    assert answer["browsers"] == ["chromium", "firefox"]
    assert answer["browser_versions"] == {"chromium": "156.0.8078.114", "firefox": "1490"}
