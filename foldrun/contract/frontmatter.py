"""Splitting a markdown file into YAML frontmatter and body, with line numbers.

Line numbers are 1-based and count from the top of the file, so a finding
points at the line a person sees in their editor.

    split_frontmatter(text, path, required=True) -> Parsed
    Parsed.meta / .body / .body_line / .line_of(key) / .line_in(parent, key)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from .findings import ContractError, Finding

try:  # the C loader is several times faster; fall back when libyaml is absent
    from yaml import CSafeLoader as _Loader
except ImportError:  # pragma: no cover
    from yaml import SafeLoader as _Loader  # type: ignore[assignment]


def load_yaml(source: str) -> Any:
    """yaml.safe_load with the C loader when there is one."""
    return yaml.load(source, Loader=_Loader)


@dataclass
class Parsed:
    meta: dict[str, Any]
    body: str
    body_line: int  # the file line the body starts on
    key_lines: dict[str, int] = field(default_factory=dict)  # top-level key -> file line
    has_frontmatter: bool = True
    lines: list[str] = field(default_factory=list)  # the frontmatter's own lines (file line = index + 2)

    def line_of(self, key: str) -> int | None:
        return self.key_lines.get(key)

    def line_at(self, *keys: str) -> int | None:
        """The file line of a nested key, `line_at("mcpServers", "linear", "headers",
        "Authorization")`: each key is looked for at or after the line of the one
        before it, inside the top-level key's block. Falls back to the deepest
        line found."""
        if not keys:
            return None
        line = self.key_lines.get(keys[0])
        if line is None:
            return None
        for key in keys[1:]:
            pattern = re.compile(r"(^|[\s{,])['\"]?" + re.escape(str(key)) + r"['\"]?\s*:")
            index = line - 2
            first = self.lines[index] if 0 <= index < len(self.lines) else ""
            # On the line already found, only text after its own key counts.
            rest = first.split(":", 1)[1] if ":" in first else ""
            if pattern.search(rest):
                continue
            for index in range(line - 1, len(self.lines)):
                raw = self.lines[index]
                if raw and not raw[0].isspace() and not raw.startswith("#"):
                    return line
                if pattern.search(raw):
                    line = index + 2
                    break
            else:
                return line
        return line

    def line_in(self, parent: str, key: str) -> int | None:
        """The file line of `key` nested under top-level `parent` (block or
        inline mapping); the parent's line when it cannot be told apart."""
        start = self.key_lines.get(parent)
        if start is None:
            return None
        pattern = re.compile(r"(^|[\s{,])['\"]?" + re.escape(str(key)) + r"['\"]?\s*:")
        first = self.lines[start - 2] if 0 <= start - 2 < len(self.lines) else ""
        if pattern.search(first.split(":", 1)[1] if ":" in first else ""):
            return start
        for index in range(start - 1, len(self.lines)):
            raw = self.lines[index]
            if raw and not raw[0].isspace() and not raw.startswith("#"):
                break
            if pattern.search(raw):
                return index + 2
        return start


def split_frontmatter(text: str, path: str, *, required: bool = True) -> Parsed:
    """Parse `---` fenced YAML at the top of `text`.

    Raises ContractError naming the file, the line and the parser's own words
    when the YAML is malformed, or when frontmatter is required and missing.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        if required:
            raise ContractError(
                Finding(
                    path,
                    1,
                    "error",
                    "has no frontmatter; it must start with a line of three dashes (---).",
                    "frontmatter.missing",
                )
            )
        return Parsed({}, text, 1, {}, has_frontmatter=False)
    end = None
    for index in range(1, len(lines)):
        stripped = lines[index].rstrip()
        if stripped == "---" or stripped == "...":
            end = index
            break
    if end is None:
        raise ContractError(
            Finding(
                path,
                1,
                "error",
                "frontmatter is never closed; add a line of three dashes (---) after it.",
                "frontmatter.unclosed",
            )
        )
    front = lines[1:end]
    source = "\n".join(front)
    try:
        meta = load_yaml(source)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        line = (mark.line + 2) if mark is not None else 1
        if line > end:
            # The parser ran off the end (an unclosed bracket or quote): point
            # at where the unfinished thing started, else the last line.
            context_mark = getattr(exc, "context_mark", None)
            line = context_mark.line + 2 if context_mark is not None and context_mark.line + 2 <= end else max(end, 2)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        context = getattr(exc, "context", None)
        words = f"{context}, {problem}" if context and problem and context != problem else problem
        raise ContractError(
            Finding(path, line, "error", f"the YAML frontmatter is malformed: {words}.", "yaml.malformed")
        ) from None
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise ContractError(
            Finding(path, 2, "error", "the frontmatter must be a mapping of keys to values.", "frontmatter.not_mapping")
        )
    key_lines: dict[str, int] = {}
    for offset, raw in enumerate(front):
        if raw and not raw[0].isspace() and raw[0] != "#" and ":" in raw:
            key = raw.split(":", 1)[0].strip().strip("'\"")
            if key not in key_lines:
                key_lines[key] = offset + 2
    body = "\n".join(lines[end + 1 :])
    return Parsed({str(k): v for k, v in meta.items()}, body, end + 2, key_lines, True, front)
