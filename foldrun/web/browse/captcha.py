"""`captcha` + `captcha_solver`: a captcha widget passed on the user's own solver account.

spec/tools.md, "Captcha, on your own account": a reCAPTCHA v2, hCaptcha or Turnstile widget is read for its
site key, sent to the solver with the page's URL, and the token that comes back is written into the widget's
response field and handed to its callback — what the widget would have done — when the page opens and before
each step that acts. Nothing is submitted: the next action does that. A site key is solved once per page (one document: a re-check after an action that stayed on
it does not bill twice), with one stderr line per solve — the widget, the solver, the seconds; never the token.

The three solvers speak one protocol: `POST /createTask {clientKey, task}` → `{errorId, taskId}`, then
`POST /getTaskResult {clientKey, taskId}` until `status: ready`; a refusal is `{errorId: 1, errorCode,
errorDescription}`. The key travels only in those bodies, to the solver's own host (or the install's override
of it in `FOLDRUN_WEB_ENDPOINTS`, as the web providers' are), through the web role's guarded client.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import httpx

from foldrun import net
from foldrun.contract import web_engines as W

from ..errors import WebToolError
from ..net import fetch_client, scrub_url

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Frame, Page

    from .call import Call


@dataclass(frozen=True)
class Solver:
    name: str
    base: str  # the vendor's documented API host, where the key is sent
    tasks: dict[str, str]  # widget kind -> the vendor's own task type
    page: str  # the vendor page the names were matched to


SOLVERS: dict[str, Solver] = {
    "capsolver": Solver(
        "capsolver",
        "https://api.capsolver.com",
        {
            "recaptcha": "ReCaptchaV2TaskProxyLess",
            "hcaptcha": "HCaptchaTaskProxyLess",
            "turnstile": "AntiTurnstileTaskProxyLess",
            "image": "ImageToTextTask",
        },
        "https://docs.capsolver.com/guide/getting-started",
    ),
    "2captcha": Solver(
        "2captcha",
        "https://api.2captcha.com",
        {
            "recaptcha": "RecaptchaV2TaskProxyless",
            "hcaptcha": "HCaptchaTaskProxyless",
            "turnstile": "TurnstileTaskProxyless",
            "image": "ImageToTextTask",
        },
        "https://2captcha.com/api-docs/create-task",
    ),
    "anticaptcha": Solver(
        "anticaptcha",
        "https://api.anti-captcha.com",
        {
            "recaptcha": "RecaptchaV2TaskProxyless",
            "hcaptcha": "HCaptchaTaskProxyless",
            "turnstile": "TurnstileTaskProxyless",
            "image": "ImageToTextTask",
        },
        "https://anti-captcha.com/apidoc/methods/createTask",
    ),
}
DEFAULT_SOLVER = W.CAPTCHA_SOLVERS[0]


@dataclass(frozen=True)
class Widget:
    kind: str
    label: str
    selector: str  # the element the widget's script renders into, carrying data-sitekey
    fields: tuple[str, ...]  # the response fields it fills; the first is its own, made if the page lacks it
    tag: str  # what that own field is


WIDGETS: tuple[Widget, ...] = (
    Widget("recaptcha", "reCAPTCHA v2", ".g-recaptcha[data-sitekey]", ("g-recaptcha-response",), "textarea"),
    # hCaptcha fills a g-recaptcha-response beside its own, for forms written for reCAPTCHA
    Widget(
        "hcaptcha", "hCaptcha", ".h-captcha[data-sitekey]", ("h-captcha-response", "g-recaptcha-response"), "textarea"
    ),
    Widget("turnstile", "Turnstile", ".cf-turnstile[data-sitekey]", ("cf-turnstile-response",), "input"),
)
_BY_KIND = {w.kind: w for w in WIDGETS}

# What is on a page and not covered, each said once per page rather than implied.
NOT_COVERED: dict[str, str] = {
    "recaptcha-v3": "reCAPTCHA v3 is not covered — it has no widget; the site scores the session itself",
    "recaptcha-enterprise": "reCAPTCHA Enterprise is not covered — the solvers' v2 task does not pass it",
    "cloudflare": "Cloudflare's full-page managed challenge is not covered",
    "arkose": "Arkose (FunCaptcha) is not covered",
    "geetest": "GeeTest is not covered",
    "script-rendered": (
        "a widget the page's own script drew (grecaptcha.render, hcaptcha.render or turnstile.render, "
        "with no data-sitekey) is not covered"
    ),
    "image": (
        'an image captcha is not read by itself — add a step {"solve": "<the image\'s selector>", '
        '"into": "<its field>"}'
    ),
}
SOLVE_SECONDS = 120.0  # the most one solve waits: the solvers' own documented ceiling
FIRST_POLL_SECONDS = 1.0  # a token takes seconds; the first look comes soon, the next ones spaced
POLL_SECONDS = 2.0
KEY_CODES = (
    "ERROR_KEY_DOES_NOT_EXIST",
    "ERROR_KEY_DENIED_ACCESS",
    "ERROR_WRONG_USER_KEY",
    "ERROR_ZERO_BALANCE",
    "ERROR_INVALID_TASK_DATA_KEY",
)


def _uses_solve(steps: Any) -> bool:
    for item in steps if isinstance(steps, list) else []:
        if isinstance(item, dict) and (
            "solve" in item or _uses_solve(item.get("then")) or _uses_solve(item.get("else"))
        ):
            return True
    return False


def for_call(call: "Call", steps: list) -> "Solving | None":
    """The call's solver, read before a browser opens (a missing secret is refused by name), or None without
    `captcha=`. A `solve` step without one is refused here too."""
    name = call.setting("captcha")
    chosen = call.setting("captcha_solver")
    if name in (None, "", False):
        if _uses_solve(steps):
            raise WebToolError(
                "browse: the solve step needs captcha= — the NAME of a secret holding your captcha "
                "solver's API key (or web.browse.captcha in the agent's file)"
            )
        if call.args.get("captcha_solver") not in (None, ""):
            raise WebToolError(
                "browse: captcha_solver= picks who solves with the key in captcha=; name that secret "
                "too, such as captcha=CAPSOLVER_KEY"
            )
        return None
    call.denied("solve", "captcha= (it solves the page's captcha widgets)")  # deny: [solve] covers solving by itself
    if not isinstance(name, str) or not name.strip():
        raise WebToolError(
            "browse: captcha= is the NAME of a secret holding your captcha solver's API key, such as CAPSOLVER_KEY"
        )
    solver = str(chosen or DEFAULT_SOLVER).strip().lower()
    if solver not in SOLVERS:
        raise WebToolError(
            f"browse: captcha_solver={chosen} is not a solver here; it is one of "
            f"{', '.join(W.CAPTCHA_SOLVERS)} (capsolver by default)"
        )
    name = name.strip()
    try:  # not one of call.secrets: the key never enters the page, so script beside it stays allowed
        key = call.tool.secret(name)
    except Exception:  # noqa: BLE001 - not granted, not stored, withheld: each is "not available", by name
        key = ""
    if not key:
        raise WebToolError(
            f"browse: captcha={name}: the secret {name} is not available to this step — declare it "
            f"under the agent's secrets: and store it with `foldrun secrets set {name}`"
        )
    return Solving(call, name, SOLVERS[solver], key)


class Solving:
    """One call's solves: which widgets of which page are done, and the solver's wire."""

    def __init__(self, call: "Call", secret: str, solver: Solver, key: str) -> None:
        self.call = call
        self.secret = secret
        self.solver = solver
        self.key = key
        endpoints = call.tool.endpoints
        self.base = (endpoints.get(f"{solver.name} captcha") or endpoints.get(solver.name) or solver.base).rstrip("/")
        # (document, frame URL, kind, index, site key) solved — the step's: a session's page stays between calls
        self.done: set[tuple] = call.tool.captcha_solved
        self.said: set[tuple] = set()  # (document, frame URL, what) said not covered

    # ------------------------------------------------------------------ widgets on the page
    def check(self, page: "Page") -> None:
        """As the page opens and before each step that acts (what may submit): every widget on the page not yet
        solved, solved — a page that answers with a challenge widget comes back past it."""
        for frame, found, key in self._widgets(page):
            if key not in self.done:
                self._solve(frame, found, key)

    def solve_now(self, page: "Page", index: int) -> None:
        """The `solve: true` step: the widgets on the page, now; one already solved on this page is not billed."""
        widgets = self._widgets(page)
        if not widgets:
            said = [line for line in self.call.notes if line.startswith("captcha: ") and "not" in line]
            raise WebToolError(
                f"browse: step {index}: solve found no reCAPTCHA v2, hCaptcha or Turnstile widget "
                f"on the page" + (f" ({'; '.join(s[9:] for s in said)})" if said else "")
            )
        pending = [(frame, found, key) for frame, found, key in widgets if key not in self.done]
        if not pending:
            self.call.notes.append(
                "captcha: the widget on this page is already solved — a site key is solved once per page"
            )
        for frame, found, key in pending:
            self._solve(frame, found, key)

    def _widgets(self, page: "Page") -> list[tuple["Frame", dict, tuple]]:
        widgets: list[tuple["Frame", dict, tuple]] = []
        for frame in page.frames:
            try:
                seen = frame.evaluate(_FIND_JS, [{"kind": w.kind, "selector": w.selector} for w in WIDGETS])
            except Exception:  # noqa: BLE001 - a frame that went away, or one still loading: nothing to read there
                continue
            document = (seen.get("origin"), frame.url)
            for what in seen.get("uncovered") or []:
                if what in NOT_COVERED and (document, what) not in self.said:
                    self.said.add((document, what))
                    self.call.notes.append(
                        f"captcha: {NOT_COVERED[what]} ({scrub_url(frame.url)}); the page comes back as it is"
                    )
            for found in seen.get("found") or []:
                if found.get("kind") == "recaptcha" and "recaptcha-enterprise" in (seen.get("uncovered") or []):
                    continue  # an Enterprise widget looks like v2 and is not passed by the v2 task
                widgets.append((frame, found, (*document, found.get("kind"), found.get("index"), found.get("sitekey"))))
        return widgets

    def _solve(self, frame: "Frame", found: dict, key: tuple) -> None:
        widget = _BY_KIND[str(found.get("kind"))]
        sitekey = str(found.get("sitekey") or "")
        what = f"the {widget.label} on {scrub_url(frame.url)}"
        if not sitekey:
            raise self.failure(
                f"browse: {what} names no site key (its data-sitekey is empty), so there is nothing "
                f"to send to {self.solver.name}"
            )
        task: dict[str, Any] = {"type": self.solver.tasks[widget.kind], "websiteURL": frame.url, "websiteKey": sitekey}
        task.update(_extras(self.solver.name, widget.kind, found))
        started = time.monotonic()
        solution = self._run(task, what, frame.page)
        token = solution.get("gRecaptchaResponse") or solution.get("token")
        if not isinstance(token, str) or not token:
            raise self.failure(f"browse: {self.solver.name} answered ready for {what} with no token in its solution")
        try:
            wrote = frame.evaluate(
                _WRITE_JS,
                [
                    widget.selector,
                    found.get("index"),
                    list(widget.fields),
                    widget.tag,
                    token,
                    str(found.get("callback") or ""),
                ],
            )
        except Exception:  # noqa: BLE001 - the frame navigated away while the solver worked
            raise self.failure(
                f"browse: {what} left the page while {self.solver.name} solved it; nothing was written"
            ) from None
        if (wrote or {}).get("gone"):
            raise self.failure(f"browse: {what} left the page while {self.solver.name} solved it; nothing was written")
        seconds = time.monotonic() - started
        self.done.add(key)
        line = f"captcha: {widget.label} solved by {self.solver.name} in {seconds:.1f}s"
        self.call.tool.log(line)
        self.call.tool.emit(
            {"event": "captcha", "widget": widget.kind, "solver": self.solver.name, "seconds": round(seconds, 3)}
        )
        handed = {
            "called": f"handed to its callback {found.get('callback')}",
            "missing": f"its data-callback {found.get('callback')} is not a function on the page, so only the "
            f"field holds it",
            "threw": f"its callback {found.get('callback')} threw: {str(wrote.get('error'))[:120]}",
            "none": "the widget names no callback",
        }.get(str((wrote or {}).get("callback")), "")
        self.call.notes.append(f"{line} — the token is in {widget.fields[0]}; {handed}; the next action submits")

    def read_image(self, page: "Page", selector: str, into: str, index: int, timeout: float) -> None:
        """The `solve` step with a selector + `into`: the image read as text by the solver, typed into the field."""
        picture = self.call.locate(page, selector).first.screenshot(type="png", timeout=timeout)
        what = f"the image captcha {selector} on {scrub_url(page.url)}"
        started = time.monotonic()
        solution = self._run(
            {"type": self.solver.tasks["image"], "body": base64.b64encode(picture).decode()}, what, page
        )
        text = solution.get("text")
        if not isinstance(text, str) or not text:
            raise self.failure(f"browse: {self.solver.name} answered ready for {what} with no text in its solution")
        self.call.locate(page, into).first.fill(text, timeout=timeout)
        line = f"captcha: image captcha read by {self.solver.name} in {time.monotonic() - started:.1f}s"
        self.call.tool.log(line)
        self.call.tool.emit(
            {
                "event": "captcha",
                "widget": "image",
                "solver": self.solver.name,
                "seconds": round(time.monotonic() - started, 3),
            }
        )
        self.call.notes.append(f"{line} — typed into {into}; the next action submits")

    # ------------------------------------------------------------------ the solver's wire
    def _run(self, task: dict, what: str, page: "Page") -> dict:
        """createTask, then getTaskResult until ready, within the solve's deadline: the solution object."""
        left_in_call = self.call.deadline.remaining_ms() / 1000 - 1.0  # a second kept to answer with
        seconds = max(1.0, min(SOLVE_SECONDS, left_in_call))
        why = (
            "the most one solve waits"
            if seconds >= SOLVE_SECONDS
            else "what the call's timeout= left it; pass a longer one (at most 600)"
        )
        deadline = time.monotonic() + seconds
        late = (
            f"browse: {self.solver.name} had not solved {what} after {seconds:.0f}s ({why}); nothing was "
            f"written into the page"
        )
        answer = self._post("/createTask", {"clientKey": self.key, "task": task}, what, deadline, late)
        if answer.get("status") == "ready" and isinstance(answer.get("solution"), dict):
            return answer["solution"]  # an image is often read at once
        task_id = answer.get("taskId")
        if task_id in (None, "", 0):
            raise self.failure(f"browse: {self.solver.name} answered createTask for {what} with no taskId")
        wait = FIRST_POLL_SECONDS
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise self.failure(late)
            page.wait_for_timeout(min(wait, left) * 1000)  # the page's own events keep flowing meanwhile
            if time.monotonic() >= deadline:
                raise self.failure(late)
            answer = self._post("/getTaskResult", {"clientKey": self.key, "taskId": task_id}, what, deadline, late)
            if answer.get("status") == "ready":
                if not isinstance(answer.get("solution"), dict):
                    raise self.failure(f"browse: {self.solver.name} answered ready for {what} with no solution")
                return answer["solution"]
            wait = POLL_SECONDS

    def _post(self, path: str, body: dict, what: str, deadline: float, late: str) -> dict:
        name = self.solver.name
        left = max(0.5, deadline - time.monotonic())
        try:
            response = fetch_client(self.call.tool.allow_private).post(
                self.base + path,
                json=body,
                headers={"Accept": "application/json"},
                timeout=httpx.Timeout(min(30.0, left), connect=min(10.0, left)),
            )
        except httpx.TimeoutException:
            raise self.failure(late) from None
        except httpx.HTTPError as exc:
            raise self.failure(f"browse: {name} could not be reached for {what}: {net.describe(exc)}") from None
        if response.status_code >= 400:
            raise self.failure(f"browse: {name} answered HTTP {response.status_code} to {path[1:]} for {what}")
        try:
            data = response.json()
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise self.failure(f"browse: {name} did not answer {path[1:]} for {what} in its documented shape")
        if data.get("errorId") not in (None, 0, "0"):
            code = str(data.get("errorCode") or f"errorId {data.get('errorId')}")
            described = str(data.get("errorDescription") or "").strip()
            hint = f"; store a working key with `foldrun secrets set {self.secret}`" if code in KEY_CODES else ""
            raise self.failure(
                f"browse: {name} refused {what}: {code}" + (f" — {described[:200]}" if described else "") + hint
            )
        return data

    def failure(self, head: str) -> WebToolError:
        """The sentence, with what the call had done before it (its notes and results are kept)."""
        text = self.hide(self.call.with_what_it_did(head))
        self.call.tool.emit({"event": "captcha", "solver": self.solver.name, "failed": text.split("\n", 1)[0][:300]})
        return WebToolError(text)

    def hide(self, text: str) -> str:
        """A solver's error that echoes the key has it replaced by the secret's name."""
        return text.replace(self.key, f"[secret {self.secret}]") if len(self.key) >= 4 else text


def _extras(solver: str, kind: str, found: dict) -> dict:
    """The widget's own options, under each vendor's name for them."""
    extra: dict[str, Any] = {}
    if kind == "recaptcha" and found.get("invisible"):
        extra["isInvisible"] = True
    if kind == "turnstile":
        action, cdata = found.get("action") or "", found.get("cdata") or ""
        if solver == "capsolver" and (action or cdata):
            extra["metadata"] = {k: v for k, v in (("action", action), ("cdata", cdata)) if v}
        elif solver != "capsolver":
            if action:
                extra["action"] = action
            if cdata:
                extra["data" if solver == "2captcha" else "turnstileCData"] = cdata
    return extra


# Every widget of the kinds covered, and what is on the page that is not; `origin` tells one document from the next.
_FIND_JS = r"""(widgets) => {
  const found = [];
  for (const w of widgets) {
    document.querySelectorAll(w.selector).forEach((el, index) => found.push({
      kind: w.kind, index, sitekey: el.getAttribute('data-sitekey') || '', callback: el.getAttribute('data-callback') || '',
      invisible: el.getAttribute('data-size') === 'invisible', action: el.getAttribute('data-action') || '',
      cdata: el.getAttribute('data-cdata') || ''}));
  }
  const src = [...document.scripts].map(s => s.src || '');
  const uncovered = [];
  if (src.some(s => /\/recaptcha\/enterprise\.js/.test(s))) uncovered.push('recaptcha-enterprise');
  else if (!document.querySelector('.g-recaptcha') && src.some(s => /\/recaptcha\/api\.js\?(?:[^#]*&)?render=(?!explicit)[^&#]+/.test(s)))
    uncovered.push('recaptcha-v3');
  if (window._cf_chl_opt || document.querySelector('#challenge-form, #cf-challenge-running')) uncovered.push('cloudflare');
  if (src.some(s => /arkoselabs|funcaptcha/i.test(s)) || document.querySelector('#FunCaptcha, [data-pkey]')) uncovered.push('arkose');
  // A widget drawn by script has its vendor's frame but no [data-sitekey] holder to read a key and callback from.
  const drawn = [...document.querySelectorAll('iframe[src*="/recaptcha/api2/anchor"], iframe[src*="hcaptcha.com/captcha"], '
    + 'iframe[src*="challenges.cloudflare.com/cdn-cgi/challenge-platform"]')].filter(f => !f.closest('[data-sitekey]'));
  if (drawn.length && !uncovered.includes('cloudflare')) uncovered.push('script-rendered');
  if (src.some(s => /geetest/i.test(s)) || document.querySelector('[class^="geetest_"], [class*=" geetest_"]')) uncovered.push('geetest');
  if (document.querySelector('img[src*="captcha" i], img[id*="captcha" i], img[alt*="captcha" i], img[class*="captcha" i]'))
    uncovered.push('image');
  return {found, uncovered, origin: performance.timeOrigin};
}"""

# The token into the widget's response fields (its own made where the widget would make it), then its callback.
_WRITE_JS = r"""([selector, index, fields, tag, token, callback]) => {
  const all = document.querySelectorAll(selector);
  const el = all[index];
  if (!el) return {gone: true};
  fields.forEach((name, n) => {
    let targets = [...el.querySelectorAll(`[name="${name}"]`)];
    if (!targets.length && all.length === 1) targets = [...document.querySelectorAll(`[name="${name}"]`)];
    if (!targets.length && n === 0) {
      const made = document.createElement(tag);
      made.name = name;
      if (tag === 'input') made.type = 'hidden'; else made.style.display = 'none';
      el.appendChild(made);
      targets = [made];
    }
    for (const t of targets) {
      t.value = token;
      t.dispatchEvent(new Event('input', {bubbles: true}));
      t.dispatchEvent(new Event('change', {bubbles: true}));
    }
  });
  if (!callback) return {callback: 'none'};
  const fn = callback.split('.').reduce((o, k) => (o == null ? undefined : o[k]), window);
  if (typeof fn !== 'function') return {callback: 'missing'};
  try { fn(token); } catch (e) { return {callback: 'threw', error: String((e && e.message) || e)}; }
  return {callback: 'called'};
}"""
