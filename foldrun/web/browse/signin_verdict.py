"""Whether a sign-in took, read from the page the submit left — the `login` step's last line (signin.py)."""
from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page


def refusal(page: "Page", answers: list[int]) -> str:
    """Why the submit did not sign in, as a clause, or "" when nothing says it failed.

    A site that refuses a password answers the submit with a 4xx, shows its sign-in form again (a password field
    still showing), marks a field invalid (`aria-invalid`), or shows a page of its own saying the password was
    wrong; the call must not report a sign-in that did not happen. All but the last are read from the page's
    structure, so they hold in any language; the site's own line — the invalid field's message, an alert, or an
    English sentence naming the credential as wrong — is quoted so the caller reads the site's reason."""
    if answers and 400 <= answers[-1] < 500:
        return f"it answered the sign-in with {answers[-1]}"
    form, invalid, said = False, [], []
    for frame in page.frames:  # the form may have been in a frame (login's field() looks there too)
        try:
            looked = frame.evaluate(_LOOK_JS, _SAYS_NO.pattern)
        except Exception:  # noqa: BLE001 - the frame navigated away or went mid-look: nothing showing there
            continue
        form = form or looked["form"]
        invalid += looked["invalid"]
        said += looked["said"]
    saying = f', saying "{said[0][:160]}"' if said else ""
    if form:
        return f"its sign-in form is still on the page after the submit{saying}"
    if invalid:
        return f"it marks {', '.join(dict.fromkeys(invalid))} invalid after the submit{saying}"
    # A page of its own (200, no form, nothing marked): only its words are left to say it refused — in English.
    english = [line for line in said if _SAYS_NO.search(line)]
    return f'the page says "{english[0][:160]}"' if english else ""


# Words a sign-in page uses for a refusal ("Incorrect username or password", "Login failed", "Invalid
# credentials"); English only, so one signal among the page's structure: a refusal in another language on a page
# with no form, no invalid field and a 200 still reads as signed in.
_SAYS_NO = re.compile(r"\b(?:(?:incorrect|invalid|wrong)\b[^.\n]{0,40}\b(?:password|credentials|"
                      r"user ?name|e-?mail|log ?in|sign[- ]?in)|(?:log ?in|sign[- ]?in|authentication)\s+"
                      r"(?:failed|denied|unsuccessful)|not recogni[sz]ed)", re.IGNORECASE)
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
        return password.evaluate("""e => { const f = e.form; if (!f || f.noValidate) return [];
          return [...f.elements].filter(x => x.willValidate && !x.validity.valid)
            .map(x => `${x.name || x.id || x.type}: ${x.validationMessage}`); }""", timeout=1000)
    except Exception:  # noqa: BLE001 - the form is gone (the submit navigated): nothing blocked it
        return []
