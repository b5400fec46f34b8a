"""A `login` step reads a sign-in's outcome from what the site did, not from its words, where the site answers with
a page of its own (no form back, no field marked, nothing in English): it kept nothing and stayed on its sign-in
page is a refusal; it kept a cookie or storage key and moved on is a sign-in; one without the other is said to be
unknown, never "signed in". And a form the page's own script posts with fetch() a moment after the submit is
judged on the site's answer, not before it. Real Chromium against German loopback pages."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest

from tests.fakes.website import html

pytestmark = pytest.mark.e2e

PASSWORD = "richtiges-Passwort-7"
RIGHT = json.dumps({"username": "alice", "password": PASSWORD})
WRONG = "alice:falsches-Passwort"


def seite(title: str, body: str) -> bytes:
    return (
        f'<!doctype html><html lang="de"><head><title>{title}</title></head><body><main>{body}</main></body></html>'
    ).encode()


FORM = (
    '<form action="{action}" method="post"><label>Benutzername <input name="benutzer"></label>'
    '<label>Passwort <input type="password" name="passwort"></label><button type="submit">Anmelden</button>'
    "</form>"
)
# The page a refusal gets on these sites: no form, no field, no alert — only German words and a way back.
FEHLGESCHLAGEN = seite(
    "Fehler",
    '<h1>Anmeldung fehlgeschlagen</h1><p>Bitte versuchen Sie es erneut.</p><a href="/zugang">Zurück zur Anmeldung</a>',
)


def _right(request: dict) -> bool:
    return parse_qs(request["body"].decode()).get("passwort") == [PASSWORD]


def _zugang(request: dict):  # noqa: ANN202 - an Answer
    """Posts to itself: the right password gets a session cookie and the overview, a wrong one the refusal page
    in place of the form, at the sign-in page's own address, with nothing kept."""
    if request["method"] != "POST":
        return html(seite("Anmelden", FORM.format(action="/zugang")))
    if _right(request):
        return 303, {"location": "/uebersicht", "set-cookie": "sitzung=b41c9e; Path=/; HttpOnly"}, b""
    return html(FEHLGESCHLAGEN)


def _uebersicht(request: dict):  # noqa: ANN202 - an Answer
    signed = "sitzung=b41c9e" in request["headers"].get("Cookie", "")
    return html(
        seite(
            "Übersicht",
            "<h1>Übersicht</h1><p>Angemeldet als alice</p>" if signed else "<p>Bitte melden Sie sich an.</p>",
        )
    )


def _fehlversuch(request: dict):  # noqa: ANN202 - an Answer
    """Posts to itself and answers a wrong password with the refusal page and a cookie counting the tries."""
    if request["method"] != "POST":
        return html(seite("Anmelden", FORM.format(action="/versuch")))
    return 200, {"content-type": "text/html; charset=utf-8", "set-cookie": "fehlversuche=1; Path=/"}, FEHLGESCHLAGEN


# A sign-in the page's script sends: the submit is held, then 400 ms later a fetch() posts the fields as JSON; the
# answer's token goes to localStorage and the page moves on, or the script shows the refusal in the form.
SCRIPTED = seite(
    "Anmelden",
    '<form id="f"><label>Benutzername <input name="benutzer"></label><label>Passwort '
    '<input type="password" name="passwort"></label><button>Anmelden</button>'
    '<p id="meldung"></p></form><script>'
    'document.getElementById("f").addEventListener("submit", event => {'
    " event.preventDefault(); const f = event.target;"
    " setTimeout(async () => {"
    '  const answer = await fetch("/api/sitzung", {method: "POST", headers: {"content-type":'
    ' "application/json"}, body: JSON.stringify({benutzer: f.benutzer.value,'
    " passwort: f.passwort.value})});"
    '  if (answer.ok) { localStorage.setItem("token", (await answer.json()).token);'
    ' location.href = "/app/start"; }'
    '  else { document.getElementById("meldung").textContent = "Anmeldung fehlgeschlagen"; }'
    " }, 400); });</script>",
)


def _sitzung(request: dict):  # noqa: ANN202 - an Answer
    if json.loads(request["body"] or b"{}").get("passwort") == PASSWORD:
        return 200, {"content-type": "application/json"}, b'{"token": "t-91"}'
    return 401, {"content-type": "application/json"}, b'{"fehler": "unbekannt"}'


ROUTES = {
    "/zugang": _zugang,
    "/uebersicht": _uebersicht,
    "/portal": html(seite("Anmelden", FORM.format(action="/portal/pruefen"))),
    "/portal/pruefen": lambda request: html(FEHLGESCHLAGEN),
    "/versuch": _fehlversuch,
    "/app/anmelden": html(SCRIPTED),
    "/api/sitzung": _sitzung,
    "/app/start": html(
        seite(
            "Start",
            '<h1>Willkommen, alice</h1><p id="token"></p><script>'
            'document.getElementById("token").textContent = "Token " + '
            'localStorage.getItem("token");</script>',
        )
    ),
}


def _login(browse, url: str, secret: str) -> str:  # noqa: ANN001 - the fixture
    tool = browse(secret={"PORTAL_LOGIN": secret}.__getitem__)
    return tool.call({"action": "browse", "url": url, "mode": "text", "actions": [{"login": "PORTAL_LOGIN"}]})


def test_a_german_refusal_page_in_place_of_the_form_that_keeps_nothing_is_not_signed_in(browse, pages_site):
    out = _login(browse, f"{pages_site.url}/zugang", WRONG)
    assert out.splitlines()[0] == (
        "login: the site did not sign in from the secret PORTAL_LOGIN — the page is still "
        f"the sign-in page ({pages_site.url}/zugang) and the site kept no cookie or storage "
        "from the submit"
    )
    assert "Anmeldung fehlgeschlagen" in out


def test_the_same_german_site_signing_in_with_a_cookie_and_its_overview_is_signed_in(browse, pages_site):
    out = _login(browse, f"{pages_site.url}/zugang", RIGHT)
    assert out.splitlines()[0] == "login: signed in from the secret PORTAL_LOGIN"
    assert "Angemeldet als alice" in out


def test_a_german_refusal_page_elsewhere_that_keeps_nothing_is_said_to_be_unknown_not_signed_in(browse, pages_site):
    out = _login(browse, f"{pages_site.url}/portal", WRONG)
    assert out.splitlines()[0] == (
        "login: could not tell whether the site signed in from the secret PORTAL_LOGIN — "
        f"the page went on to {pages_site.url}/portal/pruefen, but the site kept no cookie "
        "or storage from the submit"
    )


def test_a_german_refusal_page_that_sets_a_cookie_but_stays_is_said_to_be_unknown_not_signed_in(browse, pages_site):
    out = _login(browse, f"{pages_site.url}/versuch", WRONG)
    assert out.splitlines()[0] == (
        "login: could not tell whether the site signed in from the secret PORTAL_LOGIN — "
        "the site kept the cookie fehlversuche, but the page is still the sign-in page "
        f"({pages_site.url}/versuch)"
    )


def test_a_sign_in_the_pages_script_posts_after_a_delay_is_judged_on_its_answer_signed_in(browse, pages_site):
    out = _login(browse, f"{pages_site.url}/app/anmelden", RIGHT)
    assert out.splitlines()[0] == "login: signed in from the secret PORTAL_LOGIN"
    assert "Willkommen, alice" in out and "Token t-91" in out
    assert "POST /api/sitzung" in pages_site.seen


def test_a_sign_in_the_pages_script_posts_after_a_delay_and_the_site_refuses_is_its_401(browse, pages_site):
    out = _login(browse, f"{pages_site.url}/app/anmelden", WRONG)
    assert out.splitlines()[0] == (
        "login: the site did not sign in from the secret PORTAL_LOGIN — it answered the sign-in with 401"
    )
    assert "Anmeldung fehlgeschlagen" in out
