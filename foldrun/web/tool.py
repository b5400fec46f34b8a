"""`WebTool`: the gallery `web` tool for one step.

One instance per step (it holds the step's browser contexts); `call(args)`
runs one call and returns the text the model reads, or raises WebToolError.
"""

from __future__ import annotations

import re
from functools import lru_cache
from importlib import import_module
from pathlib import Path
from typing import Any, Callable

import httpx
import yaml

from foldrun.contract import web_engines as W

from . import paths
from .browse import acts, servers, thread_pool
from .browse import launch, live
from .browse.lost import run_on_pod
from .browse.call import Call
from .browse.pool import BrowserPool
from .arguments import EXTRA_ARGS, MISPLACED, TYPED
from .errors import WebToolError
from .net import scrub_url
from .providers import run_action

TOOL_MD = Path(__file__).resolve().parent.parent / "gallery" / "tools" / "web" / "tool.md"
# foldrun's own answer for each action: the module in this package whose run(tool, args) does it.
# A provider named for crawl, map, extract, answer or monitor is answered by foldrun.web.providers instead;
# search, fetch and browse hand over to their provider themselves.
OWN_ACTIONS: dict[str, str] = {
    "search": "search",
    "fetch": "fetch",
    "browse": "browse",
    "crawl": "crawl",
    "map": "sitemap",
    "extract": "extract",
    "answer": "answer",
    "monitor": "monitor",
}
PROVIDER_ANSWERED: tuple[str, ...] = ("crawl", "map", "extract", "answer", "monitor")
BUILT_ACTIONS: tuple[str, ...] = tuple(OWN_ACTIONS)
_REF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$")


@lru_cache(maxsize=1)
def tool_md() -> dict:
    """The shelf's tool.md frontmatter: the description and args the model sees."""
    text = TOOL_MD.read_text(encoding="utf-8")
    _, front, body = text.split("---", 2)
    meta = yaml.safe_load(front) or {}
    meta["body"] = body.strip()
    return meta


def resolve_language(*layers: dict | None) -> tuple[str, str | None]:
    """`language:` and `region:` cascade agent → workspace → account; English when nobody set it."""
    language = next((str(l["language"]) for l in layers if l and l.get("language")), "en")
    region = next((str(l["region"]) for l in layers if l and l.get("region")), None)
    return language, region


def resolve_web_block(*layers: dict | None) -> dict:
    """The nearest `web:` block wins whole (agent, then workspace AGENTS.md, then the account's)."""
    for layer in layers:
        if layer and isinstance(layer.get("web"), dict):
            return dict(layer["web"])
    return {}


class WebTool:
    """The `web` tool for one step. See the package docstring for how the engine plugs it in.

    config        the agent's resolved `web:` block ({} when absent)
    http          a shared httpx.Client for the account's engine and the provider APIs
    sandbox       the step's agent directory; save=, screenshots and state stay inside it
    allow_private whether a user-supplied URL may reach loopback/private/link-local addresses
    test_mode     a test run: every action fails closed and says so
    trace         receives one dict per event (`{"event": "fetch", "url": …}`); never a secret
    log           a run-log line (the engine's `env.log`); defaults to a trace event
    secret        NAME -> value, host-side, for a provider's key; never called on a test run
    searxng_url   the account's own engine (its SearXNG instance URL)
    endpoints     provider name -> base URL, to point an API somewhere else (tests, a gateway)
    browsers      a BrowserPool to share (one launch across steps or tests); one is made on demand
    pod_account   the account whose browser pods serve this step (a worker's step): its browse calls
                  connect there, by the lost-pod rules; None (the CLI, a test run) launches in the step
    session_cdp   the CDP endpoint of a browser session this step browses in (a task of the browser agent):
                  every browse call drives that session's page, which stays where the last call left it
    session_allow_hosts  that session's `allowHosts`: hosts its guard sends through the user's own proxy
    seeds         the host's seed book (browse/kept.py): what secret signed a vendor's kept profile in, kept
                  outside the workspace; None treats every kept profile as signed in
    """

    def __init__(
        self,
        config: dict | None,
        *,
        http: httpx.Client,
        sandbox: Path,
        allow_private: bool,
        test_mode: bool,
        trace: Callable[[dict], None] | None = None,
        log: Callable[[str], None] | None = None,
        secret: Callable[[str], str] | None = None,
        language: str | None = None,
        region: str | None = None,
        searxng_url: str | None = None,
        endpoints: dict[str, str] | None = None,
        browsers: Any = None,
        fetch_timeout: float = 20.0,
        browse_timeout: float = 30.0,
        model_provider: str | None = None,
        searxng_guarded: bool = False,
        pod_account: str | None = None,
        session_cdp: str | None = None,
        session_allow_hosts: list[str] | None = None,
        seeds: Any = None,
    ) -> None:
        self.config = dict(config or {})
        self.seeds = seeds
        self.http = http
        self.sandbox = Path(sandbox)
        self.allow_private = allow_private
        self.session_allow_hosts = [str(h).lower() for h in session_allow_hosts or []] if session_cdp else []
        self.test_mode = test_mode
        self._trace = trace or (lambda event: None)
        self._log = log
        self._secret = secret
        self.language = language or "en"
        self.region = region
        self.searxng_url = searxng_url
        self.endpoints = dict(endpoints or {})
        self.fetch_timeout = fetch_timeout
        self.browse_timeout = browse_timeout
        self.model_provider = model_provider  # the provider answering this step's model calls, when known
        self.searxng_guarded = searxng_guarded  # the account's own engine: an address a person typed
        self.model_format: str | None = None  # the model provider's wire, when its block names one
        self._browsers = browsers
        self._owns_browsers = browsers is None
        # () -> None: a browse call acted on the browser session this step browses in (its idle clock restarts)
        self.on_session_action: Callable[[], None] | None = None
        self.browse_state: Any = None  # the step's contexts, made by browse on first use
        # Secrets a call on this step's browser-session or live page used (a login's password): every later call
        # on that page redacts them too, since the page (and what the site printed back) stays between calls.
        self.browse_kept: dict[str, str] = {}
        self.pods: Any = None  # the account's pods, while this step browses on them
        self.pod_lines: list[str] = []  # the lost-pod lines of this step's calls
        self.on_pod = False  # this step's browse calls go to the account's pod (its image is "slim")
        self.captcha_solved: set[tuple] = set()  # captcha widgets this step solved, by document: once per page
        self.live: Any = None  # the step's live pages (browse/live.py), made by the first live call
        self.live_page: Any = None  # … the one the call now running drives
        self._call_browsers: Any = None  # that live page's browser, while its call runs
        self.in_step_browser = False  # a call of this step rendered in a browser inside it (not "slim")
        self.screens: list = []  # the virtual screens (Xvfb) a windowed browser of this call started
        # (kind, jpeg, url) -> None: where the step's live frames go (the host's, scoped to the step); None shows none
        self.live_frames: Callable[[str, bytes | None, str], None] | None = None
        self.videos = 0  # the step's videos so far: each call's default file is numbered
        if session_cdp and not test_mode and browsers is None:
            self._browsers = BrowserPool(cdp=session_cdp)
            self._owns_browsers = True
        elif pod_account and not test_mode and browsers is None and "browse" in self.allowed_actions():
            self.pods = servers.POOL.account(pod_account)
            # The first pod starts the moment a step of the account grants browse (a windowed one beside it when
            # the file asks for a window: `headless: false`).
            self.pods.open_step(windowed=self._windowed())
            self.on_pod = True
            self._browsers = self.pods.step_browsers()  # the client and connection the last step left
            self._owns_browsers = True

    def _windowed(self) -> bool:
        """The file's block asks for a browser with a window (`headless: false`)."""
        block = self.config.get("browse")
        return isinstance(block, dict) and block.get("headless") is False

    # ------------------------------------------------------------------ what the engine reads
    def allowed_actions(self) -> list[str]:
        listed = self.config.get("actions")
        allowed = [str(a) for a in listed] if isinstance(listed, list) else list(W.WEB_ACTIONS)
        return [a for a in W.WEB_ACTIONS if a in allowed]

    def schema(self) -> dict:
        """The tool definition the model sees: `{name, description, input_schema}`."""
        meta = tool_md()
        actions = [a for a in self.allowed_actions() if a in OWN_ACTIONS or self._answered_by_provider(a)]
        properties: dict[str, dict] = {}
        for name, description in (meta.get("args") or {}).items():
            prop: dict[str, Any] = {"description": str(description)}
            if name == "action":
                prop.update({"type": "string", "enum": actions})
            elif name in TYPED:
                prop["type"] = TYPED[name]
            elif name != "actions":  # a JSON array, or that array written as a string
                prop["type"] = "string"
            properties[name] = prop
        properties.update({k: dict(v) for k, v in EXTRA_ARGS.items()})
        description = " ".join(str(meta.get("description") or "").split())
        return {
            "name": "web",
            "description": description,
            "input_schema": {
                "type": "object",
                "properties": properties,
                "required": ["action"],
                "additionalProperties": False,
            },
        }

    def limit_keys(self, args: dict) -> list[str]:
        """`web.<action>` and `web`: one call is one count, even when fetch reads 20 urls."""
        action = args.get("action") if isinstance(args, dict) else None
        return ["web", f"web.{action}"] if action in W.WEB_ACTIONS else ["web"]

    def writes(self, args: dict) -> bool:
        """Whether this call may change something outside (the spec's read/write list)."""
        if not isinstance(args, dict):
            return True
        action = args.get("action")
        if action == "browse":
            return acts(args)
        if action in ("search", "fetch") + PROVIDER_ANSWERED:
            try:
                if self.provider_for(action) is not None:
                    return True  # "a web action a paid provider answers" is a write
            except WebToolError:
                return True
        return action not in ("search", "fetch", "crawl", "map", "extract", "answer", "monitor")

    def secret_names(self) -> list[str]:
        """Vault names the configured providers need, to resolve with the step's other secrets."""
        names = []
        for action in ("search", "fetch", "browse") + PROVIDER_ANSWERED:  # browse: a vendor's key, held by the step
            try:
                provider = self.provider_for(action)
            except WebToolError:  # a name that cannot answer: the call says so, in its own sentence
                continue
            if provider and provider.get("key_name"):
                names.append(provider["key_name"])
        return names

    def required_secret_names(self) -> list[str]:
        """The subset whose absence should fail the step up front (Jina reads without a key)."""
        return [n for n in self.secret_names() if n != W.VAULT_KEYS.get("jina")]

    # ------------------------------------------------------------------ one call
    def call(self, args: dict) -> str:
        if not isinstance(args, dict):
            raise WebToolError("web: the arguments must be a JSON object")
        action = args.get("action")
        if action not in W.WEB_ACTIONS:
            raise WebToolError(f"web: action={action} is not one of {', '.join(BUILT_ACTIONS)}")
        if action == "browse" and "headless" in args:
            raise WebToolError(MISPLACED["headless"])
        known = self.schema()["input_schema"]["properties"]
        unknown = sorted(set(args) - set(known))
        if unknown:
            raise WebToolError(f"web: unknown argument `{unknown[0]}`; it takes {', '.join(known)}")
        if action not in self.allowed_actions():
            raise WebToolError(
                f"web: action={action} is not allowed to this agent; its web.actions are "
                f"{', '.join(self.allowed_actions())}"
            )
        provider = self.provider_for(action) if action in PROVIDER_ANSWERED else None
        if provider is None and action not in OWN_ACTIONS:
            raise WebToolError(
                f"web: action={action} is not built into this install yet; the actions that are: "
                f"{', '.join(OWN_ACTIONS)}, or {action} through one of "
                f"{', '.join(W.ACTION_PROVIDERS[action])}"
            )
        if self.test_mode:
            sentence = (
                "test run: web action=browse was not run — a test run is handed no browser pod, and outward "
                "calls fail closed"
                if action == "browse"
                else f"test run: web action={action} was not made — a test run has no internet, and outward calls "
                f"fail closed"
            )
            self.log(sentence)
            self.emit({"event": action, "refused": "test run"})
            raise WebToolError(sentence)
        if provider is not None:
            return run_action(self, provider, args)
        module = import_module(f".{OWN_ACTIONS[action]}", __package__)
        if action == "browse":
            # In the browser's own thread: this one (the step's) keeps the ORM, and writes what the call hands back.
            if live.wanted(self, args):  # a live page runs in the step, never on the pod
                self.in_step_browser = True
                return live.run_live(self, args, module.run)
            if launch.wants_own_launch(Call(self, args)):  # a pinned version or a window
                if self.pods is not None:  # on the account's pool, by its rules
                    return launch.run_on_pods(self, args, module.run)
                self.in_step_browser = True  # a browser of its own, in the step
                return launch.run_own(self, args, module.run)
            if self.pods is None:
                return self._in_session(lambda: self.browsers.run(lambda: module.run(self, args)))
            return run_on_pod(self, args, lambda: module.run(self, args))
        return module.run(self, args)

    def _in_session(self, job: Callable[[], str]) -> str:
        """A browse call; on a browser session's browser (a task's), an action on that session: its idle clock
        starts again as the call begins and as it ends, from this thread (the step's, where the host may write)."""
        if not (self._browsers is not None and self._browsers.cdp and self.on_session_action is not None):
            return job()
        self.on_session_action()
        try:
            return job()
        finally:
            self.on_session_action()

    def _answered_by_provider(self, action: str) -> bool:
        if action not in PROVIDER_ANSWERED:
            return False
        try:
            return self.provider_for(action) is not None
        except WebToolError:  # a name that cannot answer: the call says so, in its own sentence
            return True

    def close(self) -> None:
        """At step end: close this step's browser contexts, and the browser if this tool launched it."""
        if self.live is not None:  # the step's end closes its live pages
            self.live.close()
            self.live = None
        if self.browse_state is not None:
            state, self.browse_state = self.browse_state, None
            self.browsers.run(state.close)  # Playwright's objects, in the thread that made them
        if self._owns_browsers and self._browsers is not None:
            if self.pods is not None:
                pass  # the account's browser stays connected for its next step (the reaper closes it when idle)
            elif self._browsers.cdp:
                self._browsers.close()  # its connection to the session's browser
            else:
                self._browsers.release()  # the process's browser closes when its last user is done
            self._browsers = None
        if self.pods is not None:
            self.pods.close_step(windowed=self._windowed())
            self.pods = None

    # ------------------------------------------------------------------ helpers the actions use
    @property
    def browsers(self):  # noqa: ANN201
        if self._call_browsers is not None:  # a live page's own browser, for the call driving it
            return self._call_browsers
        if self._browsers is None:
            self._browsers = thread_pool().acquire()
            self._owns_browsers = True
        return self._browsers

    def provider_for(self, action: str) -> dict | None:
        """Who answers `action`: None for foldrun's own, else `{name, key_name, action}`."""
        value = self.config.get(action)
        if value in (None, "", False):
            return None
        if isinstance(value, dict):
            if action == "browse":
                name = value.get("via")
                if not name:
                    return None
            else:
                name = value.get("name")
                if not name:
                    return None  # a SearXNG block: the account's own engine, tuned
        else:
            name = value
        refused = W.provider_refusal(action, name)  # the sentence `foldrun check` says, word for word
        if refused is not None:
            raise WebToolError(f"web.{action}: {refused[1]}")
        name = str(name).strip().lower()
        if name in W.MODEL_PROVIDER_ACTIONS.get(action, {}):
            mismatch = W.model_provider_refusal(action, name, self.model_provider)
            if mismatch:
                raise WebToolError(f"web.{action}: {mismatch}")
        key_name = W.VAULT_KEYS.get(name)
        if isinstance(value, dict) and value.get("key"):
            match = _REF.match(str(value["key"]).strip())
            if not match:
                raise WebToolError(f"web.{action}.key must be a reference such as ${{MY_KEY}}, never a value")
            key_name = match.group(1)
        kind = (W.CAN.get(action, {}).get(name) or {}).get("kind", "api")
        return {"name": name, "key_name": None if kind == "model" else key_name, "action": action, "kind": kind}

    def secret(self, name: str) -> str:
        if self.test_mode:  # never materialised on a test run
            raise WebToolError(f"test run: the secret {name} is withheld")
        if self._secret is None:
            raise WebToolError(f"the secret {name} is not available to this step")
        reader = self._secret
        return self._hand(lambda: reader(name), wait=True)

    def save_target(self, raw: object) -> Path | None:
        if raw in (None, ""):
            return None
        return paths.save_path(self.sandbox, raw)

    def sandbox_file(self, raw: object, *, arg: str = "file") -> Path:
        """An existing file inside the agent directory, to read (an upload, a mock's body)."""
        target = paths.save_path(self.sandbox, raw, arg=arg, for_write=False)
        if not target.is_file():
            raise WebToolError(f"{arg}={raw}: no such file in the agent directory")
        return target

    def relative(self, target: Path) -> str:
        return paths.rel(self.sandbox, target)

    def write_file(self, target: Path, data: bytes) -> str:
        paths.write_inside(self.sandbox, target, data)
        return paths.rel(self.sandbox, target)

    def emit(self, event: dict) -> None:
        clean = {
            k: (scrub_url(v) if k in ("url", "final_url") and isinstance(v, str) else v)
            for k, v in event.items()
            if v is not None
        }
        self._hand(lambda: self._trace(clean))

    def log(self, message: str) -> None:
        if self._log is not None:
            self._hand(lambda: self._log(message))
        else:
            self._hand(lambda: self._trace({"event": "log", "message": message}))

    @property
    def browser_ws(self) -> str | None:
        """The pod's address, handed to the step as FOLDRUN_BROWSER_WS (None: no pod)."""
        if self.pods is None:
            return None
        pod = self.pods.pod()
        self.pods.done_with(pod)  # an address handed out, not a browser on it
        return pod.ws

    def hand(self, fn: Callable[[], Any]) -> Any:
        """`fn`'s answer, asked in the step's thread (the host's records are its) from inside a browse call too."""
        return self._hand(fn, wait=True)

    def _hand(self, fn: Callable[[], Any], *, wait: bool = False) -> Any:
        """Trace, log and secrets are the step's: from inside a browse call they run in the step's thread."""
        current = self._call_browsers or self._browsers
        if current is None:
            return fn()
        return current.hand(fn, wait=wait)
