"""The steps and modes browse has, each registered beside its handler.

A step says whether it acts (a click, a fill, script) — what makes a call a
write under the spec's "Slim steps and a lost pod" — and which row of the
engine table (`BROWSE_ENGINE_LIMITS`) it needs. The lists the tool states
(the built steps, the acting steps, the built modes) are read from here, so
a new step is one function and one `@step(...)` line in its kind's module.
The package's `__init__` imports every module that registers, so the
registry is whole before anything reads it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

from foldrun.contract import web_engines as W

from ..errors import WebToolError
from .util import ACTION_TIMEOUT_MS

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call

# (call, page, name, value, step, index, timeout) -> None: name is the step's action, value what it names
StepHandler = Callable[["Call", "Page", str, Any, dict, int, float], None]
# (call, page, args) -> the text the call answers
ModeHandler = Callable[["Call", "Page", dict], str]
# (call, page) -> None: what a mode needs in place before the page opens (an observer, a script)
Prepare = Callable[["Call", "Page"], None]


@dataclass(frozen=True)
class Step:
    name: str
    handler: StepHandler
    acts: bool  # may change something: a call carrying it is a write
    kind: str  # the module it lives in: pointer, forms, keyboard, navigation, storage, network, reading
    capability: str  # the engine table's row it needs
    prepare: Prepare | None = None  # what it needs on the tab before the page opens


@dataclass(frozen=True)
class Mode:
    name: str
    handler: ModeHandler
    capability: str
    acts: bool  # reading the page this way may change something: a call in it is a write
    prepare: Prepare | None = None


# The steps `"human": true` changes: the pointer travels a curve with a person's pauses.
HUMAN_STEPS = ("click", "dblclick", "hover", "drag", "mouse")

STEPS: dict[str, Step] = {}
MODES: dict[str, Mode] = {}


def step(
    *names: str, acts: bool, capability: str = "actions", prepare: Prepare | None = None
) -> Callable[[StepHandler], StepHandler]:
    """Register a handler for one or more step names; `prepare` runs on the tab before the page opens."""

    def register(handler: StepHandler) -> StepHandler:
        kind = handler.__module__.rsplit(".", 1)[-1]
        for name in names:
            if name in STEPS:
                raise RuntimeError(f"browse step {name} is registered twice")
            if name not in W.BROWSE_STEP_ACTIONS:
                raise RuntimeError(f"browse step {name} is not a step the contract knows")
            STEPS[name] = Step(name, handler, acts, kind, capability, prepare)
        return handler

    return register


def mode(
    name: str, *, acts: bool, capability: str = "read", prepare: Prepare | None = None
) -> Callable[[ModeHandler], ModeHandler]:
    """Register how the page is read by `mode=name`; `prepare` runs on the tab before the page opens."""

    def register(handler: ModeHandler) -> ModeHandler:
        if name in MODES:
            raise RuntimeError(f"browse mode={name} is registered twice")
        if name not in W.BROWSE_MODES:
            raise RuntimeError(f"browse mode={name} is not a mode the contract knows")
        MODES[name] = Mode(name, handler, capability, acts, prepare)
        return handler

    return register


def prepare(call: "Call", page: "Page", name: str, steps: list) -> None:
    """What mode=name and the call's steps (those under if/then/else too) need on the tab before the page
    opens, each once."""
    wanted: list[Prepare] = []

    def walk(items: Any) -> None:
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict):
                wanted.extend(STEPS[k].prepare for k in item if k in STEPS and STEPS[k].prepare is not None)
                walk(item.get("then"))
                walk(item.get("else"))

    registered = MODES.get(name)
    if registered is not None and registered.prepare is not None:
        wanted.append(registered.prepare)
    walk(steps)
    for ready in dict.fromkeys(wanted):
        ready(call, page)


def built_steps() -> tuple[str, ...]:
    return tuple(name for name in W.BROWSE_STEP_ACTIONS if name in STEPS)


def acting_steps() -> frozenset[str]:
    """Steps registered as acting, and every step not built here (could be either: counts as a write)."""
    return frozenset(name for name in W.BROWSE_STEP_ACTIONS if name not in STEPS or STEPS[name].acts)


def built_modes() -> tuple[str, ...]:
    return tuple(name for name in W.BROWSE_MODES if name in MODES)


def acting_modes() -> frozenset[str]:
    """Modes registered as acting, and every mode not built here (could be either: counts as a write)."""
    return frozenset(name for name in W.BROWSE_MODES if name not in MODES or MODES[name].acts)


def run_steps(call: "Call", page: "Page", steps: list[dict]) -> None:
    """Each step in order on the tab the steps are on; a Playwright error names the step and what it said."""
    for index, item in enumerate(steps, 1):
        name = next((k for k in item if k in W.BROWSE_STEP_ACTIONS), None)
        if name is None:
            raise WebToolError(
                f"browse: step {index} ({json.dumps(item)[:80]}) names no action; the actions are "
                f"{', '.join(built_steps())}"
            )
        call.denied(name)
        if name not in STEPS:
            raise WebToolError(
                f"browse: the action {name} is not built into this install yet; the ones that run "
                f"here: {', '.join(built_steps())}"
            )
        if item.get("human") not in (None, False):
            if name not in HUMAN_STEPS:
                raise WebToolError(
                    f'browse: step {index}: "human" moves the pointer on {", ".join(HUMAN_STEPS)} '
                    f"(a mouse move); {name} takes no pointer path"
                )
            if item.get("force"):
                raise WebToolError(
                    f'browse: step {index}: "human" and "force" disagree — a person\'s pointer lands '
                    f"on the element's place on the screen, force skips the screen; keep one"
                )
        call.deadline.where = f"at step {index} ({name} {json.dumps(item.get(name))[:80]})"
        timeout = call.deadline.clip(float(item.get("timeout") or ACTION_TIMEOUT_MS))
        if call.captcha is not None and STEPS[name].acts and name != "solve":
            call.captcha.check(call.page or page)  # `captcha=`: a widget is passed before what may submit
        try:
            STEPS[name].handler(call, call.page or page, name, item[name], item, index, timeout)
        except WebToolError as exc:  # its own kind kept (a tab that went is still that), what was done added
            exc.message = call.with_what_it_did(exc.message)
            raise
        except Exception as exc:  # a Playwright timeout or error: the step and what it said
            raise WebToolError(
                call.with_what_it_did(_failure(call, call.page or page, name, item, index, timeout, exc))
            ) from None


# The steps whose value is a selector (a number such as "@e4" included), and the words some of them take
# instead of one (`wait: "load"`, `scroll: "bottom"`, `get: "url"`, `press: ""` on the page).
_SELECTOR_STEPS = frozenset(
    {
        "click",
        "dblclick",
        "rightclick",
        "hover",
        "check",
        "uncheck",
        "drag",
        "tap",
        "fill",
        "type",
        "select",
        "clear",
        "focus",
        "upload",
        "paste",
        "press",
        "wait",
        "get",
        "scroll",
        "highlight",
        "extract",
        "download",
    }
)
_WORDS = frozenset(
    {
        "",
        "load",
        "domcontentloaded",
        "networkidle",
        "navigation",
        "url",
        "text",
        "response",
        "request",
        "fn",
        "title",
        "localstorage",
        "sessionstorage",
        "bottom",
        "top",
    }
)


def _failure(call: "Call", page: "Page", name: str, item: dict, index: int, timeout: float, exc: Exception) -> str:
    """A step Playwright gave up on, as a sentence: a selector that matches nothing is named as that, else
    what Playwright said, without the name of its own method."""
    value = item.get(name)
    head = f"browse: step {index} ({name} {json.dumps(value)})"
    if name in _SELECTOR_STEPS and isinstance(value, str) and value not in _WORDS and "://" not in value:
        try:
            found = call.locate(page, value).count()
        except Exception:  # noqa: BLE001 - the page went away or the selector does not parse: said below
            found = None
        if found == 0:
            return f"{head}: nothing on the page matches {value} within {round(timeout)} ms"
    # "Locator.click: Timeout …", "Locator.select_option: Error: strict mode violation: …"
    message = re.sub(r"^(?:[A-Z]\w*\.\w+: )?(?:Error: )?", "", str(exc).split("\n", 1)[0])
    return f"{head} failed: {message}"
