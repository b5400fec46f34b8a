"""A `login` step tells a refused sign-in from the page's structure, not its English: a German site that shows its
form again, or marks the field it refused `aria-invalid`, is reported as not signed in with the site's own line
quoted — and a German site that signs in is not misreported, even with an alert on its welcome page."""

from __future__ import annotations

import json
from urllib.parse import parse_qs

import pytest

from tests.fakes.website import html

pytestmark = pytest.mark.e2e

PASSWORD = "richtiges-Passwort-7"


def seite(title: str, body: str) -> bytes:
    return (
        f'<!doctype html><html lang="de"><head><title>{title}</title></head><body><main>{body}</main></body></html>'
    ).encode()


FORM = (
    '<form action="{action}" method="post"><label>Benutzername <input name="benutzer" id="benutzer"></label>'
    '<label>Passwort <input type="password" name="passwort" id="passwort"></label>{error}'
    '<button type="submit">Anmelden</button></form>'
)


def _posted(request: dict) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(request["body"].decode()).items()}


def _form_again(request: dict):  # noqa: ANN202 - an Answer
    """The German site most sites are: a wrong password gets the form back, 200, with an alert above it; the right
    one a session cookie and the welcome page."""
    if request["method"] == "POST" and _posted(request).get("passwort") == PASSWORD:
        return 303, {"location": "/willkommen", "set-cookie": "sitzung=7f3a; Path=/; HttpOnly"}, b""
    error = '<p role="alert">Das Passwort ist falsch.</p>' if request["method"] == "POST" else ""
    return html(seite("Anmelden", FORM.format(action="/anmelden", error=error)))


def _marked_invalid(request: dict):  # noqa: ANN202 - an Answer
    """A site that answers a wrong password with only its user name field, marked invalid, and the reason tied to
    it by aria-errormessage — no password field showing, no alert, nothing in English."""
    if request["method"] == "POST":
        return html(
            seite(
                "Anmelden",
                '<form action="/konto" method="post"><label>Benutzername <input '
                'name="benutzer" id="benutzer" aria-invalid="true" aria-errormessage="fehler">'
                '</label><p id="fehler">Benutzername oder Passwort ist falsch</p>'
                '<button type="submit">Weiter</button></form>',
            )
        )
    return html(seite("Anmelden", FORM.format(action="/konto", error="")))


ROUTES = {
    "/anmelden": _form_again,
    "/konto": _marked_invalid,
    "/willkommen": html(
        seite(
            "Willkommen",
            '<div role="alert">Sie haben sich erfolgreich angemeldet.</div>'
            "<h1>Willkommen zurück, alice</h1><p>Ihr Konto</p>",
        )
    ),
}


def test_a_german_site_that_shows_its_form_again_saying_das_passwort_ist_falsch_is_not_signed_in(browse, pages_site):
    tool = browse(secret={"PORTAL_LOGIN": "alice:falsches-Passwort"}.__getitem__)
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/anmelden", "actions": [{"login": "PORTAL_LOGIN"}]})
    assert out.splitlines()[0] == (
        "login: the site did not sign in from the secret PORTAL_LOGIN — its sign-in form "
        'is still on the page after the submit, saying "Das Passwort ist falsch."'
    )
    assert "signed in from the secret" not in out


def test_a_german_site_that_marks_the_field_it_refused_aria_invalid_is_not_signed_in(browse, pages_site):
    tool = browse(secret={"PORTAL_LOGIN": "alice:falsches-Passwort"}.__getitem__)
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/konto", "actions": [{"login": "PORTAL_LOGIN"}]})
    assert out.splitlines()[0] == (
        "login: the site did not sign in from the secret PORTAL_LOGIN — it marks benutzer "
        'invalid after the submit, saying "Benutzername oder Passwort ist falsch"'
    )
    assert "signed in from the secret" not in out


def test_a_german_site_that_signs_in_is_reported_signed_in_though_its_welcome_page_has_an_alert(browse, pages_site):
    tool = browse(secret={"PORTAL_LOGIN": json.dumps({"username": "alice", "password": PASSWORD})}.__getitem__)
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/anmelden",
            "mode": "text",
            "actions": [{"login": "PORTAL_LOGIN"}],
        }
    )
    assert out.splitlines()[0] == "login: signed in from the secret PORTAL_LOGIN"
    assert "Willkommen zurück, alice" in out
