"""Whether a sign-in took, read from what the site did — the `login` step's last line (signin.py).

A refusal is read first, from signs that hold in any language: the sign-in answered with a 4xx, the sign-in form
back on the page (a password field showing), a field marked `aria-invalid`; then an English line naming the
credential as wrong. Where none of those shows, two more signs that do not depend on the site's words decide: did
the site keep anything new for the browser (a cookie its answer set, a new storage key), and did the page leave
the sign-in page's URL. Both yes is a sign-in, both no a refusal; when they disagree the step says it could not
tell rather than report a sign-in that may not have happened.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page


@dataclass(frozen=True)
class Verdict:
    """`signed` True (signed in), False (refused) or None (could not tell), and the clause saying why."""

    signed: bool | None
    why: str = ""

    def line(self, secret: str) -> str:
        if self.signed:
            return f"login: signed in from the secret {secret}"
        if self.signed is False:
            return f"login: the site did not sign in from the secret {secret} — {self.why}"
        return f"login: could not tell whether the site signed in from the secret {secret} — {self.why}"


def judge(page: "Page", status: int | None, navigations: list[int], kept: list[str], sign_in_url: str) -> Verdict:
    """The verdict on the page as the submit left it: `status` the sign-in request's answer, `navigations` the
    statuses of the pages the main frame was answered since, `kept` what the site kept that it had not before,
    `sign_in_url` the page the password was typed on."""
    for answered in (status, navigations[-1] if navigations else None):
        if answered is not None and 400 <= answered < 500:
            return Verdict(False, f"it answered the sign-in with {answered}")
    form, invalid, said = _look(page)
    saying = f', saying "{said[0][:160]}"' if said else ""
    if form:
        return Verdict(False, f"its sign-in form is still on the page after the submit{saying}")
    if invalid:
        return Verdict(False, f"it marks {', '.join(dict.fromkeys(invalid))} invalid after the submit{saying}")
    english = [line for line in said if _SAYS_NO.search(line)]
    if english:
        return Verdict(False, f'the page says "{english[0][:160]}"')
    here, there = _where(page.url), _where(sign_in_url)
    if kept and here != there:
        return Verdict(True)
    if not kept and here == there:
        return Verdict(
            False,
            f"the page is still the sign-in page ({there}) and the site kept no cookie or storage from the submit",
        )
    if kept:
        return Verdict(None, f"the site kept {' and '.join(kept)}, but the page is still the sign-in page ({there})")
    return Verdict(None, f"the page went on to {here}, but the site kept no cookie or storage from the submit")


def _where(url: str) -> str:
    """A page's address without its query or fragment (a refusal often only adds `?error=1`; a GET form's query
    carries the password)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.hostname or ''}{f':{parts.port}' if parts.port else ''}{parts.path or '/'}"


def _look(page: "Page") -> tuple[bool, list[str], list[str]]:
    """(a password field showing, the fields marked invalid, the lines the page says) over the page's frames — the
    form may have been in a frame (the step looks for its fields there too)."""
    form, invalid, said = False, [], []
    for frame in page.frames:
        try:
            looked = frame.evaluate(_LOOK_JS, _SAYS_NO.pattern)
        except Exception:  # noqa: BLE001 - the frame navigated away or went mid-look: nothing showing there
            continue
        form = form or looked["form"]
        invalid += looked["invalid"]
        said += looked["said"]
    return form, invalid, said


# Words a sign-in page uses for a refusal ("Incorrect username or password", "Login failed", "Invalid
# credentials"); English only, so one sign among the others, which do not depend on the site's language.
_SAYS_NO = re.compile(
    r"\b(?:(?:incorrect|invalid|wrong)\b[^.\n]{0,40}\b(?:password|credentials|"
    r"user ?name|e-?mail|log ?in|sign[- ]?in)|(?:log ?in|sign[- ]?in|authentication)\s+"
    r"(?:failed|denied|unsuccessful)|not recogni[sz]ed)",
    re.IGNORECASE,
)
# What the page shows after the submit: a password field still showing (the form back), the fields it marks
# aria-invalid, and the lines it says — each invalid field's own message (aria-errormessage, aria-describedby,
# the browser's), then its alerts, then an English line naming the credential as wrong — best first.
_LOOK_JS = """source => {
  const shown = e => !!e && e.getClientRects().length > 0 && getComputedStyle(e).visibility !== 'hidden';
  const words = e => (e.innerText || e.textContent || '').trim().replace(/\\s+/g, ' ');
  const byIds = ids => (ids || '').split(/\\s+/).map(id => id && document.getElementById(id))
    .filter(e => e && words(e)).map(words).join(' ');
  const form = [...document.querySelectorAll('input[type=password]')].some(shown);
  const invalid = [...document.querySelectorAll('[aria-invalid="true" i]')].filter(shown);
  const said = invalid.map(f => byIds(f.getAttribute('aria-errormessage')) || byIds(f.getAttribute('aria-describedby'))
    || f.validationMessage || '');
  for (const alert of document.querySelectorAll('[role=alert], [aria-live=assertive]'))
    if (shown(alert)) said.push(words(alert));
  const no = new RegExp(source, 'i');
  for (const line of (document.body ? document.body.innerText : '').split('\\n'))
    if (no.test(line)) said.push(line.trim().replace(/\\s+/g, ' '));
  return {form, invalid: invalid.map(f => f.name || f.id || f.type || f.tagName.toLowerCase()),
          said: said.filter(Boolean)};
}"""


def invalid_fields(password: "Locator") -> list[str]:
    """The fields the form's own validation still refuses after the submit, each as `name: the browser's
    message` — a form still on the page with one means the browser blocked the submit. [] otherwise."""
    try:
        return password.evaluate(
            """e => { const f = e.form; if (!f || f.noValidate) return [];
          return [...f.elements].filter(x => x.willValidate && !x.validity.valid)
            .map(x => `${x.name || x.id || x.type}: ${x.validationMessage}`); }""",
            timeout=1000,
        )
    except Exception:  # noqa: BLE001 - the form is gone (the submit navigated): nothing blocked it
        return []
