"""What seeded a vendor's kept profile (`vendor_session.keep`) is the database's record, never the keep file's.

The keep file is under the workspace's state/, which its programs can write: each test writes it as such a program
would, and the record (browsing.KeptSeed, through browsing.kept.KeptSeeds, the seed book a run's host hands the
web tool) still says the profile is signed in. The vendor is a loopback stand-in of Browserbase's documented API
(tests/fakes/browser_vendors.py) handing back a real local Chromium, whose own context keeps the login call to
call as the vendor's kept context does.
"""

from __future__ import annotations

import json

import pytest

from accounts.models import Account, Workspace
from browsing.kept import KeptSeeds
from browsing.models import KeptSeed
from foldrun.web import WebToolError
from tests.fakes.browser_vendors import BrowserVendor
from tests.web.test_browse_vendors import chromium, relay  # noqa: F401 - the fixtures, as the other vendor files share them
from tests.fakes.website import html

ROUTES = {
    "/jar": html(
        b"<html><head><title>Jar</title></head><body><main><p id=jar></p><p id=store></p></main>"
        b"<script>document.getElementById('jar').textContent = 'jar: ' + document.cookie;"
        b"document.getElementById('store').textContent = 'store: ' + localStorage.getItem('user-session')"
        b"</script></body></html>"
    ),
}
KEEP = {"via": "browserbase", "vendor_session": {"keep": "client-portal"}}
COOKIE = "sid=portal-sid-5150"
TOKEN = "tok-abcdef-1234567890"
SIGNED_IN = (
    "browse: js does not run in a call that carries cookies from a secret, or in a session those cookies "
    "seeded — document.cookie is one expression away"
)


@pytest.fixture
def vendor(relay):
    with BrowserVendor("browserbase", relay) as server:
        yield server


@pytest.fixture
def call(browse, vendor, workspace):
    """`call(args, workspace=…)`: one run's browse call, its seed book the workspace's (alice's by default)."""
    secrets = {
        "BROWSERBASE_API_KEY": vendor.key,
        "PORTAL_COOKIES": COOKIE,
        "SITE_STORAGE": json.dumps({"localStorage": {"user-session": TOKEN}}),
    }

    def one(args: dict, *, on: Workspace | None = None, **block) -> str:
        tool = browse(
            {"browse": {**KEEP, **block}},
            endpoints={"browserbase": vendor.url},
            secret=secrets.__getitem__,
            seeds=KeptSeeds(on or workspace),
        )
        return tool.call({"action": "browse", **args})

    return one


def keep_file(tmp_path) -> dict:
    return json.loads((tmp_path / "state/web-browse/client-portal.json").read_text())


def program_writes(tmp_path, data: dict | None) -> None:
    """What a script tool with state writes can do to the keep file: rewrite it, or delete it (None)."""
    target = tmp_path / "state/web-browse/client-portal.json"
    if data is None:
        target.unlink()
    else:
        target.write_text(json.dumps(data))


def test_a_program_rewriting_the_keep_file_with_no_mark_still_leaves_the_profile_signed_in(
    call, pages_site, vendor, tmp_path
):
    call({"url": f"{pages_site.url}/jar", "cookies": "PORTAL_COOKIES"})
    (context,) = vendor.made
    program_writes(tmp_path, {"vendor": "browserbase", "context": context, "seeded": False, "secrets": []})
    with pytest.raises(WebToolError) as caught:
        call({"url": f"{pages_site.url}/jar", "js": "document.cookie"})
    read = call({"url": f"{pages_site.url}/jar"})
    assert str(caught.value) == SIGNED_IN
    assert "jar: [secret PORTAL_COOKIES]" in read and "portal-sid-5150" not in read
    assert keep_file(tmp_path) == {"vendor": "browserbase", "context": context}


def test_a_program_rubbing_out_a_storage_login_s_mark_still_refuses_reading_the_token_back(
    call, pages_site, vendor, tmp_path
):
    call({"url": f"{pages_site.url}/jar"}, storage="SITE_STORAGE", storage_origin=pages_site.url)
    (context,) = vendor.made
    program_writes(tmp_path, {"vendor": "browserbase", "context": context})
    with pytest.raises(WebToolError) as caught:
        call({"url": f"{pages_site.url}/jar", "actions": [{"get": "localstorage", "key": "user-session"}]})
    read = call({"url": f"{pages_site.url}/jar"})
    assert str(caught.value) == "browse: a get of localstorage is refused where a secret seeded the session"
    assert "store: [secret SITE_STORAGE (1)]" in read and TOKEN not in read
    with pytest.raises(WebToolError) as script:
        call({"url": f"{pages_site.url}/jar", "js": "localStorage.getItem('user-session')"})
    assert str(script.value) == (
        "browse: js does not run in a call that carries web.browse.storage, or in a "
        "session it seeded — an expression in the page could hand over the token"
    )


def test_a_program_swapping_the_kept_id_is_read_as_the_signed_in_profile(call, pages_site, vendor, tmp_path):
    call({"url": f"{pages_site.url}/jar", "cookies": "PORTAL_COOKIES"})
    program_writes(tmp_path, {"vendor": "browserbase", "context": "ctx_a_program_made_up"})
    with pytest.raises(WebToolError) as caught:
        call({"url": f"{pages_site.url}/jar", "js": "document.cookie"})
    assert str(caught.value) == SIGNED_IN
    assert vendor.posted("/v1/sessions")[-1]["browserSettings"]["context"] == {
        "id": "ctx_a_program_made_up",
        "persist": True,
    }


def test_a_program_deleting_the_keep_file_still_leaves_the_keep_signed_in(call, pages_site, vendor, tmp_path):
    call({"url": f"{pages_site.url}/jar", "cookies": "PORTAL_COOKIES"})
    program_writes(tmp_path, None)
    with pytest.raises(WebToolError) as caught:
        call({"url": f"{pages_site.url}/jar", "js": "document.cookie"})
    assert str(caught.value) == SIGNED_IN
    assert len(vendor.made) == 2  # a fresh context was made for the keep, and it is still read as signed in


def test_a_mark_an_older_run_left_in_the_keep_file_is_moved_into_the_record_once(call, pages_site, workspace, tmp_path):
    (tmp_path / "state/web-browse").mkdir(parents=True)
    program_writes(
        tmp_path,
        {
            "vendor": "browserbase",
            "context": "ctx_signed_in_before",
            "seeded": "cookies",
            "secrets": ["PORTAL_COOKIES"],
        },
    )
    with pytest.raises(WebToolError) as caught:
        call({"url": f"{pages_site.url}/jar", "js": "document.cookie"})
    assert str(caught.value) == SIGNED_IN
    assert keep_file(tmp_path) == {"vendor": "browserbase", "context": "ctx_signed_in_before"}
    assert KeptSeeds(workspace).seeds("browserbase", "client-portal") == [
        {"kept": "ctx_signed_in_before", "seeded": "cookies", "secrets": ["PORTAL_COOKIES"]}
    ]
    with pytest.raises(WebToolError) as again:  # the file's mark is gone now; the record is what says so
        call({"url": f"{pages_site.url}/jar", "js": "document.cookie"})
    assert str(again.value) == SIGNED_IN


def test_another_accounts_or_workspaces_record_for_the_same_keep_and_id_is_never_used(
    call, pages_site, workspace, charlie, tmp_path
):
    other_account = Account.objects.get(memberships__user=charlie)
    theirs = Workspace.objects.create(account=other_account, name="rank-desk")
    beside = Workspace.objects.create(account=workspace.account, name="other-desk")
    for desk in (theirs, beside):
        KeptSeeds(desk).note("browserbase", "client-portal", "ctx_shared_id", "cookies", ["PORTAL_COOKIES"])
    (tmp_path / "state/web-browse").mkdir(parents=True)
    program_writes(tmp_path, {"vendor": "browserbase", "context": "ctx_shared_id"})
    out = call({"url": f"{pages_site.url}/jar", "actions": [{"get": "localstorage", "key": "theme"}]})
    assert {"get": "localstorage", "value": None} in json.loads(out)  # refused only where this desk's record says
    assert KeptSeeds(workspace).seeds("browserbase", "client-portal") == []
    assert KeptSeed.objects.filter(account=other_account).count() == 1
