"""What a skill declares it takes and needs: `inputs:` and `grants:` in its SKILL.md frontmatter.

Pure Python: the CLI's `foldrun check` and the server read the same declaration. A skill with inputs is
offered as an MCP tool of its own (`skill_<name>`), its arguments typed from here; `grants:` names what the
skill needs the run to be allowed (`active_scan` means it sends active security probes, so its tool asks for
`confirm`).

    inputs:
      - {name: url, type: url, required: true, description: The page to check}
      - {name: depth, type: integer, default: 2}
      - {name: mode, type: string, enum: [quick, full]}
      - {name: password, type: secret}      # a vault reference (https://host#password), never the value
    grants: [network_capture]

    declaration_of(meta, path, line_of) -> (SkillDeclaration, [Finding])
    input_schema(declaration) -> JSON Schema of the inputs (flat properties, required)
    is_vault_reference(value) -> bool
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .findings import Finding

GRANTS = ("network_capture", "active_scan", "file_access")
INPUT_TYPES = ("string", "url", "integer", "number", "boolean", "string[]", "secret")
INPUT_KEYS = ("name", "type", "required", "description", "enum", "default")
INPUT_NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
# A vault reference names where a secret is kept (a host and the field), never the secret: https://host#password.
VAULT_REFERENCE_RE = re.compile(r"^https?://[A-Za-z0-9.-]+(:\d+)?(/[^\s#]*)?#[A-Za-z][A-Za-z0-9_.-]{0,63}$")
MAX_URL = 2048
# Arguments every skill tool has of its own: an input may not take these names.
RESERVED = ("options", "confirm")

_JSON_TYPES: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "url": {"type": "string", "maxLength": MAX_URL},
    "integer": {"type": "integer"},
    "number": {"type": "number"},
    "boolean": {"type": "boolean"},
    "string[]": {"type": "array", "items": {"type": "string"}},
    "secret": {"type": "string", "maxLength": 500},
}
_PYTHON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "url": (str,),
    "secret": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "string[]": (list,),
}


@dataclass(frozen=True)
class SkillInput:
    name: str
    type: str
    required: bool = False
    description: str = ""
    enum: tuple[Any, ...] | None = None
    default: Any = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "description": self.description,
        }
        if self.enum is not None:
            out["enum"] = list(self.enum)
        if self.default is not None:
            out["default"] = self.default
        return out


@dataclass(frozen=True)
class SkillDeclaration:
    inputs: tuple[SkillInput, ...] = ()
    grants: tuple[str, ...] = ()
    declared_inputs: bool = False  # `inputs:` is in the frontmatter (a skill without it is no tool)

    @property
    def active(self) -> bool:
        """The skill sends active security probes: its tool asks for confirm."""
        return "active_scan" in self.grants


LineOf = Callable[..., "int | None"]


def declaration_of(meta: dict[str, Any], path: str, line_at: LineOf) -> tuple[SkillDeclaration, list[Finding]]:
    """The declaration in a SKILL.md's frontmatter, and a finding for each bad part (file, line, field)."""
    findings: list[Finding] = []

    def bad(message: str, code: str, *keys: Any) -> None:
        findings.append(Finding(path, line_at(*keys) if keys else None, "error", message, code))

    inputs: list[SkillInput] = []
    raw_inputs = meta.get("inputs")
    if raw_inputs is not None and not isinstance(raw_inputs, list):
        bad("inputs: must be a list of inputs, each {name, type, …}.", "skill.inputs", "inputs")
        raw_inputs = []
    seen: set[str] = set()
    for index, raw in enumerate(raw_inputs or []):
        found = _input_of(raw, index, bad)
        if found is None:
            continue
        if found.name in seen:
            bad(f"inputs[{index}].name: {found.name} is declared twice.", "skill.inputs.name", "inputs", found.name)
            continue
        seen.add(found.name)
        inputs.append(found)
    grants: list[str] = []
    raw_grants = meta.get("grants")
    if raw_grants is not None and not isinstance(raw_grants, list):
        bad(f"grants: must be a list, from {', '.join(GRANTS)}.", "skill.grants", "grants")
        raw_grants = []
    for grant in raw_grants or []:
        if grant not in GRANTS:
            bad(
                f"grants: {str(grant)[:60]} is not a grant; the grants are {', '.join(GRANTS)}.",
                "skill.grants",
                "grants",
            )
        elif grant not in grants:
            grants.append(grant)
    return SkillDeclaration(tuple(inputs), tuple(grants), raw_inputs is not None), findings


def _input_of(raw: Any, index: int, bad: Callable[..., None]) -> SkillInput | None:
    where = f"inputs[{index}]"
    if not isinstance(raw, dict):
        bad(
            f"{where}: each input is a mapping {{name, type, required, description, enum, default}}.",
            "skill.inputs",
            "inputs",
        )
        return None
    name = raw.get("name")
    if not isinstance(name, str) or not INPUT_NAME_RE.match(name):
        bad(
            f"{where}.name: an input needs a name of letters, digits and _ that starts with a letter.",
            "skill.inputs.name",
            "inputs",
        )
        return None
    if name in RESERVED:
        bad(
            f"{where}.name: {name} is an argument every skill tool has; name the input otherwise.",
            "skill.inputs.name",
            "inputs",
            name,
        )
        return None
    unknown = [key for key in raw if key not in INPUT_KEYS]
    if unknown:
        bad(
            f"{where}.{unknown[0]}: not a field of an input; the fields are {', '.join(INPUT_KEYS)}.",
            "skill.inputs.field",
            "inputs",
            unknown[0],
        )
        return None
    kind = raw.get("type", "string")
    if kind not in INPUT_TYPES:
        bad(
            f"{where}.type: {str(kind)[:40]} is not an input type; the types are {', '.join(INPUT_TYPES)}.",
            "skill.inputs.type",
            "inputs",
            "type",
        )
        return None
    required = raw.get("required", False)
    if not isinstance(required, bool):
        bad(f"{where}.required: must be true or false.", "skill.inputs.required", "inputs", "required")
        return None
    description = raw.get("description", "")
    if not isinstance(description, str):
        bad(f"{where}.description: must be text.", "skill.inputs.description", "inputs", "description")
        return None
    enum = raw.get("enum")
    if enum is not None:
        if kind == "secret" or not isinstance(enum, list) or not enum or not all(_fits(kind, value) for value in enum):
            bad(
                f"{where}.enum: must be a non-empty list of {kind} values"
                + ("; a secret takes no enum." if kind == "secret" else "."),
                "skill.inputs.enum",
                "inputs",
                "enum",
            )
            return None
    default = raw.get("default")
    if default is not None:
        if kind == "secret":
            bad(
                f"{where}.default: a secret input takes no default (it would be a secret in the file).",
                "skill.inputs.default",
                "inputs",
                "default",
            )
            return None
        if not _fits(kind, default) or (enum is not None and default not in enum):
            bad(
                f"{where}.default: must be a {kind} value" + (" from its enum." if enum is not None else "."),
                "skill.inputs.default",
                "inputs",
                "default",
            )
            return None
    return SkillInput(name, kind, required, description.strip(), tuple(enum) if enum is not None else None, default)


def _fits(kind: str, value: Any) -> bool:
    if isinstance(value, bool) and kind not in ("boolean",):
        return False
    if kind == "string[]":
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, _PYTHON_TYPES[kind])


def property_schema(item: SkillInput) -> dict[str, Any]:
    schema = dict(_JSON_TYPES[item.type])
    words = item.description
    if item.type == "secret":
        words = (words + " " if words else "") + "A vault reference such as https://host#password, never the secret."
    elif item.type == "url":
        words = (words + " " if words else "") + "An http or https URL."
    if words:
        schema["description"] = words
    if item.enum is not None:
        schema["enum"] = list(item.enum)
    if item.default is not None:
        schema["default"] = item.default
    return schema


def input_schema(declaration: SkillDeclaration) -> dict[str, Any]:
    """The inputs as flat JSON Schema properties (the skill tool adds options and confirm)."""
    return {
        "properties": {item.name: property_schema(item) for item in declaration.inputs},
        "required": [item.name for item in declaration.inputs if item.required],
    }


def is_vault_reference(value: Any) -> bool:
    return isinstance(value, str) and bool(VAULT_REFERENCE_RE.match(value))
