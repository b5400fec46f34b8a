"""The engine: runs one step (sandbox, prompt, model loop, tools, limits) and
checks `verify:`. A library, no Django: the Celery task and `foldrun run
--local` both call `run_step`.

The names below load `engine.step` on first use (PEP 562's module
`__getattr__`), so that a light module of the engine — `foldrun check`
reads `engine.needs` — does not pull in the model loop, the sandbox and the
tools with it. None of them is also a submodule's name.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__all__ = ["BudgetExceeded", "Host", "MissingSecret", "StepRequest", "StepResult", "run_step"]

if TYPE_CHECKING:
    from .step import BudgetExceeded, Host, MissingSecret, StepRequest, StepResult, run_step  # noqa: F401


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.step"), name)
    globals()[name] = value
    return value
