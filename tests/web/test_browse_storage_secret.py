"""`storage:` + `storage_origin:` — a login kept in Web Storage and IndexedDB, seeded from a secret before the
site's own code, never read back (spec/tools.md, "When the login is not a cookie"). Real Chromium, a page that
reads its session on boot."""

from __future__ import annotations

import json

import pytest

from foldrun.web import WebToolError
from tests.fakes.website import html, page

pytestmark = pytest.mark.e2e

TOKEN = "tok-abcdef-1234567890"
BOOT = """<p id="who">-</p><p id="idb">-</p><script>
document.getElementById('who').textContent = localStorage.getItem('user-session') ? 'signed in with ' +
  localStorage.getItem('user-session') : 'signed out';
const open = indexedDB.open('firebaseLocalStorageDb', 1);
open.onupgradeneeded = () => open.result.createObjectStore('firebaseLocalStorage', {keyPath: 'fbase_key'});
open.onsuccess = () => {
  const all = open.result.transaction('firebaseLocalStorage').objectStore('firebaseLocalStorage').getAll();
  all.onsuccess = () => { document.getElementById('idb').textContent = all.result.length ?
    'user ' + all.result[0].value.uid : 'no record'; };
};
</script>"""
ROUTES = {"/app": html(page("App", BOOT))}
STORAGE = {
    "localStorage": {"user-session": TOKEN},
    "sessionStorage": {},
    "indexedDB": {
        "firebaseLocalStorageDb": {
            "firebaseLocalStorage": [{"fbase_key": "firebase:authUser:abc", "value": {"uid": "ann-7"}}]
        }
    },
}


@pytest.fixture
def browse(make_tool, browsers, pages_site):
    def make(storage=None, **call):
        block = {"storage": "SITE_STORAGE", "storage_origin": pages_site.url}
        return make_tool(
            {"browse": block}, browsers=browsers, secret={"SITE_STORAGE": json.dumps(storage or STORAGE)}.__getitem__
        )

    return make


def test_storage_is_seeded_before_the_sites_own_code_and_never_shown(browse, pages_site):
    out = browse().call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/app",
            "actions": [{"wait": "text", "text": "user ", "timeout": 5000}],
        }
    )
    assert "signed in with [secret SITE_STORAGE (" in out and TOKEN not in out
    assert "user ann-7" in out  # IndexedDB filled through its own API, before the page opened it


def test_another_origin_opens_without_the_storage_and_says_so(browse, pages_site, recorder):
    other = f"http://localhost:{pages_site.port}"
    out = browse().call({"action": "browse", "url": f"{other}/app"})
    assert "signed out" in out
    assert (
        f"browse: {other} is not {pages_site.url}, so the page opens without web.browse.storage (it belongs "
        f"to {pages_site.url})"
    ) in recorder.lines


def test_no_script_runs_beside_the_storage_and_state_refuses_it(browse, pages_site):
    tool = browse()
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/app",
                "actions": [{"eval": "localStorage.getItem('user-session')"}],
            }
        )
    assert str(caught.value) == (
        "browse: eval does not run in a call that carries web.browse.storage, or in a "
        "session it seeded — an expression in the page could hand over the token"
    )
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/app",
                "actions": [{"get": "localstorage", "key": "user-session"}],
            }
        )
    assert str(caught.value) == "browse: a get of localstorage is refused where a secret seeded the session"
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/app", "state": "site"})
    assert str(caught.value).startswith(
        "browse: state= does not keep a login seeded from a secret (web.browse.storage)"
    )


def test_a_storage_secret_of_the_wrong_shape_is_a_sentence(browse, pages_site):
    with pytest.raises(WebToolError) as caught:
        browse(storage={"localStorage": {"n": 5}}).call({"action": "browse", "url": f"{pages_site.url}/app"})
    assert str(caught.value) == (
        "browse: web.browse.storage: localStorage in the secret SITE_STORAGE must map each key to text"
    )
    with pytest.raises(WebToolError) as caught:
        browse(storage={"cookies": "a=b"}).call({"action": "browse", "url": f"{pages_site.url}/app"})
    assert str(caught.value).startswith("browse: web.browse.storage: the secret SITE_STORAGE is not the storage shape")
