"""The one error the `web` tool raises: its message is what the model reads."""

from __future__ import annotations


class WebToolError(Exception):
    """A failure the model sees as an error result; the step's loop goes on."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message
