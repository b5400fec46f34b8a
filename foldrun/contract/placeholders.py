"""The `${NAME}` placeholder grammar: how a file names a secret whose value is
filled in later (an http tool's headers and query, an MCP server's env, a
provider's `key:`, a browse `headers:` block, what a proxied script sends).

One grammar for the contract and for every place that fills one in.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def placeholder_names(text: object) -> list[str]:
    """Every NAME in `text`, in order, each once."""
    return list(dict.fromkeys(PLACEHOLDER.findall(str(text or ""))))


def fill_secrets(text: object, values: Mapping[str, str], error: type[Exception]) -> str:
    """`text` with each `${NAME}` filled from `values`; a name a step was not given raises `error` saying so."""

    def value(name: str) -> str:
        if name not in values:
            raise error(f"secret {name} is not available to this step")
        return values[name]

    return fill_placeholders(text, value)


def fill_placeholders(text: object, value: Callable[[str], str] | Mapping[str, str]) -> str:
    """`text` with each `${NAME}` replaced by `value(NAME)` (or `value[NAME]`; a KeyError propagates)."""
    look = value.__getitem__ if isinstance(value, Mapping) else value
    return PLACEHOLDER.sub(lambda match: look(match.group(1)), str(text))
