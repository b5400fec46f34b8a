"""The `login` step: sign in from a credential secret the model never sees (registered in steps/forms.py).

It finds the form (in the page or its frames), fills it, submits it, waits for the site's answer — a form the
browser posts and one the page's script posts a moment later alike (signin_answer.py) — and then says whether the
sign-in took, could not be told, or was refused (signin_verdict.py), in a note at the top of the call's result.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..errors import WebToolError
from .signin_answer import Kept, SubmitWatch
from .signin_verdict import invalid_fields, judge

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page

    from .call import Call


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
            raise WebToolError(
                f'browse: login: the secret {name} is neither {{"username", "password"}} as JSON nor user:pass'
            ) from None
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
            raise WebToolError(
                f"browse: login: the page is on {here.scheme}://{here.netloc}, not {origin} where "
                f"the secret {name} signs in — its form is not filled"
            )

    def field(selector: str | None, guesses: tuple[str, ...]) -> "Locator | None":
        for candidate in (selector,) if selector else guesses:
            for frame in page.frames:
                found = frame.locator(candidate)
                if found.count() and found.first.is_visible():
                    return found.first
        return None

    user_guesses = (
        "input[autocomplete=username]",
        "input[type=email]",
        "input[name*=user i]",
        "input[name*=email i]",
        "input[id*=user i]",
        "input[type=text]",
    )
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
    sign_in_url, before = page.url, Kept.now(page)
    with SubmitWatch(page, str(cred["password"])) as watch:
        if cred.get("submit_selector"):
            page.locator(str(cred["submit_selector"])).first.click(timeout=timeout)
        else:
            password.press("Enter")
        watch.wait(timeout, blocked=lambda: bool(invalid_fields(password)))
    invalid = invalid_fields(password) if watch.signin is None else []  # a blocked form sent nothing
    if invalid:
        raise WebToolError(
            call.redact(
                f"browse: login: the form's own validation blocked the submit — "
                f"{'; '.join(invalid)}; the secret {name} filled the user name and password "
                f"and the form asks for more, so nobody signed in"
            )
        )
    kept = Kept.now(page).new_since(before, watch.cookies_set())
    # Said, not raised, whatever the verdict: the page's own words (its error message) are the rest of the result.
    call.notes.append(call.redact(judge(page, watch.status, watch.navigations, kept, sign_in_url).line(name)))
