"""The engine: runs one step (sandbox, prompt, model loop, tools, limits) and
checks `verify:`. A library, no Django: the Celery task and `foldrun run
--local` both call `run_step`."""
from .step import BudgetExceeded, Host, MissingSecret, StepRequest, StepResult, run_step

__all__ = ["BudgetExceeded", "Host", "MissingSecret", "StepRequest", "StepResult", "run_step"]
