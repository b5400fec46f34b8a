"""Superseded by generated.py (kept so old imports keep working).

`render_index`, `render_log`, `LogEntry`, `concept_root` and `is_generated`
live in foldrun.contract.generated; use those.
"""
from __future__ import annotations

from .desk import GENERATED_NAMES
from .generated import LogEntry, concept_root, generated_edit_finding, is_generated, render_index, render_log

INDEX_NAME, LOG_NAME = GENERATED_NAMES


def is_reserved(path: str) -> bool:
    """Any index.md / log.md under a concept directory: the top ones are
    generated, and a nested one would read as if it were."""
    return concept_root(path) is not None and path.rsplit("/", 1)[-1] in GENERATED_NAMES


def is_concept(path: str) -> bool:
    return concept_root(path) is not None and path.endswith(".md") and not is_reserved(path)


__all__ = ["INDEX_NAME", "LOG_NAME", "LogEntry", "concept_root", "generated_edit_finding", "is_concept", "is_generated",
           "is_reserved", "render_index", "render_log"]
