"""The steps of `actions`, run in order before the page is read."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit

from foldrun.contract import web_engines as W

from ..errors import WebToolError
from ..net import scrub_url
from .context import listen
from .util import ACTION_TIMEOUT_MS, steps_of

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Locator, Page

FIRST_TRY_MS = 1_500        # the plain click's own try, before the keyboard and the label

BUILT_STEPS = ("click", "dblclick", "rightclick", "hover", "check", "uncheck", "fill", "type", "press", "select",
               "wait", "goto", "scroll", "back", "forward", "reload", "focus", "clear", "keyboard", "get", "eval",
               "expect", "if", "screenshot", "pdf", "viewport", "extract", "cookie", "localstorage", "sessionstorage",
               "dialog", "login", "upload", "download", "mock", "unmock", "offline", "mouse", "wheel", "keydown",
               "keyup", "highlight", "insert", "tab", "frame", "drag", "paste", "pushstate", "clipboard")


# Steps that may have acted: a call carrying one is a write (spec "Slim steps and a lost pod").
ACTING_STEPS = frozenset({"click", "dblclick", "rightclick", "check", "uncheck", "drag", "fill", "type", "login",
                          "insert", "press", "select", "upload", "paste", "eval", "keyboard", "keydown", "keyup",
                          "mouse", "tap", "swipe", "dialog", "solve", "webmcp", "clipboard", "cookie", "localstorage",
                          "sessionstorage", "pushstate", "download"})

def acts(args: dict) -> bool:
    """True when the call's steps may have changed something (a click, a fill, script …)."""
    if args.get("js"):
        return True
    try:
        steps = steps_of(args.get("actions"))
    except WebToolError:
        return True  # could be either: counts as a write

    def walk(items: Any) -> bool:
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            if ACTING_STEPS & set(item):
                return True
            if walk(item.get("then")) or walk(item.get("else")):
                return True
        return False

    return walk(steps)

class StepsMixin:
    """Running a call's steps."""

    # -- steps ---------------------------------------------------------------------
    def run_steps(self, page: "Page", steps: list[dict]) -> None:
        for index, step in enumerate(steps, 1):
            name = next((k for k in step if k in W.BROWSE_STEP_ACTIONS), None)
            if name is None:
                raise WebToolError(f"browse: step {index} ({json.dumps(step)[:80]}) names no action; the actions are "
                                   f"{', '.join(BUILT_STEPS)}")
            self.denied(name)
            if name not in BUILT_STEPS:
                raise WebToolError(f"browse: the action {name} is not built into this install yet; the ones that run "
                                   f"here: {', '.join(BUILT_STEPS)}")
            try:
                self.step(self.page or page, name, step, index)
            except WebToolError:
                raise
            except Exception as exc:  # a Playwright timeout or error: the step and what it said
                message = str(exc).split("\n", 1)[0]
                raise WebToolError(f"browse: step {index} ({name} {json.dumps(step.get(name))}) failed: "
                                   f"{message}") from None

    def step(self, page: "Page", name: str, step: dict, index: int) -> None:
        value = step[name]
        timeout = float(step.get("timeout") or ACTION_TIMEOUT_MS)
        if name in ("click", "dblclick", "rightclick", "hover", "check", "uncheck", "focus", "clear"):
            locator = self.locate(page, value)
            force = bool(step.get("force"))
            if name in ("click", "check", "uncheck") and not force:
                self.press_on(page, locator, name, value, timeout)
            elif name == "click":
                locator.click(timeout=timeout, force=force)
            elif name == "dblclick":
                locator.dblclick(timeout=timeout, force=force)
            elif name == "rightclick":
                locator.click(button="right", timeout=timeout, force=force)
            elif name == "hover":
                locator.hover(timeout=timeout, force=force)
            elif name == "check":
                locator.check(timeout=timeout, force=force)
            elif name == "uncheck":
                locator.uncheck(timeout=timeout, force=force)
            elif name == "focus":
                locator.focus(timeout=timeout)
            else:
                locator.clear(timeout=timeout)
        elif name in ("fill", "type"):
            if "secret" in step:
                text = self.secret_value(str(step["secret"]))
            else:
                text = step.get("text")
            if not isinstance(text, str):
                raise WebToolError(f'browse: step {index}: {name} needs "text" (or "secret", a secret\'s NAME)')
            locator = self.locate(page, value)
            if name == "fill":
                locator.fill(text, timeout=timeout)
            else:
                locator.press_sequentially(text, timeout=timeout)
        elif name == "press":
            key = step.get("key")
            if not isinstance(key, str):
                raise WebToolError(f'browse: step {index}: press needs "key", such as "Enter"')
            if value in ("", None):
                page.keyboard.press(key)
            else:
                self.locate(page, value).press(key, timeout=timeout)
        elif name == "select":
            choice = step.get("value")
            if choice is None:
                raise WebToolError(f'browse: step {index}: select needs "value"')
            locator = self.locate(page, value)
            try:
                locator.select_option(value=str(choice), timeout=min(timeout, 2000))
            except Exception:  # noqa: BLE001 - by the option's words, as a person reads it
                locator.select_option(label=str(choice), timeout=timeout)
        elif name == "keyboard":
            page.keyboard.type(str(value))
        elif name == "wait":
            self.wait(page, value, step, timeout)
        elif name == "goto":
            self.navigate(page, str(value))
        elif name == "scroll":
            if value == "bottom":
                page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            elif value == "top":
                page.evaluate("window.scrollTo(0, 0)")
            elif isinstance(value, (int, float)):
                page.mouse.wheel(0, float(value))
            else:
                self.locate(page, value).scroll_into_view_if_needed(timeout=timeout)
        elif name in ("back", "forward", "reload"):
            getattr(page, {"back": "go_back", "forward": "go_forward", "reload": "reload"}[name])()
        elif name == "viewport":
            if not (isinstance(value, list) and len(value) == 2):
                raise WebToolError(f"browse: step {index}: viewport takes [width, height]")
            page.set_viewport_size({"width": int(value[0]), "height": int(value[1])})
        elif name == "get":
            plain = value in ("url", "title", "localstorage", "sessionstorage")
            self.results.append({"get": value if plain else f"{step.get('what', 'text')} of {value}",
                                 "value": self.get(page, value, step)})
        elif name == "eval":
            self.no_script("eval")
            self.results.append({"eval": str(value), "value": page.evaluate(str(value))})
        elif name in ("cookie", "localstorage", "sessionstorage"):
            self.storage_step(page, name, step)
        elif name == "dialog":
            self.dialog = (str(value), step.get("text"))
        elif name == "tab":
            self.tab(page, value, step)
        elif name == "drag":
            if not step.get("to"):
                raise WebToolError(f'browse: step {index}: drag needs "to", the selector to drop on')
            self.locate(page, value).first.drag_to(self.locate(page, step["to"]).first, timeout=timeout)
        elif name == "paste":
            if "file" in step:
                markup = self.tool.sandbox_file(step["file"], arg="paste file").read_text(encoding="utf-8")
            elif isinstance(step.get("html"), str):
                markup = step["html"]
            else:
                raise WebToolError(f'browse: step {index}: paste needs "html" or "file"')
            handled = self.locate(page, value).first.evaluate(_PASTE_JS, markup)
            self.notes.append(f"paste into {value} ({'the editor took it' if handled else 'inserted as HTML'})")
        elif name == "pushstate":
            target = urljoin(page.url, str(value))
            if urlsplit(target).netloc != urlsplit(page.url).netloc or urlsplit(target).scheme != urlsplit(page.url).scheme:
                raise WebToolError(f"browse: pushstate moves a single-page app within its own origin; {value} is "
                                   f"another origin — use goto")
            page.evaluate(_PUSHSTATE_JS, target)
        elif name == "clipboard":
            page.context.grant_permissions(["clipboard-read", "clipboard-write"])
            if value == "write":
                page.evaluate("t => navigator.clipboard.writeText(t)", str(step.get("text") or ""))
            elif value == "read":
                self.no_script("clipboard read")
                self.results.append({"clipboard": "read", "value": page.evaluate("() => navigator.clipboard.readText()")})
            else:
                raise WebToolError(f'browse: step {index}: clipboard is "write" (+ text) or "read"')
        elif name == "frame":
            if value in ("", None):
                self.scope = None
            else:
                self.scope = None
                handle = self.locate(page, value).first.element_handle(timeout=timeout)
                frame = handle.content_frame() if handle is not None else None
                if frame is None:
                    raise WebToolError(f"browse: frame {value} is not an iframe on the page")
                self.scope = frame
        elif name == "login":
            self.login(page, str(value), step, timeout)
        elif name == "upload":
            source = self.tool.sandbox_file(step.get("file"), arg="upload file")
            self.locate(page, value).set_input_files(str(source), timeout=timeout)
        elif name == "download":
            self.download(page, value, step, timeout)
        elif name == "mock":
            self.mock(page, str(value), step)
        elif name == "unmock":
            if value == "*":
                page.unroute_all(behavior="ignoreErrors")
            else:
                page.unroute(str(value))
        elif name == "offline":
            page.context.set_offline(bool(value))
        elif name == "mouse":
            x, y = float(step.get("x", 0)), float(step.get("y", 0))
            if value == "move":
                page.mouse.move(x, y)
            elif value in ("down", "up"):
                page.mouse.move(x, y)
                getattr(page.mouse, value)()
            elif value == "dblclick":
                page.mouse.dblclick(x, y)
            else:
                page.mouse.click(x, y)
        elif name == "wheel":
            page.mouse.wheel(float(step.get("dx") or 0), float(value))
        elif name in ("keydown", "keyup"):
            getattr(page.keyboard, "down" if name == "keydown" else "up")(str(value))
        elif name == "highlight":
            self.locate(page, value).highlight()
        elif name == "insert":
            page.keyboard.insert_text(str(value))
        elif name == "expect":
            failure = self.claim(page, step, "expect")
            if failure:
                raise WebToolError(f"browse: expect failed at step {index}: {failure}; the steps after it did not run")
            self.notes.append(f"expect ✓ {json.dumps(step)[:120]}")
        elif name == "if":
            holds = self.claim(page, {**step, "expect": value}, "expect") is None
            branch = step.get("then" if holds else "else") or []
            self.run_steps(page, steps_of(branch))
        elif name in ("screenshot", "pdf"):
            where = self.keep_file(page, name, step)
            self.notes.append(f"{name}: {where}")
        elif name == "extract":
            rows = self.extract(page, value, step)
            self.results.append({"extract": value, "rows": rows})
            self.tool.write_file(self.tool.sandbox / "outputs" / "extracted.json",
                                 json.dumps(rows, indent=1, ensure_ascii=False).encode())

    def press_on(self, page: "Page", locator: "Locator", name: str, selector: Any, timeout: float) -> None:
        """click / check / uncheck, falling back when the pointer cannot reach the element.

        A control drawn over its hidden real input, or one under a fixed banner,
        fails a plain click. After a short first try: the keyboard (Space on a
        checkbox, radio or switch, Enter on a button or link), then the control's
        label — and a toggle is read back rather than trusting the press.
        """
        first_try = min(timeout, FIRST_TRY_MS)
        try:
            if name == "click":
                locator.click(timeout=first_try)
            elif name == "check":
                locator.check(timeout=first_try)
            else:
                locator.uncheck(timeout=first_try)
            return
        except Exception as exc:  # noqa: BLE001 - the fallbacks below, else this error
            first_error = exc
        element = locator.first
        try:
            kind = element.evaluate("e => [e.tagName.toLowerCase(), (e.type || '').toLowerCase(), "
                                    "(e.getAttribute('role') || '').toLowerCase()]", timeout=timeout)
        except Exception:  # noqa: BLE001 - not on the page at all: the plain error says so
            raise first_error from None
        toggle = kind[1] in ("checkbox", "radio") or kind[2] in ("checkbox", "radio", "switch")
        if name in ("check", "uncheck") and not toggle:
            raise first_error
        want = None if not toggle else (name != "uncheck" if name != "click" else not self._checked(element))
        key = "Space" if toggle else "Enter"
        label = f"{name} {selector}"
        try:
            element.focus(timeout=FIRST_TRY_MS)
            page.keyboard.press(key)
            if want is None or self._checked(element) == want:
                self.notes.append(f"{label} (by keyboard ({key}) — the pointer could not reach it)")
                return
        except Exception:  # noqa: BLE001 - then the label
            pass
        try:
            clicked = element.evaluate("e => { const l = e.labels && e.labels[0]; if (!l) return false; l.click(); "
                                       "return true; }")
            if clicked and (want is None or self._checked(element) == want):
                self.notes.append(f"{label} (by its label — the pointer could not reach it)")
                return
        except Exception:  # noqa: BLE001
            pass
        message = str(first_error).split("\n", 1)[0]
        raise WebToolError(f"browse: {label} failed by pointer, keyboard ({key}) and label: {message} — try "
                           f"\"force\": true, which sends the click to the element itself")

    @staticmethod
    def _checked(element: "Locator") -> bool:
        return bool(element.evaluate("e => e.getAttribute('aria-checked') !== null ? "
                                     "e.getAttribute('aria-checked') === 'true' : !!e.checked"))

    def wait(self, page: "Page", value: Any, step: dict, timeout: float) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            page.wait_for_timeout(min(float(value), 30_000))
        elif value in ("load", "domcontentloaded", "networkidle"):
            page.wait_for_load_state(value, timeout=timeout)
        elif value == "navigation":
            page.wait_for_load_state("load", timeout=timeout)
        elif value == "url":
            pattern = step.get("matches") or step.get("contains")
            page.wait_for_url(re.compile(str(pattern)) if step.get("matches") else f"**{pattern}**", timeout=timeout)
        elif value == "text":
            page.get_by_text(str(step.get("text"))).first.wait_for(timeout=timeout)
        elif value == "fn":
            self.no_script("eval")
            page.wait_for_function(str(step.get("js")), timeout=timeout)
        else:
            state = "hidden" if step.get("gone") else "visible"
            self.locate(page, value).first.wait_for(state=state, timeout=timeout)

    def get(self, page: "Page", value: Any, step: dict) -> Any:
        if value == "url":
            return page.url
        if value == "title":
            return page.title()
        if value in ("localstorage", "sessionstorage"):
            if self.seeded:
                raise WebToolError(f"browse: a get of {value} is refused where a secret seeded the session")
            store = "localStorage" if value == "localstorage" else "sessionStorage"
            return page.evaluate(f"k => window.{store}.getItem(k)", str(step.get("key") or ""))
        what = step.get("what") or "text"
        if what in ("value", "html") and self.secrets:
            raise WebToolError("browse: a call that fills a secret reads no field back (get of a value) — read the "
                               "page in the next call of the same session")
        locator = self.locate(page, value)
        if what == "count":
            return locator.count()
        first = locator.first
        if what == "text":
            return first.inner_text()
        if what == "html":
            return first.inner_html()
        if what == "value":
            return first.input_value()
        if what == "visible":
            return first.is_visible()
        if what == "checked":
            return first.is_checked()
        if what == "enabled":
            return first.is_enabled()
        if what == "attr":
            return first.get_attribute(str(step.get("attr")))
        if what == "box":
            return first.bounding_box()
        raise WebToolError(f"browse: get what={what} is not one of text, html, value, count, box, visible, checked, "
                           f"enabled, attr")

    def storage_step(self, page: "Page", name: str, step: dict) -> None:
        value = step[name]
        if name == "cookie":
            host = (urlsplit(page.url).hostname or "")
            if step.get("delete"):
                if value == "*":
                    page.context.clear_cookies()
                else:
                    page.context.clear_cookies(name=str(value))
                return
            page.context.add_cookies([{"name": str(value), "value": str(step.get("value") or ""),
                                       "domain": str(step.get("domain") or host), "path": str(step.get("path") or "/")}])
            return
        store = "localStorage" if name == "localstorage" else "sessionStorage"
        if step.get("delete"):
            script = f"k => k === '*' ? window.{store}.clear() : window.{store}.removeItem(k)"
            page.evaluate(script, str(value))
        else:
            page.evaluate(f"([k, v]) => window.{store}.setItem(k, v)", [str(value), str(step.get("value") or "")])

    def tab(self, page: "Page", value: Any, step: dict) -> None:
        """Switch to a tab a click opened (`1`, `"last"`), open one (`"new"` + url, + label), or close this one."""
        context = page.context
        if value == "new":
            self.denied("goto")
            target = context.new_page()
            listen(self, target)
            if step.get("label"):
                self.tabs[str(step["label"])] = target
            self.page, self.scope = target, None
            self.known_tabs = len(context.pages)
            if step.get("url"):
                self.navigate(target, str(step["url"]))
            return
        wants_opened = value == "last" or (isinstance(value, int) and not isinstance(value, bool)
                                           and value >= len(context.pages))
        if wants_opened and len(context.pages) <= self.known_tabs:
            try:  # a click's new tab opens a moment after the click returns
                context.wait_for_event("page", timeout=3000)
            except Exception:  # noqa: BLE001 - none came: the tabs as they stand
                pass
        if value == "close":
            page.close()
            if not context.pages:
                raise WebToolError("browse: tab close closed the last tab; nothing is left to read")
            target = context.pages[-1]
        elif value == "last":
            target = context.pages[-1]
        elif isinstance(value, int) and not isinstance(value, bool):
            if not 0 <= value < len(context.pages):
                raise WebToolError(f"browse: tab {value}: there are {len(context.pages)} tabs, numbered from 0")
            target = context.pages[value]
        elif str(value) in self.tabs:
            target = self.tabs[str(value)]
        else:
            raise WebToolError(f'browse: tab takes a number, "last", "new", "close" or a label it was given; '
                               f"{value!r} is none of them")
        if target not in self.listened:
            listen(self, target)
        target.wait_for_load_state("load")
        target.bring_to_front()
        self.page, self.scope = target, None
        self.known_tabs = len(context.pages)

    def login(self, page: "Page", name: str, step: dict, timeout: float) -> None:
        """Sign in from a credential secret the model never sees.

        The secret holds {"username", "password"} as JSON (optionally `url` and the three selectors) or
        `user:pass`. With a `url` it goes there first and fills no form on any other origin.
        """
        raw = self.secret_value(name)
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
        self.secrets[f"{name}"] = str(cred["password"])  # redacted as [secret NAME] wherever it shows
        origin = None
        if cred.get("url"):
            self.denied("goto")
            self.navigate(page, str(cred["url"]))
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
        if cred.get("submit_selector"):
            page.locator(str(cred["submit_selector"])).first.click(timeout=timeout)
        else:
            password.press("Enter")
        page.wait_for_load_state("load")
        self.notes.append(f"login: signed in from the secret {name}")

    def download(self, page: "Page", value: Any, step: dict, timeout: float) -> None:
        """`download` from a control (or a URL) to `outputs/<to>`."""
        to = str(step.get("to") or "")
        with page.expect_download(timeout=max(timeout, 30_000)) as caught:
            if isinstance(value, str) and value.startswith(("http://", "https://")):
                self.denied("goto")
                reason = self.host_refusal(value)
                if reason:
                    raise WebToolError(f"browse: {scrub_url(value)} was not downloaded — {reason}")
                page.evaluate("u => { const a = document.createElement('a'); a.href = u; a.download = ''; "
                              "document.body.appendChild(a); a.click(); a.remove(); }", value)
            else:
                self.locate(page, value).click(timeout=timeout)
        got = caught.value
        name = to or got.suggested_filename or "download"
        target = self.tool.save_target(name if name.startswith("outputs/") else f"outputs/{name}")
        temp = got.path()
        self.tool.write_file(target, Path(temp).read_bytes())
        self.notes.append(f"download: {self.tool.relative(target)} ({Path(temp).stat().st_size:,} bytes)")

    def mock(self, page: "Page", glob: str, step: dict) -> None:
        """Answer for the server on every request matching the glob, from now on."""
        if step.get("abort"):
            page.route(glob, lambda route: route.abort())
            return
        headers = {str(k): str(v) for k, v in (step.get("headers") or {}).items()}
        if "json" in step:
            body, headers = json.dumps(step["json"]).encode(), {"content-type": "application/json", **headers}
        elif "file" in step:
            body = self.tool.sandbox_file(step["file"], arg="mock file").read_bytes()
        else:
            body = str(step.get("body") or "").encode()
        status = int(step.get("status") or 200)
        page.route(glob, lambda route: route.fulfill(status=status, headers=headers, body=body))

    def keep_file(self, page: "Page", kind: str, step: dict) -> str:
        name = step.get(kind) if isinstance(step.get(kind), str) and step.get(kind) else "page"
        suffix = ".pdf" if kind == "pdf" else (".jpg" if str(name).lower().endswith((".jpg", ".jpeg")) else ".png")
        stem = re.sub(r"[^A-Za-z0-9_.-]", "-", str(name)).removesuffix(suffix).removesuffix(".jpeg") or "page"
        target = self.tool.save_target(f"outputs/{stem}{suffix}")
        if kind == "pdf":
            data = page.pdf()
        elif step.get("selector"):
            data = self.locate(page, step["selector"]).screenshot()
        else:
            options: dict[str, Any] = {"full_page": step.get("full", True) is not False}
            if suffix == ".jpg":
                options.update(type="jpeg", quality=int(step.get("quality") or 60))
            data = page.screenshot(**options)
        return self.tool.write_file(target, data)

    def extract(self, page: "Page", selector: Any, step: dict) -> list[dict]:
        fields = step.get("fields") or {}
        if not isinstance(fields, dict) or not fields:
            raise WebToolError('browse: extract needs "fields", such as {"name": "h3", "url": "a@href"}')
        limit = int(step.get("limit") or 1000)
        return page.evaluate(_EXTRACT_JS, {"selector": str(selector), "fields": fields, "limit": limit})

_EXTRACT_JS = """({selector, fields, limit}) => {
  const rows = [];
  for (const el of Array.from(document.querySelectorAll(selector)).slice(0, limit)) {
    const row = {};
    for (const [key, spec] of Object.entries(fields)) {
      const at = spec.lastIndexOf('@');
      const sel = at > 0 ? spec.slice(0, at) : (at === 0 ? '' : spec);
      const attr = at >= 0 ? spec.slice(at + 1) : null;
      const found = sel ? el.querySelector(sel) : el;
      row[key] = !found ? null : attr ? (attr === 'href' || attr === 'src' ? found[attr] || found.getAttribute(attr) : found.getAttribute(attr)) : found.innerText.trim();
    }
    rows.push(row);
  }
  return rows;
}"""


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


# A single-page app's own route change: Next.js's router when it exposes one, else pushState and popstate.
_PUSHSTATE_JS = """(url) => {
  const router = window.next && window.next.router;
  if (router && typeof router.push === 'function') { router.push(url); return 'router'; }
  history.pushState({}, '', url);
  window.dispatchEvent(new PopStateEvent('popstate', {state: {}}));
  return 'history';
}"""
