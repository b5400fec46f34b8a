"""Secret values out of whatever a step keeps: the `Redactor` and the host as a step sees it."""

from __future__ import annotations

from typing import Any


class Redactor:
    """The step's secret values, and their removal from whatever the step saves.

    One mechanism for every text that leaves the step to be kept: trace data
    (through `RedactingHost`), the reply, the error and question lines, the
    outputs/ files and the memory/ and state/ writes (at the end of `run_step`).
    A value is replaced by `[secret NAME]`; values shorter than 4 characters
    are left (they would match everywhere)."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def text(self, text: str) -> str:
        for name, value in self.values.items():
            if value and len(value) >= 4 and value in text:
                text = text.replace(value, f"[secret {name}]")
        return text

    def bytes(self, content: bytes) -> bytes:
        for name, value in self.values.items():
            if value and len(value) >= 4:
                raw = value.encode("utf-8", "surrogatepass")
                if raw in content:
                    content = content.replace(raw, f"[secret {name}]".encode())
        return content

    def data(self, value: Any) -> Any:
        """A JSON-shaped value with every string (keys too) redacted."""
        if not self.values:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {self.text(k) if isinstance(k, str) else k: self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


class RedactingHost:
    """The host as a step sees it: every trace passes the step's `Redactor` on its way to be saved."""

    def __init__(self, host: Any, redactor: Redactor) -> None:
        self._host = host
        self.redactor = redactor  # the step's (engine/stepenv.py redacts with the same one)

    def trace(self, kind: str, data: dict) -> None:
        self._host.trace(kind, self.redactor.data(data))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._host, name)
