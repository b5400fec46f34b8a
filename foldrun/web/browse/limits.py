"""Which engine a call runs on, and what it may ask of it — read from the one engine table.

spec/tools.md, "Engines": a call that asks an engine for something the table marks — is refused before a
browser opens, in the sentence `foldrun check` and the deploy say for the same pair in a `web.browse:` block
(`W.engine_refusal`), and `engine` and `browser` — on a call, a block or an identity — must agree
(`W.engine_disagreement`). What only a call can ask for (its mode, its steps, a trace, mocks) is added here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from foldrun.contract import web_engines as W

from ..errors import WebToolError
from .registry import MODES, STEPS

if TYPE_CHECKING:  # pragma: no cover
    from .call import Call

# Call arguments that are a row of the engine table by themselves.
_CALL_ROWS = ("trace", "har", "routes", "session", "video", "cpu_profile", "annotate", "visual")


def _steps_asking(steps: list) -> list[tuple[str, str]]:
    asked: list[tuple[str, str]] = []
    for item in steps if isinstance(steps, list) else []:
        if not isinstance(item, dict):
            continue
        for name in item:
            if name in STEPS:
                asked.append((STEPS[name].capability, f"the {name} step"))
        asked += _steps_asking(item.get("then") or []) + _steps_asking(item.get("else") or [])
    return asked


def asked_of_engine(call: "Call", args: dict, mode: str, steps: list) -> list[tuple[str, int]]:
    """(the engine table's row, the layer that asked: 0 the call, 1 its identity, 2 the block) for everything
    this call needs of its engine."""
    own = {k: v for k, v in args.items() if v not in (None, "")}
    asked = [(MODES[mode].capability, 0)] if mode in MODES else []
    for layer, settings in ((0, own), (1, call.identity), (2, call.block)):
        asked += [(row, layer) for row, _key in W.settings_capabilities(settings)]
    asked += [(key, 0) for key in _CALL_ROWS if args.get(key) not in (None, "", False, "false")]
    asked += [(row, 0) for row, _what in _steps_asking(steps)]
    return [(row, layer) for row, layer in asked if row in W.BROWSE_ENGINE_LIMITS]


def choose_engine(call: "Call", args: dict, mode: str, steps: list) -> str:
    """The engine the call runs on (the call's word beats the identity's, the identity's the block's), after
    each pair agrees and the table says it can do all the call asks. A refusal names the layer the way check
    does — `web.browse: …`, `web.browse.identities.NAME: …` — so the file's own pair reads the same at both."""
    wheres = ("browse", f"web.browse.identities.{args.get('identity')}", "web.browse")
    layers = (args, call.identity, call.block)
    for where, settings in zip(wheres, layers):
        refusal = W.engine_disagreement(where, settings.get("engine"), settings.get("browser"))
        if refusal:
            raise WebToolError(refusal)
    engine_layer, word = next(
        ((n, s.get(k)) for n, s in enumerate(layers) for k in ("browser", "engine") if s.get(k) not in (None, "")),
        (2, None),
    )
    engine = W.engine_name(word) if word is not None else W.DEFAULT_ENGINE
    if engine is None:
        raise WebToolError(f"browse: browser={word} is not an engine; the engines are {', '.join(W.ENGINES)}")
    for row, layer in asked_of_engine(call, args, mode, steps):
        if not W.engine_can(engine, row):
            raise WebToolError(f"{wheres[min(layer, engine_layer)]}: {W.engine_refusal(engine, row)}")
    return engine
