"""What the CLI prints: aligned tables for people, JSON for scripts.

Results go to stdout; errors, notes and progress to stderr, so
`foldrun workspaces --json | jq` always reads clean JSON. Progress lines and
colour appear only on a terminal.
"""

from __future__ import annotations

import json
import sys
import time
from typing import Any, Callable, Iterable, Sequence, TextIO

Column = tuple[str, str] | tuple[str, str, Callable[[Any], str]]


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_cell(v) for v in value) or "-"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    text = str(value)
    return " ".join(text.split()) if "\n" in text else text


def short_time(value: Any) -> str:
    """`2026-11-30T07:05:49.123456Z` → `2026-11-30 07:05`."""
    if not value:
        return "-"
    text = str(value)
    if len(text) >= 16 and text[10] in "T ":
        return text[:10] + " " + text[11:16]
    return text


def table_lines(rows: Sequence[dict], columns: Sequence[Column]) -> list[str]:
    """Rows as aligned lines under a header; the last column is not padded."""
    headers = [c[1] for c in columns]
    body = []
    for row in rows:
        cells = []
        for column in columns:
            key = column[0]
            value = row.get(key) if isinstance(row, dict) else None
            cells.append(column[2](value) if len(column) > 2 else _cell(value))  # type: ignore[misc]
        body.append(cells)
    widths = [max([len(h)] + [len(r[i]) for r in body]) for i, h in enumerate(headers)]

    def line(cells: list[str]) -> str:
        padded = [c.ljust(widths[i]) for i, c in enumerate(cells[:-1])] + [cells[-1]]
        return "  ".join(padded).rstrip()

    return [line(headers)] + [line(cells) for cells in body]


class Output:
    """Printing for one command: `json` is set by the global `--json`."""

    def __init__(self, *, json_mode: bool = False, stdout: TextIO | None = None, stderr: TextIO | None = None) -> None:
        self.json_mode = json_mode
        self._stdout = stdout
        self._stderr = stderr
        self._progress_shown = False
        self._progress_at = 0.0

    @property
    def stdout(self) -> TextIO:
        return self._stdout or sys.stdout

    @property
    def stderr(self) -> TextIO:
        return self._stderr or sys.stderr

    @property
    def is_tty(self) -> bool:
        return _isatty(self.stdout)

    @property
    def err_is_tty(self) -> bool:
        return _isatty(self.stderr)

    # results -----------------------------------------------------------
    def line(self, text: str = "") -> None:
        self.clear_progress()
        print(text, file=self.stdout)

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    def json(self, data: Any) -> None:
        self.clear_progress()
        print(json.dumps(data, indent=2, sort_keys=False, default=str), file=self.stdout)

    def table(self, rows: Sequence[dict], columns: Sequence[Column], *, empty: str = "") -> None:
        """A listing: JSON of the rows as given under `--json`, else a table."""
        if self.json_mode:
            self.json(list(rows))
            return
        if not rows and empty:
            self.line(empty)
            return
        self.lines(table_lines(rows, columns))

    def result(self, data: Any, text: str | Iterable[str]) -> None:
        """One answer: `data` as JSON under `--json`, else the sentence(s)."""
        if self.json_mode:
            self.json(data)
        elif isinstance(text, str):
            self.line(text)
        else:
            self.lines(text)

    # notes and errors --------------------------------------------------
    def note(self, text: str) -> None:
        """A remark for people (stderr, so it never mixes into --json)."""
        self.clear_progress()
        print(text, file=self.stderr)

    def error(self, text: str) -> None:
        self.clear_progress()
        print(text, file=self.stderr)

    # progress ----------------------------------------------------------
    def progress(self, text: str, *, force: bool = False) -> None:
        """One updating line on stderr, only on a terminal; at most ~10 a second."""
        if not self.err_is_tty:
            return
        now = time.monotonic()
        if not force and now - self._progress_at < 0.1:
            return
        self._progress_at = now
        self.stderr.write("\r\x1b[2K" + text)
        self.stderr.flush()
        self._progress_shown = True

    def clear_progress(self) -> None:
        if self._progress_shown:
            self.stderr.write("\r\x1b[2K")
            self.stderr.flush()
            self._progress_shown = False

    # colour ------------------------------------------------------------
    def colour(self, text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if self.is_tty else text


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
