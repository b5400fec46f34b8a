"""`extensions`: workspace paths of unpacked Chrome extensions; the browser then runs in the step, in Chromium
(spec/tools.md, "The browser, in full" and "What this agent's browser may do"). Real Chromium launched for the call
with a tiny MV3 extension whose content script marks the page; the call reads the mark."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from foldrun.contract import Desk, check
from foldrun.web import WebToolError
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

ROUTES = {"/plain": html(page("Plain", "<p id='words'>an ordinary page</p>"))}
MANIFEST = {
    "manifest_version": 3,
    "name": "marker",
    "version": "1.0",
    "content_scripts": [{"matches": ["<all_urls>"], "js": ["mark.js"], "run_at": "document_end"}],
}
MARK = "document.documentElement.dataset.marked = 'by the marker extension';"
READ_MARK = [
    {"wait": "fn", "js": "document.documentElement.dataset.marked", "timeout": 5000},
    {"get": "html", "what": "attr", "attr": "data-marked"},
]


def _extension(root: Path, name: str = "marker", manifest: object = MANIFEST) -> str:
    folder = root / "extensions" / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "manifest.json").write_text(manifest if isinstance(manifest, str) else json.dumps(manifest))
    (folder / "mark.js").write_text(MARK)
    return f"extensions/{name}"


def _mark(out: str) -> list:
    return [r.get("value") for r in json.loads(out) if r.get("get") == "attr of html"]


def test_an_unpacked_extension_runs_in_the_page_and_the_call_reads_its_mark(browse, pages_site, tmp_path):
    path = _extension(tmp_path)
    out = browse({"browse": {"extensions": [path]}}).call(
        {"action": "browse", "url": f"{pages_site.url}/plain", "actions": READ_MARK}
    )
    assert _mark(out) == ["by the marker extension"]


def test_the_call_argument_loads_one_too_and_without_it_the_page_is_unmarked(browse, pages_site, tmp_path):
    path = _extension(tmp_path)
    tool = browse()
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/plain", "extensions": path, "actions": READ_MARK})
    assert _mark(out) == ["by the marker extension"]
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/plain",
            "actions": [{"get": "html", "what": "attr", "attr": "data-marked"}],
        }
    )
    assert _mark(out) == [None]  # the pool's browser never had it


@pytest.mark.parametrize(
    "setup,sentence",
    [
        (
            lambda root: (root / "extensions" / "empty").mkdir(parents=True) or "extensions/empty",
            "browse: extensions: extensions/empty is not an unpacked extension — it has no manifest.json",
        ),
        (
            lambda root: _extension(root, "broken", "{not json"),
            "browse: extensions: extensions/broken/manifest.json is not JSON (Expecting property name enclosed in double "
            "quotes: line 1 column 2 (char 1)) — an unpacked extension's manifest is a JSON object",
        ),
        (
            lambda root: _extension(root, "other", {"name": "x"}),
            "browse: extensions: extensions/other/manifest.json has no manifest_version — it is not a Chrome "
            "extension's manifest",
        ),
        (
            lambda root: "extensions/missing",
            "browse: extensions: extensions/missing is not a folder in the agent directory; extensions takes workspace "
            "paths of unpacked extensions, such as extensions/my-extension",
        ),
        (
            lambda root: "../outside",
            "extensions=../outside: `..` is refused — the path must stay inside the agent directory",
        ),
        (
            lambda root: "/etc",
            "extensions=/etc: an absolute path is refused — write a path inside the agent directory, "
            "such as outputs/page.md",
        ),
    ],
)
def test_a_folder_that_is_not_an_extension_is_a_sentence(browse, pages_site, tmp_path, setup, sentence):
    path = setup(tmp_path)
    with pytest.raises(WebToolError) as caught:
        browse().call({"action": "browse", "url": f"{pages_site.url}/plain", "extensions": [path]})
    assert str(caught.value) == sentence


def test_another_engine_is_refused_in_the_words_check_uses(browse, pages_site, tmp_path):
    path = _extension(tmp_path)
    with pytest.raises(WebToolError) as caught:
        browse({"browse": {"engine": "firefox", "extensions": [path]}}).call(
            {"action": "browse", "url": f"{pages_site.url}/plain"}
        )
    text = (
        "---\nname: researcher\ntools: [web]\nweb:\n  browse:\n    engine: firefox\n"
        f"    extensions: [{path}]\n---\nPrompt.\n"
    )
    found = [
        f.message
        for f in check(
            Desk(files={"agents/researcher/agent.md": text, f"{path}/manifest.json": json.dumps(MANIFEST)}),
            mode="check",
        )
        if f.code.startswith("web.")
    ]
    assert found == [str(caught.value) + "."]
    assert str(caught.value).startswith("web.browse: extensions needs Chromium")


def test_a_session_keeps_its_own_browser_with_the_extension_across_calls(browse, pages_site, tmp_path):
    path = _extension(tmp_path)
    tool = browse({"browse": {"extensions": [path]}})
    tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/plain",
            "session": "ext",
            "actions": [{"localstorage": "kept", "value": "from the first call"}],
        }
    )
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/plain",
            "session": "ext",
            "actions": [*READ_MARK, {"get": "localstorage", "key": "kept"}],
        }
    )
    assert _mark(out) == ["by the marker extension"]
    # the same browser and context: its storage is still there
    assert {"get": "localstorage", "value": "from the first call"} in json.loads(out)
