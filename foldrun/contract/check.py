"""`check`: every rule over a desk, returning findings.

Rules register with `@rule`. Each takes the Desk and a Context and yields
Findings. `mode` is "check" (the CLI, the server's check endpoint) or
"deploy" (where some errors are only warnings — the rule decides).

    check(desk, mode="check", platform={"chromium_major": N}) -> [Finding]
    check_files({path: bytes}, library=…, gallery=…, mode=…) -> [Finding]   (the server, on a push)
    check_folder(path, mode="check") -> [Finding]                            (the CLI, offline)
    format_findings(findings) -> str                                          (what both print)

check_folder and check_files run the same byte checks (payload.check_payload)
and then the same rules, so a laptop and the server print the same lines.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Mapping

from .desk import Desk
from .findings import Finding, sort_findings
from .paths import is_ignored, walk_folder
from .payload import MAX_FILE_BYTES, check_payload, decode

RuleFn = Callable[["Desk", "Context"], Iterable[Finding]]
_RULES: list[tuple[str, RuleFn]] = []


@dataclass(frozen=True)
class Context:
    mode: str = "check"  # "check" | "deploy"
    # What the platform runs, when known (platform.platform_from_versions):
    # {"chromium_major": 156, "chrome_major": 157}. Empty offline with no
    # server; rules that compare against it say nothing then.
    platform: Mapping[str, int] = field(default_factory=dict, compare=False, hash=False)

    def level(self, strict: bool = True) -> str:
        """'error' when checking, 'warning' on deploy — for rules the spec
        says `check` fails on but a deploy only warns about."""
        return "error" if self.mode == "check" or not strict else "warning"


def rule(name: str) -> Callable[[RuleFn], RuleFn]:
    def register(fn: RuleFn) -> RuleFn:
        _RULES.append((name, fn))
        return fn

    return register


def _load_rules() -> None:
    # A registry loader: importing the rule modules registers their rules. By name, so
    # check (which the rules import for `rule`) does not import them back.
    importlib.import_module(f"{__package__}.rules").load_all()


def rule_names() -> list[str]:
    _load_rules()
    return [name for name, _fn in _RULES]


def check(desk: Desk, *, mode: str = "check", platform: Mapping[str, int] | None = None) -> list[Finding]:
    """Every rule over `desk`. `platform` is what the platform runs
    ({"chromium_major": N}; see platform.py), when known."""
    if mode not in ("check", "deploy"):
        raise ValueError(f"mode must be 'check' or 'deploy', not {mode!r}")
    _load_rules()
    context = Context(mode=mode, platform=dict(platform or {}))
    findings: list[Finding] = []
    for _name, fn in _RULES:
        findings.extend(fn(desk, context))
    return sort_findings(findings)


def has_errors(findings: list[Finding]) -> bool:
    return any(f.level == "error" for f in findings)


def check_files(
    files: dict[str, bytes],
    *,
    library: dict[str, str] | None = None,
    gallery: dict[str, str] | None = None,
    mode: str = "check",
    max_bytes: int | None = None,
    platform: Mapping[str, int] | None = None,
) -> list[Finding]:
    """Byte checks on each file, then every rule over the desk they make."""
    limit = max_bytes or MAX_FILE_BYTES
    findings: list[Finding] = []
    texts: dict[str, str] = {}
    for path, data in files.items():
        finding = check_payload(path, data, limit)
        if finding is not None:
            findings.append(finding)
            if finding.code == "file.too_large":
                continue
        texts[path] = decode(data)
    desk = Desk(files=texts, library=library or {}, gallery=gallery or {})
    return sort_findings(findings + check(desk, mode=mode, platform=platform))


def read_folder_bytes(root: Path) -> dict[str, bytes]:
    """Every file of a desk folder as bytes (what a push would send)."""
    return {str(relative): path.read_bytes() for relative, path in walk_folder(root) if not is_ignored(relative)}


def check_folder(
    path: str | Path,
    *,
    mode: str = "check",
    library: dict[str, str] | None = None,
    gallery: dict[str, str] | None = None,
    platform: Mapping[str, int] | None = None,
) -> list[Finding]:
    """`foldrun check` on a laptop: the folder's files through check_files."""
    return check_files(read_folder_bytes(Path(path)), library=library, gallery=gallery, mode=mode, platform=platform)


def format_findings(findings: list[Finding]) -> str:
    """One line per finding, then a count: what the CLI prints and the server returns."""
    errors = sum(1 for f in findings if f.level == "error")
    warnings = sum(1 for f in findings if f.level == "warning")
    if not findings:
        return "no problems found."
    lines = [f.format() for f in sort_findings(findings)]
    counts = [f"{errors} error{'s' if errors != 1 else ''}"] if errors else []
    if warnings:
        counts.append(f"{warnings} warning{'s' if warnings != 1 else ''}")
    lines.append(", ".join(counts) + ".")
    return "\n".join(lines)
