"""`captcha` + `captcha_solver` and the `solve` step: stand-in reCAPTCHA v2, hCaptcha and Turnstile widgets served
by this file, solved in real Chromium through a loopback stand-in of the solvers' shared protocol
(tests/fakes/captcha_solver.py) — the token written into the widget's field and handed to its callback, once per
page, one stderr line per solve, the key only ever at the solver's host."""

from __future__ import annotations

import base64
import json
import re
import time
from urllib.parse import parse_qsl

import pytest

from foldrun.contract import Desk, check
from foldrun.web import WebToolError
from foldrun.web.browse.captcha import SOLVERS
from tests.fakes.captcha_solver import TASK_TYPES, CaptchaSolver
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.fakes.website import TestSite
from tests.web.test_browse_in_session import session_browser  # noqa: F401 - the fixture, shared

pytestmark = pytest.mark.e2e

KEY = "CAP-key-0123456789abcdef"
SEEN: list[dict] = []  # every request the site was sent, headers and body: the key must be in none


def _page(title: str, body: str) -> bytes:
    return (
        f'<!doctype html><html lang="en"><head><title>{title}</title></head><body><main><h1>{title}</h1>'
        f"{body}</main></body></html>"
    ).encode()


def _form(widget: str) -> str:
    # The widget's script would record what its callback hands over; this one puts it in a field the form posts.
    return (
        f'<form method="post" action="/submit"><input id="email" name="email">{widget}'
        f'<input type="hidden" id="callback_saw" name="callback_saw" value="nothing">'
        f'<button id="check" type="button" onclick="document.getElementById(\'note\').textContent=\'checked\'">'
        f'Check</button><button id="go">Send</button></form><p id="note"></p>'
        f'<script>function saw(t) {{ document.getElementById("callback_saw").value = t; }}'
        f"window.widgets = {{onTurnstile: saw}};</script>"
    )


WIDGET_PAGES = {
    "recaptcha": _form(
        '<div class="g-recaptcha" data-sitekey="site-key-recaptcha" data-callback="saw">'
        '<textarea id="g-recaptcha-response" name="g-recaptcha-response" style="display:none">'
        "</textarea></div>"
    ),
    "hcaptcha": _form(
        '<div class="h-captcha" data-sitekey="site-key-hcaptcha" data-callback="saw">'
        '<textarea name="h-captcha-response" style="display:none"></textarea>'
        '<textarea name="g-recaptcha-response" style="display:none"></textarea></div>'
    ),
    "turnstile": _form(
        '<div class="cf-turnstile" data-sitekey="site-key-turnstile" '
        'data-callback="widgets.onTurnstile"><input type="hidden" name="cf-turnstile-response"></div>'
    ),
}
FIELDS = {"recaptcha": "g-recaptcha-response", "hcaptcha": "h-captcha-response", "turnstile": "cf-turnstile-response"}
LABELS = {"recaptcha": "reCAPTCHA v2", "hcaptcha": "hCaptcha", "turnstile": "Turnstile"}
_IMAGE = (
    "data:image/svg+xml;utf8,<svg xmlns='http://www.w3.org/2000/svg' width='120' height='40'>"
    "<rect width='120' height='40' fill='white'/><text x='10' y='28' font-size='24'>W7XK2</text></svg>"
)


def _kept(answer):
    def respond(request: dict):
        SEEN.append(request)
        return answer(request) if callable(answer) else answer

    return respond


def _submitted(request: dict):
    fields = dict(parse_qsl(request["body"].decode(), keep_blank_values=True))
    lines = "".join(f"<p>{k}={v}</p>" for k, v in sorted(fields.items()))
    return 200, {"content-type": "text/html; charset=utf-8"}, _page("Received", lines)


def _html(body: bytes):
    return 200, {"content-type": "text/html; charset=utf-8"}, body


ROUTES = {
    **{f"/{kind}": _kept(_html(_page(f"Sign up ({kind})", form))) for kind, form in WIDGET_PAGES.items()},
    "/submit": _kept(_submitted),
    "/v3": _kept(
        _html(
            _page(
                "Scored",
                '<script src="/recaptcha/api.js?render=v3-site-key"></script>'
                '<button id="go" onclick="this.textContent=\'sent\'">Send</button>',
            )
        )
    ),
    # grecaptcha.render() draws its frame into a plain div: no data-sitekey to read the key or callback from
    "/drawn": _kept(
        _html(
            _page(
                "Drawn",
                '<div id="holder"><iframe title="reCAPTCHA" '
                'src="/recaptcha/api2/anchor?k=drawn-site-key"></iframe></div>'
                '<button id="go" onclick="this.textContent=\'sent\'">Send</button>',
            )
        )
    ),
    "/recaptcha/api2/anchor": _kept(_html(b"<p>checkbox</p>")),
    "/recaptcha/api.js": _kept((200, {"content-type": "text/javascript"}, b"window.grecaptcha = {};")),
    # the widget arrives when the pointer rests on "Show" — a hover is a look, not an act, so no check runs before it
    "/late": _kept(
        _html(
            _page(
                "Later",
                _form('<span id="slot"></span>')
                + (
                    "<p id=\"reveal\" onmouseover=\"document.getElementById('slot').innerHTML = '<div class=&quot;cf-turnstile&quot; "
                    "data-sitekey=&quot;site-key-late&quot; data-callback=&quot;saw&quot;><input type=&quot;hidden&quot; "
                    "name=&quot;cf-turnstile-response&quot;></div>'\">Show</p>"
                ),
            )
        )
    ),
    "/framed": _kept(_html(_page("Framed", '<iframe src="/recaptcha" style="width:640px;height:400px"></iframe>'))),
    "/image": _kept(
        _html(
            _page(
                "Letters",
                f'<form method="post" action="/submit"><img id="captcha-img" alt="captcha" '
                f'src="{_IMAGE}"><input id="code" name="code"><button id="go">Send</button>'
                f"</form>",
            )
        )
    ),
}


@pytest.fixture
def solver():
    with CaptchaSolver("capsolver", KEY) as server:
        yield server


def _tool(browse, solver: CaptchaSolver, block: dict | None = None, key: str = KEY):
    tool = browse({"browse": block} if block else None, secret=lambda name: key if name == "CAPSOLVER_KEY" else "")
    tool.endpoints[solver.vendor] = solver.url
    return tool


def _nothing_leaked(tool_output: str, recorder, tmp_path) -> None:
    SEEN_TEXT = json.dumps([{**r, "body": r["body"].decode(errors="replace")} for r in SEEN])
    assert KEY not in SEEN_TEXT  # the key reached the solver's host and no other
    assert KEY not in tool_output and KEY not in recorder.text()
    assert all(KEY not in p.read_text(errors="replace") for p in tmp_path.rglob("*") if p.is_file())


@pytest.mark.parametrize("vendor", ["capsolver", "2captcha", "anticaptcha"])
@pytest.mark.parametrize("kind", ["recaptcha", "hcaptcha", "turnstile"])
def test_each_widget_is_solved_with_the_solvers_own_task_and_the_token_reaches_its_field_and_its_callback(
    browse, pages_site, recorder, tmp_path, vendor, kind
):
    SEEN.clear()
    with CaptchaSolver(vendor, KEY) as solver:
        solver.processing = 0
        tool = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY", "captcha_solver": vendor})
        out = tool.call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/{kind}",
                "mode": "text",
                "actions": [{"fill": "#email", "text": "ada@example.com"}, {"click": "#go"}],
            }
        )
    token = solver.token_for(1, f"site-key-{kind}")
    (task,) = solver.created
    assert task["type"] == {v: k for k, v in TASK_TYPES[vendor].items()}[kind] == SOLVERS[vendor].tasks[kind]
    assert (task["websiteURL"], task["websiteKey"]) == (f"{pages_site.url}/{kind}", f"site-key-{kind}")
    assert all(r["body"]["clientKey"] == KEY for r in solver.requests)
    assert f"{FIELDS[kind]}={token}" in out and f"callback_saw={token}" in out  # the form carried what the widget would
    if kind == "hcaptcha":
        assert f"g-recaptcha-response={token}" in out  # hCaptcha fills the reCAPTCHA-named field beside its own
    lines = [line for line in recorder.lines if line.startswith("captcha: ")]
    assert len(lines) == 1 and re.fullmatch(rf"captcha: {LABELS[kind]} solved by {vendor} in \d+\.\ds", lines[0])
    assert token not in recorder.text()  # the stderr line and the trace say which, who and how long — not the token
    assert {"event": "captcha", "widget": kind, "solver": vendor} == {
        k: v for k, v in next(e for e in recorder.events if e["event"] == "captcha").items() if k != "seconds"
    }
    _nothing_leaked(out, recorder, tmp_path)


def test_a_page_is_solved_once_however_many_actions_follow_and_again_on_the_next_page(
    browse, pages_site, solver, recorder
):
    tool = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"})
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/recaptcha",
            "mode": "text",
            "actions": [
                {"click": "#check"},
                {"solve": True},
                {"fill": "#email", "text": "ada@example.com"},
                {"click": "#go"},
            ],
        }
    )
    assert solver.pages_solved() == [f"{pages_site.url}/recaptcha"]  # one bill for the page, four steps on it
    assert "captcha: the widget on this page is already solved — a site key is solved once per page" in out
    assert f"g-recaptcha-response={solver.token_for(1, 'site-key-recaptcha')}" in out
    tool.call({"action": "browse", "url": f"{pages_site.url}/recaptcha", "actions": [{"click": "#go"}]})
    assert solver.pages_solved() == [f"{pages_site.url}/recaptcha"] * 2  # a new page is a new widget
    assert len([line for line in recorder.lines if line.startswith("captcha: reCAPTCHA v2 solved by")]) == 2


def test_a_widget_on_the_page_as_it_opens_is_passed_even_for_a_read_and_solve_true_sends_a_later_one_now(
    browse, pages_site, solver
):
    tool = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"})
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/turnstile",
            "actions": [{"get": "#callback_saw", "what": "value"}],
        }
    )
    assert json.loads(out.split("\n\n", 1)[1])[0]["value"] == solver.token_for(1, "site-key-turnstile")
    assert (
        "— the token is in cf-turnstile-response; handed to its callback widgets.onTurnstile; the next action submits"
    ) in out
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/late",
            "actions": [{"hover": "#reveal"}, {"solve": True}, {"get": "#callback_saw", "what": "value"}],
        }
    )
    assert json.loads(out.split("\n\n", 1)[1])[0]["value"] == solver.token_for(2, "site-key-late")
    assert solver.pages_solved() == [f"{pages_site.url}/turnstile", f"{pages_site.url}/late"]
    assert tool.writes({"action": "browse", "url": "u", "actions": [{"solve": True}]}) is True  # solving acts


def test_a_widget_inside_a_frame_is_solved_for_the_frames_own_address(browse, pages_site, solver):
    out = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"}).call(
        {"action": "browse", "url": f"{pages_site.url}/framed", "actions": [{"get": "#callback_saw", "what": "value"}]}
    )
    assert solver.pages_solved() == [f"{pages_site.url}/recaptcha"]
    assert json.loads(out.split("\n\n", 1)[1])[0]["value"] == solver.token_for(1, "site-key-recaptcha")


def test_a_solver_that_cannot_be_reached_is_a_sentence_naming_it(browse, pages_site, solver):
    tool = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"})
    tool.endpoints["capsolver"] = "http://127.0.0.1:9"  # the discard port: nothing listens
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/recaptcha"})
    assert str(caught.value).startswith(
        f"browse: capsolver could not be reached for the reCAPTCHA v2 on {pages_site.url}/recaptcha: "
    )
    assert "Error" not in str(caught.value) and KEY not in str(caught.value)


def test_a_session_page_that_stays_between_calls_is_solved_once(make_tool, pages_site, solver, session_browser):  # noqa: F811
    tool = make_tool({"browse": {"captcha": "CAPSOLVER_KEY"}}, session_cdp=session_browser, secret=lambda name: KEY)
    tool.endpoints["capsolver"] = solver.url
    tool.call({"action": "browse", "url": f"{pages_site.url}/recaptcha"})
    tool.call({"action": "browse", "actions": [{"click": "#check"}]})  # the same page, where the last call left it
    out = tool.call({"action": "browse", "mode": "text", "actions": [{"click": "#go"}]})
    assert solver.pages_solved() == [f"{pages_site.url}/recaptcha"]
    assert f"g-recaptcha-response={solver.token_for(1, 'site-key-recaptcha')}" in out
    tool.call({"action": "browse", "url": f"{pages_site.url}/recaptcha"})  # opened again: a new page
    assert solver.pages_solved() == [f"{pages_site.url}/recaptcha"] * 2


def test_an_image_captcha_is_read_into_its_field_by_solve_and_into(browse, pages_site, solver):
    tool = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"})
    out = tool.call(
        {
            "action": "browse",
            "url": f"{pages_site.url}/image",
            "mode": "text",
            "actions": [{"solve": "#captcha-img", "into": "#code"}, {"click": "#go"}],
        }
    )
    (task,) = solver.created
    assert task["type"] == "ImageToTextTask" and base64.b64decode(task["body"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert "code=W7XK2" in out
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/image", "actions": [{"solve": "#captcha-img"}]})
    assert str(caught.value) == (
        "browse: step 1: solve with a selector reads an image captcha into a field — add "
        '"into", such as {"solve": "#captcha img", "into": "#code"}\n\nWhat it had done:\n'
        'captcha: an image captcha is not read by itself — add a step {"solve": "<the '
        'image\'s selector>", "into": "<its field>"} ('
        f"{pages_site.url}/image); the page comes back as it is"
    )


def test_what_is_not_covered_is_said_so_and_never_sent(browse, pages_site, solver):
    tool = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"})
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/v3", "actions": [{"click": "#go"}]})
    assert (
        f"captcha: reCAPTCHA v3 is not covered — it has no widget; the site scores the session itself "
        f"({pages_site.url}/v3); the page comes back as it is"
    ) in out
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/image", "actions": [{"click": "#code"}]})
    assert (
        'captcha: an image captcha is not read by itself — add a step {"solve": "<the image\'s selector>", '
        '"into": "<its field>"}'
    ) in out
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/v3", "actions": [{"solve": True}]})
    assert str(caught.value) == (
        f"browse: step 1: solve found no reCAPTCHA v2, hCaptcha or Turnstile widget on the page (reCAPTCHA v3 is not "
        f"covered — it has no widget; the site scores the session itself ({pages_site.url}/v3); the page comes back "
        f"as it is)\n\nWhat it had done:\ncaptcha: reCAPTCHA v3 is not covered — it has no widget; the site scores "
        f"the session itself ({pages_site.url}/v3); the page comes back as it is"
    )
    assert solver.created == []


def test_a_widget_drawn_by_the_pages_own_script_is_said_not_covered_and_never_sent(browse, pages_site, solver):
    tool = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"})
    out = tool.call({"action": "browse", "url": f"{pages_site.url}/drawn", "actions": [{"click": "#go"}]})
    assert (
        f"captcha: a widget the page's own script drew (grecaptcha.render, hcaptcha.render or turnstile.render, "
        f"with no data-sitekey) is not covered ({pages_site.url}/drawn); the page comes back as it is"
    ) in out
    assert solver.created == []


def test_a_refusal_is_a_sentence_with_its_error_code_and_the_calls_other_results_kept(
    browse, pages_site, solver, recorder
):
    solver.refuse = ("ERROR_ZERO_BALANCE", "Account has zero or negative balance")
    tool = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"})
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/late",
                "actions": [{"get": "title"}, {"hover": "#reveal"}, {"click": "#go"}],
            }
        )
    assert str(caught.value) == (
        f"browse: capsolver refused the Turnstile on {pages_site.url}/late: ERROR_ZERO_BALANCE — Account has "
        f"zero or negative balance; store a working key with `foldrun secrets set CAPSOLVER_KEY`\n\nWhat it had done:"
        f'\n[\n {{\n  "get": "title",\n  "value": "Later"\n }}\n]'
    )
    solver.refuse = ("ERROR_KEY_DENIED_ACCESS", f"the key {KEY} is blocked")  # a solver that echoes the key
    with pytest.raises(WebToolError) as caught:
        tool.call({"action": "browse", "url": f"{pages_site.url}/recaptcha"})
    assert str(caught.value) == (
        f"browse: capsolver refused the reCAPTCHA v2 on {pages_site.url}/recaptcha: ERROR_KEY_DENIED_ACCESS — the key "
        f"[secret CAPSOLVER_KEY] is blocked; store a working key with `foldrun secrets set CAPSOLVER_KEY`"
    )
    assert KEY not in recorder.text()
    solver.refuse = None
    wrong = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"}, key="not-the-key-0000")
    with pytest.raises(WebToolError) as caught:
        wrong.call({"action": "browse", "url": f"{pages_site.url}/recaptcha", "actions": [{"solve": True}]})
    assert str(caught.value) == (
        f"browse: capsolver refused the reCAPTCHA v2 on {pages_site.url}/recaptcha: ERROR_KEY_DOES_NOT_EXIST — "
        f"Account authorization key not found in the system; store a working key with `foldrun secrets set "
        f"CAPSOLVER_KEY`"
    )
    assert "not-the-key-0000" not in recorder.text()


def test_a_solver_that_never_answers_stops_at_a_deadline_that_says_how_long(browse, pages_site, solver):
    solver.processing = 10**6
    tool = _tool(browse, solver, {"captcha": "CAPSOLVER_KEY"})
    started = time.monotonic()
    with pytest.raises(WebToolError) as caught:
        tool.call(
            {"action": "browse", "url": f"{pages_site.url}/hcaptcha", "timeout": 8, "actions": [{"click": "#go"}]}
        )
    took = time.monotonic() - started
    match = re.fullmatch(
        rf"browse: capsolver had not solved the hCaptcha on {re.escape(pages_site.url)}/hcaptcha "
        rf"after (\d+)s \(what the call's timeout= left it; pass a longer one \(at most 600\)\); "
        rf"nothing was written into the page",
        str(caught.value),
    )
    assert match and 2 <= int(match.group(1)) <= 7 and took < 15  # the call's 8 s, less what opening the page took
    assert len(solver.created) == 1 and solver.polls["1"] >= 2


def test_bad_settings_are_refused_by_name_before_a_browser_opens(browse, pages_site, solver):
    SEEN.clear()
    with pytest.raises(WebToolError) as caught:
        _tool(browse, solver).call(
            {"action": "browse", "url": f"{pages_site.url}/recaptcha", "actions": [{"click": "#go"}, {"solve": True}]}
        )
    assert str(caught.value) == (
        "browse: the solve step needs captcha= — the NAME of a secret holding your captcha "
        "solver's API key (or web.browse.captcha in the agent's file)"
    )
    with pytest.raises(WebToolError) as caught:
        _tool(browse, solver).call({"action": "browse", "url": f"{pages_site.url}/recaptcha", "captcha": "MISSING_KEY"})
    assert str(caught.value) == (
        "browse: captcha=MISSING_KEY: the secret MISSING_KEY is not available to this step — "
        "declare it under the agent's secrets: and store it with `foldrun secrets set "
        "MISSING_KEY`"
    )
    with pytest.raises(WebToolError) as caught:
        _tool(browse, solver).call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/recaptcha",
                "captcha": "CAPSOLVER_KEY",
                "captcha_solver": "deathbycaptcha",
            }
        )
    assert str(caught.value) == (
        "browse: captcha_solver=deathbycaptcha is not a solver here; it is one of capsolver, "
        "2captcha, anticaptcha (capsolver by default)"
    )
    with pytest.raises(WebToolError) as caught:
        _tool(browse, solver).call(
            {"action": "browse", "url": f"{pages_site.url}/recaptcha", "browser": "obscura", "captcha": "CAPSOLVER_KEY"}
        )
    assert str(caught.value) == (
        "browse: captcha needs a browser that can intercept requests; obscura draws pages but "
        "cannot intercept requests, record them, emulate a device, keep a session or take a "
        "proxy — use engine chrome"
    )
    with pytest.raises(WebToolError) as caught:
        _tool(browse, solver, {"captcha": "CAPSOLVER_KEY", "deny": ["solve"]}).call(
            {"action": "browse", "url": f"{pages_site.url}/recaptcha"}
        )
    assert str(caught.value) == (
        "browse: captcha= (it solves the page's captcha widgets) is denied to this agent — "
        "web.browse.deny names solve, which covers it"
    )
    assert SEEN == [] and solver.requests == []


def test_a_call_argument_picks_the_solver_and_script_still_runs_beside_the_key(browse, pages_site):
    with CaptchaSolver("2captcha", KEY) as solver:
        solver.processing = 0
        tool = _tool(browse, solver)
        out = tool.call(
            {
                "action": "browse",
                "url": f"{pages_site.url}/recaptcha",
                "captcha": "CAPSOLVER_KEY",
                "captcha_solver": "2captcha",
                "actions": [{"solve": True}, {"eval": "document.title"}],
            }
        )
    assert solver.created[0]["type"] == "RecaptchaV2TaskProxyless"
    assert '"value": "Sign up (recaptcha)"' in out  # the key never enters the page, so eval is not refused beside it


def test_check_accepts_the_captcha_keys_and_refuses_an_unknown_solver_and_an_engine_without_them():
    def messages(block: str) -> list[str]:
        text = f"---\nname: clerk\ntools: [web]\nsecrets: [CAPSOLVER_KEY]\nweb:\n  browse:\n{block}\n---\nFill.\n"
        return [
            f.message
            for f in check(Desk(files={"agents/clerk/agent.md": text}), mode="check")
            if f.code.startswith("web.")
        ]

    assert messages("    captcha: CAPSOLVER_KEY\n    captcha_solver: 2captcha") == []
    assert messages("    captcha: CAPSOLVER_KEY\n    captcha_solver: deathbycaptcha") == [
        "web.browse.captcha_solver must be capsolver, 2captcha or anticaptcha."
    ]
    assert messages("    engine: obscura\n    captcha: CAPSOLVER_KEY") == [
        "web.browse: captcha needs a browser that can intercept requests; obscura draws pages but cannot intercept "
        "requests, record them, emulate a device, keep a session or take a proxy — use engine chrome."
    ]


def test_a_run_on_a_real_worker_solves_the_widget_and_its_trace_holds_the_line_but_never_the_key(
    transactional_db, workspace, alice, fake_provider, pages_site, solver, tmp_path
):
    from runs.actions import check_start_run
    from runs.models import Run, TraceEvent
    from tests.conftest import start_worker, stop_worker, wait_for
    from tests.runs.helpers import agent_file, push
    from vault.actions import do_set_secret

    do_set_secret(workspace.account, None, "CAPSOLVER_KEY", value=KEY)
    push(
        workspace,
        {
            "agents/clerk/agent.md": agent_file(
                "clerk",
                fake_provider,
                tools="[web]",
                extra="secrets: [CAPSOLVER_KEY]\nweb:\n  browse:\n    captcha: CAPSOLVER_KEY\n",
            )
        },
    )
    fake_provider.reply_tool_use(
        "web",
        {
            "action": "browse",
            "url": f"{pages_site.url}/recaptcha",
            "mode": "text",
            "actions": [{"fill": "#email", "text": "ada@example.com"}, {"click": "#go"}],
        },
    )
    fake_provider.reply_text("GOOD — signed up past the captcha")
    worker = start_worker(tmp_path / "worker.log", {"FOLDRUN_WEB_ENDPOINTS": json.dumps({"capsolver": solver.url})})
    try:
        run = check_start_run(workspace=workspace, user=alice, agent="clerk", task="Sign up.")
        done = wait_for(lambda: Run.objects.filter(pk=run.pk, status__in=["completed", "failed"]).first(), timeout=120)
    finally:
        stop_worker(worker)
    events = list(TraceEvent.objects.filter(run=done).order_by("pk"))
    (result,) = [e.data["content"] for e in events if e.kind == "tool_result"]
    logs = [e.data["message"] for e in events if e.kind == "log"]
    assert done.status == "completed", done.error
    assert f"g-recaptcha-response={solver.token_for(1, 'site-key-recaptcha')}" in result
    assert solver.pages_solved() == [f"{pages_site.url}/recaptcha"]
    assert any(re.fullmatch(r"captcha: reCAPTCHA v2 solved by capsolver in \d+\.\ds", line) for line in logs)
    assert KEY not in json.dumps([e.data for e in events], default=str)
    assert [e.data["event"] for e in events if e.kind == "web"] == ["captcha", "browse"]
