"""What `check` returns: findings, each one sentence about one place."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

Level = Literal["error", "warning"]


@dataclass(frozen=True, order=True)
class Finding:
    file: str
    line: int | None
    level: Level
    message: str
    code: str = ""

    def to_dict(self) -> dict:
        return asdict(self)

    def format(self) -> str:
        """The one-line form the CLI and the server both print."""
        where = f"{self.file}:{self.line}" if self.line else self.file
        return f"{where}: {self.level}: {self.message}"


def sort_findings(findings: list[Finding]) -> list[Finding]:
    return sorted(set(findings), key=lambda f: (f.file, f.line or 0, f.level, f.message))


class ContractError(Exception):
    """A file the contract cannot read at all; carries its finding."""

    def __init__(self, finding: Finding) -> None:
        super().__init__(finding.format())
        self.finding = finding
