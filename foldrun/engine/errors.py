"""The engine's exceptions, below every other engine module (tools, host, step all raise them)."""

from __future__ import annotations


class ToolError(Exception):
    """A failure the model sees as an error result; the loop goes on."""


class Park(Exception):
    """The step stops and the run parks (the `ask` tool)."""

    def __init__(self, question: str) -> None:
        super().__init__(question)
        self.question = question


class MissingSecret(Exception):
    """A secret the step needs and cannot have. `reason` is the sentence when the
    vault holds it but could not produce it (undecryptable, a refused OAuth refresh)."""

    def __init__(self, name: str, reason: str | None = None) -> None:
        super().__init__(name)
        self.name = name
        self.reason = reason


class BudgetExceeded(Exception):
    """The run's `budget:` is spent; no further model or paid call is made."""


class StepFailed(Exception):
    """The step cannot go on; the message is its error line."""


class PodLost(Exception):
    """The account's browser pod went mid-step and did not come back (the spec's "Slim steps and a lost pod"):
    the try ends — re-run with a browser in the step when the step had only read, failed when it had written.
    The message is where the pod went (`lost — …`); `reached` is False when the call never got to the pod."""

    def __init__(self, message: str, reached: bool = True) -> None:
        super().__init__(message)
        self.reached = reached
