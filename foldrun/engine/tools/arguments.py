"""Arguments before tools: a call whose arguments do not parse or do not fit the tool's schema never
reaches the tool. The model gets one sentence naming the argument and what was wrong, and the loop goes
on; nothing counts toward a limit (the step checks before it counts)."""

from __future__ import annotations

from typing import Any

from ..errors import ToolError

# How the model client hands over arguments it could not read (a stream that ended mid-JSON), or JSON
# that was not an object.
UNPARSED = "_unparsed_arguments"
NOT_AN_OBJECT = "_value"

_KINDS: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}
_WORDS = {
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
    "null": "null",
}


def _json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _fits(value: Any, expected: str) -> bool:
    if expected not in _KINDS:
        return True  # a type this check does not know is the tool's to judge
    if isinstance(value, bool) and expected in ("integer", "number"):
        return False  # JSON true is not the number 1
    if expected == "integer" and isinstance(value, float):
        return value.is_integer()
    return isinstance(value, _KINDS[expected])


def cut_at(raw: str) -> tuple[str | None, bool]:
    """(the last top-level argument the broken JSON named, whether it broke off inside that argument's
    value rather than after it)."""
    depth, in_string, escaped = 0, False, False
    text: list[str] = []
    last_key: str | None = None
    candidate: str | None = None  # a top-level string that may turn out to be a key
    in_value = False
    for char in raw:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
                if depth == 1 and not in_value:
                    candidate = "".join(text)
            else:
                text.append(char)
            continue
        if char == '"':
            in_string, text = True, []
        elif char == ":" and depth == 1 and candidate is not None:
            last_key, candidate, in_value = candidate, None, True
        elif char == "," and depth == 1:
            in_value = False
        elif char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
    return last_key, in_value


def check_arguments(tool: Any, arguments: Any) -> dict:
    """The call's arguments when they fit `tool.input_schema`; else a ToolError with the one sentence."""
    name = tool.name
    if isinstance(arguments, dict) and set(arguments) == {UNPARSED}:
        key, inside = cut_at(str(arguments[UNPARSED]))
        where = (
            f"they break off {'in' if inside else 'after'} the argument `{key}`"
            if key
            else "they break off before the first argument"
        )
        raise ToolError(
            f"{name}: the arguments did not parse as JSON ({where}), so the call was not made — "
            f"send it again with the whole arguments"
        )
    if isinstance(arguments, dict) and set(arguments) == {NOT_AN_OBJECT}:
        raise ToolError(
            f"{name}: the arguments must be a JSON object, not {_WORDS[_json_kind(arguments[NOT_AN_OBJECT])]}"
        )
    if not isinstance(arguments, dict):
        raise ToolError(f"{name}: the arguments must be a JSON object")
    schema = tool.input_schema or {}
    props = schema.get("properties") or {}
    for key in schema.get("required") or []:
        if key not in arguments:
            raise ToolError(f"{name}: the argument `{key}` is required")
    if schema.get("additionalProperties") is False:
        extra = sorted(set(arguments) - set(props))
        misplaced = getattr(tool, "misplaced", None) or {}
        for key in extra:
            if key in misplaced:
                raise ToolError(misplaced[key])
        if extra:
            raise ToolError(f"{name}: unknown argument `{extra[0]}`; it takes {', '.join(props) or 'none'}")
    for key, value in arguments.items():
        spec = props.get(key)
        if not isinstance(spec, dict):
            continue
        expected = spec.get("type")
        allowed = [expected] if isinstance(expected, str) else [t for t in expected or [] if isinstance(t, str)]
        if allowed and not any(_fits(value, kind) for kind in allowed):
            words = " or ".join(_WORDS.get(kind, kind) for kind in allowed)
            raise ToolError(f"{name}: the argument `{key}` must be {words}, not {_WORDS[_json_kind(value)]}")
        if isinstance(spec.get("enum"), list) and value not in spec["enum"]:
            choices = ", ".join(str(c) for c in spec["enum"])
            raise ToolError(f"{name}: the argument `{key}` must be one of {choices}, not {value!r}")
    return arguments
