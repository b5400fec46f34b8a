"""The `web` tool's arguments beyond the shelf's tool.md: what each built action also takes, the settings a call
may not carry (and where each belongs), and the arguments typed other than as strings.

WebTool.schema() lays these over tool.md's list; the engine refuses a model's call that carries a MISPLACED one.
"""

from __future__ import annotations

# Settings a call may not carry, and the sentence saying where each belongs (spec tools.md, "How this agent's
# browser presents itself": "There is no per-call argument for it"). The engine refuses a model's call in it too.
MISPLACED: dict[str, str] = {
    "headless": "browse: headless is the agent's own setting (web.browse.headless: false in its file), not a "
    "call's — there is no per-call argument for it",
}
# Arguments the spec names beyond tool.md's list, for what is built here.
EXTRA_ARGS: dict[str, dict] = {
    "timeout": {
        "type": "number",
        "description": "browse: seconds the whole call may take (default 90, at most "
        "600); it stops there with what it had done and says where.",
    },
    "live": {
        "description": "browse: true keeps the page and its browser beside the step — the next call finds it "
        "as this one left it (url optional); end closes it. session= names which live page."
    },
    "urls": {
        "type": "array",
        "items": {"type": "string"},
        "description": "fetch: up to 20 URLs in one call, read side by side (instead of url). answer: the "
        "pages to read instead of searching.",
    },
    "engines": {"description": "search: the account's own engine only — ask only these SearXNG engines (a list)."},
    "categories": {"description": "search: the account's own engine only — SearXNG categories such as general, news."},
    "page": {"type": "integer", "description": "search: the account's own engine only — results page 1-10."},
    "limit": {
        "type": "integer",
        "description": "crawl, map: at most this many pages (crawl 50 by default, up to 5,000) or URLs (map 500).",
    },
    "schema": {"description": "extract: a JSON Schema of what to read off the page (a provider reads it)."},
    "prompt": {"type": "string", "description": "extract: what to read off the page, in words (a provider reads it)."},
    "each": {"type": "string", "description": "extract: a CSS selector; one row per match."},
    "fields": {"description": "extract: field -> selector inside each match; a@href for an attribute."},
    "wait_for": {"type": "string", "description": "browse: a CSS selector to wait for before reading or acting."},
    "interactive": {
        "type": "boolean",
        "description": "browse mode=aria: list only the numbered things you can act on.",
    },
    "within": {
        "type": "string",
        "description": "browse mode=aria (or an annotated screenshot): a selector for the "
        "part of the page to number; its numbers are found in it again.",
    },
    "cpu_profile": {
        "type": "string",
        "description": "browse: a .cpuprofile path — where the page's JavaScript spent its time, for DevTools.",
    },
    "init": {
        "description": "browse: workspace paths of scripts run in every page before its own (after the "
        "agent's web.browse.init)."
    },
    "boundaries": {"type": "boolean", "description": "browse: wrap the page's words in markers with a fresh nonce."},
    "depth": {"type": "integer", "description": "browse mode=aria: how many levels of the tree, 1-50."},
    "compact": {
        "type": "boolean",
        "description": "browse mode=aria: drop empty containers (a generic or group with no name and no text).",
    },
    "delta": {
        "type": "boolean",
        "description": "browse mode=aria: only what changed since the last snapshot of the "
        "same page in this session, or one line saying nothing did.",
    },
    "max_output": {"type": "integer", "description": "browse: return at most this many characters, 200 to 18,000."},
    "expect": {
        "description": "browse: a JSON array of claims checked after the actions, each the shape of an expect "
        "step; every one is reported, any failure fails the call."
    },
    "confirm": {
        "type": "string",
        "description": "browse: after the actions, reload and require this selector (or "
        "text=…) in what the server returns — proof a write stuck.",
    },
    "js": {"type": "string", "description": "browse: an expression evaluated in the page; refused with cookies."},
    "cookies": {"type": "string", "description": "browse: the NAME of a secret holding a site's sign-in cookies."},
    "cookie_domain": {"type": "string", "description": "browse: the domain those cookies belong to."},
    "headers": {
        "description": "browse: a JSON object of request headers; a ${NAME} in a value is read from that "
        "secret; cookie is refused."
    },
    "device": {
        "type": "string",
        "description": 'browse: a device to emulate by Playwright name: "iPhone 15", "Pixel 7".',
    },
    "timezone": {"type": "string", "description": "browse: such as Australia/Sydney."},
    "user_agent": {
        "type": "string",
        "description": "browse: an explicit user-agent, beating the engine's and the device's.",
    },
    "color_scheme": {"type": "string", "description": "browse: light or dark."},
    "geolocation": {"type": "string", "description": 'browse: "lat,lng" the page will see.'},
    "permissions": {
        "description": "browse: permissions granted up front: geolocation, notifications, "
        "clipboard-read, camera, microphone."
    },
    "block": {
        "type": "string",
        "description": 'browse: resource types and host globs not to load: "image,font,*.doubleclick.net".',
    },
    "dialogs": {"type": "string", "description": "browse: accept or dismiss (default) for alert, confirm and prompt."},
    "dialog_text": {"type": "string", "description": "browse: what to answer a prompt() with, when accepting."},
    "identity": {"type": "string", "description": "browse: a name from the agent's web.browse.identities."},
    "allowed_domains": {"description": "browse: the only domains the browser may reach; narrows the agent's list."},
    "engine": {"type": "string", "description": "browse: the same setting as browser."},
    "routes": {"description": "browse: a JSON array of mock steps in place before the first request."},
    "trace": {"description": 'browse: "true" or a .zip path — a Playwright trace for trace.playwright.dev.'},
    "har": {"description": 'browse: "true" or a .har path — every request and response, as an HTTP Archive.'},
    "video": {
        "description": 'browse: "true" or a .webm path — the call\'s pages recorded as video, played on the Run '
        "page once the run finishes."
    },
    "auth": {"type": "string", "description": "browse: the NAME of a secret holding user:pass for HTTP basic auth."},
    "captcha": {
        "type": "string",
        "description": "browse: the NAME of a secret holding your captcha solver's API key; "
        "a reCAPTCHA v2, hCaptcha or Turnstile widget on the page is solved "
        "before the next action, which submits.",
    },
    "captcha_solver": {"type": "string", "description": "browse: capsolver (default), 2captcha or anticaptcha."},
    "state_key": {
        "type": "string",
        "description": "browse: the NAME of a secret whose value encrypts the state= login at rest (AES-256-GCM).",
    },
    "capture": {
        "type": "string",
        "description": "browse: a URL glob; every matching response is saved under "
        "outputs/captures/ (mode=capture returns the bodies).",
    },
    "annotate": {
        "type": "boolean",
        "description": "browse mode=screenshot: draw a box and its number on every "
        "element that can be acted on, and list them; the numbers are @e4.",
    },
    "visual": {
        "type": "boolean",
        "description": "browse mode=diff: compare pixels, not words — the share that "
        "changed, where, and outputs/diff.png with the changes in red.",
    },
    "proxy": {
        "type": "string",
        "description": "browse: the NAME of a secret holding a proxy URL, "
        "http://user:pass@host:port; the browser's traffic goes through it.",
    },
    "extensions": {
        "description": "browse: workspace paths of unpacked Chrome extensions; the browser then runs in "
        "the step, in Chromium."
    },
    "webgpu": {
        "type": "boolean",
        "description": "browse: true gives the page WebGPU, on a software GPU where there is none.",
    },
    "ignore_https_errors": {
        "type": "boolean",
        "description": "browse: true opens a page whose certificate does not check out.",
    },
    "against": {
        "type": "string",
        "description": "browse mode=diff: another page's URL to compare this one with now "
        "(staging and production), as markdown or pixels with visual=true.",
    },
}
TYPED: dict[str, str] = {"count": "integer"}
