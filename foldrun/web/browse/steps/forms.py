"""Form steps: fill, type, select, clear, focus, upload, paste, the clipboard, a dialog's answer and login."""
from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ...errors import WebToolError
from ..registry import step

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page

    from ..call import Call


@step("fill", "type", acts=True)
def fill(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    text = call.secret_value(str(item["secret"])) if "secret" in item else item.get("text")
    if not isinstance(text, str):
        raise WebToolError(f'browse: step {index}: {name} needs "text" (or "secret", a secret\'s NAME)')
    locator = call.locate(page, value)
    if name == "fill":
        locator.fill(text, timeout=timeout)
    else:
        locator.press_sequentially(text, timeout=timeout)


@step("select", acts=True)
def select(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    choice = item.get("value")
    if choice is None:
        raise WebToolError(f'browse: step {index}: select needs "value"')
    locator = call.locate(page, value)
    try:
        locator.select_option(value=str(choice), timeout=min(timeout, 2000))
    except Exception:  # noqa: BLE001 - by the option's words, as a person reads it
        locator.select_option(label=str(choice), timeout=timeout)


@step("focus", acts=False)
def focus(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.locate(page, value).focus(timeout=timeout)


@step("clear", acts=False)
def clear(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.locate(page, value).clear(timeout=timeout)


@step("upload", acts=True)
def upload(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    source = call.tool.sandbox_file(item.get("file"), arg="upload file")
    call.locate(page, value).set_input_files(str(source), timeout=timeout)


@step("paste", acts=True)
def paste(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if "file" in item:
        markup = call.tool.sandbox_file(item["file"], arg="paste file").read_text(encoding="utf-8")
    elif isinstance(item.get("html"), str):
        markup = item["html"]
    else:
        raise WebToolError(f'browse: step {index}: paste needs "html" or "file"')
    handled = call.locate(page, value).first.evaluate(_PASTE_JS, markup)
    call.notes.append(f"paste into {value} ({'the editor took it' if handled else 'inserted as HTML'})")


@step("clipboard", acts=True)
def clipboard(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    if value == "write":
        page.evaluate("t => navigator.clipboard.writeText(t)", str(item.get("text") or ""))
    elif value == "read":
        call.no_script("a clipboard read")
        call.results.append({"clipboard": "read", "value": page.evaluate("() => navigator.clipboard.readText()")})
    else:
        raise WebToolError(f'browse: step {index}: clipboard is "write" (+ text) or "read"')


@step("dialog", acts=True)
def dialog(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    call.dialog = (str(value), item.get("text"))


@step("login", acts=True)
def login_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    login(call, page, str(value), item, timeout)


def login(call: "Call", page: "Page", name: str, step: dict, timeout: float) -> None:
    """Sign in from a credential secret the model never sees.

    The secret holds {"username", "password"} as JSON (optionally `url` and the three selectors) or
    `user:pass`. With a `url` it goes there first and fills no form on any other origin.
    """
    raw = call.secret_value(name)
    try:
        cred = json.loads(raw)
    except ValueError:
        user, sep, password = raw.partition(":")
        if not sep:
            raise WebToolError(f'browse: login: the secret {name} is neither {{"username", "password"}} as JSON '
                               f"nor user:pass") from None
        cred = {"username": user, "password": password}
    if not isinstance(cred, dict) or not cred.get("password"):
        raise WebToolError(f'browse: login: the secret {name} has no "password"')
    call.secrets[f"{name}"] = str(cred["password"])  # redacted as [secret NAME] wherever it shows
    origin = None
    if cred.get("url"):
        call.denied("goto", f"a sign-in that opens a URL (the secret {name} holds one)")
        call.navigate(page, str(cred["url"]))
        parts = urlsplit(str(cred["url"]))
        origin = f"{parts.scheme}://{parts.netloc}"

    def same_origin() -> None:
        here = urlsplit(page.url)
        if origin and f"{here.scheme}://{here.netloc}" != origin:
            raise WebToolError(f"browse: login: the page is on {here.scheme}://{here.netloc}, not {origin} where "
                               f"the secret {name} signs in — its form is not filled")

    def field(selector: str | None, guesses: tuple[str, ...]) -> "Locator | None":
        for candidate in ((selector,) if selector else guesses):
            for frame in page.frames:
                found = frame.locator(candidate)
                if found.count() and found.first.is_visible():
                    return found.first
        return None

    user_guesses = ("input[autocomplete=username]", "input[type=email]", "input[name*=user i]",
                    "input[name*=email i]", "input[id*=user i]", "input[type=text]")
    same_origin()
    password = field(cred.get("password_selector"), ("input[type=password]",))
    user = field(cred.get("username_selector"), user_guesses)
    if user is not None and cred.get("username"):
        user.fill(str(cred["username"]), timeout=timeout)
    if password is None:  # a username-then-password form: submit the first half, then look again
        if user is None:
            raise WebToolError("browse: login: no sign-in form on the page (no password field or user name field)")
        user.press("Enter")
        page.wait_for_load_state("load")
        same_origin()
        password = page.locator(cred.get("password_selector") or "input[type=password]").first
        password.wait_for(state="visible", timeout=timeout)
    password.fill(str(cred["password"]), timeout=timeout)
    answers: list[int] = []  # the status of each page the submit navigated to, last one last

    def answered(response: Any) -> None:
        if response.frame == page.main_frame and response.request.is_navigation_request():
            answers.append(response.status)

    page.on("response", answered)
    try:
        if cred.get("submit_selector"):
            page.locator(str(cred["submit_selector"])).first.click(timeout=timeout)
        else:
            password.press("Enter")
        page.wait_for_load_state("load")
    finally:
        page.remove_listener("response", answered)
    invalid = _invalid_fields(password)
    if invalid:
        raise WebToolError(call.redact(f"browse: login: the form's own validation blocked the submit — "
                                       f"{'; '.join(invalid)}; the secret {name} filled the user name and password "
                                       f"and the form asks for more, so nobody signed in"))
    refused = call.redact(_refusal(page, answers))
    if refused:  # said, not raised: the page's own words (its error message) are the rest of the call's result
        call.notes.append(f"login: the site did not sign in from the secret {name} — {refused}")
        return
    call.notes.append(f"login: signed in from the secret {name}")


def _refusal(page: "Page", answers: list[int]) -> str:
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


def _invalid_fields(password: "Locator") -> list[str]:
    """The fields the form's own validation still refuses after the submit, each as `name: the browser's
    message` — a form still on the page with one means the browser blocked the submit. [] otherwise."""
    try:
        return password.evaluate("""e => { const f = e.form; if (!f || f.noValidate) return [];
          return [...f.elements].filter(x => x.willValidate && !x.validity.valid)
            .map(x => `${x.name || x.id || x.type}: ${x.validationMessage}`); }""", timeout=1000)
    except Exception:  # noqa: BLE001 - the form is gone (the submit navigated): nothing blocked it
        return []


# A real paste: a ClipboardEvent carrying text/html, which rich editors handle themselves;
# an element that ignores it gets the HTML inserted, so headings, links and lists survive either way.
_PASTE_JS = """(el, html) => {
  el.focus();
  const data = new DataTransfer();
  data.setData('text/html', html);
  data.setData('text/plain', html.replace(/<[^>]+>/g, ''));
  const event = new ClipboardEvent('paste', {clipboardData: data, bubbles: true, cancelable: true});
  const handled = !el.dispatchEvent(event);
  if (!handled) {
    if (el.isContentEditable) { document.execCommand('insertHTML', false, html); }
    else if ('value' in el) { el.value += data.getData('text/plain'); el.dispatchEvent(new Event('input', {bubbles: true})); }
  }
  return handled;
}"""
