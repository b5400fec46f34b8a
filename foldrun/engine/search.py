"""`search_files`: ranked BM25 over knowledge, memory, state and storage.

SQLite FTS5 in memory, built inside the step on the first call and refreshed
by mtime afterwards (only changed files are re-read); nothing is persisted,
so the index can never be stale across a deploy or a hand edit.
"""
from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

PLACES = ("knowledge", "memory", "state", "storage")
MAX_FILE_BYTES = 2_000_000


def _roots(root: Path, agent: str) -> list[Path]:
    roots = [root / "agents" / agent / p for p in PLACES]
    roots += [root / p for p in PLACES]
    roots += [root / "library" / p for p in PLACES]
    return roots


class SearchIndex:
    def __init__(self, root: Path, agent: str) -> None:
        self.root = root
        self.agent = agent
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(path UNINDEXED, body, tokenize='unicode61')")
        self.mtimes: dict[str, float] = {}
        self.reads = 0  # files (re-)read, for tests of the mtime refresh

    def refresh(self) -> None:
        seen: set[str] = set()
        for base in _roots(self.root, self.agent):
            if not base.is_dir():
                continue
            for dirpath, _, filenames in os.walk(base):
                for name in filenames:
                    full = Path(dirpath) / name
                    if full.is_symlink() or name in {"index.md", "log.md"}:
                        continue
                    rel = full.relative_to(self.root).as_posix()
                    seen.add(rel)
                    try:
                        stat = full.stat()
                    except OSError:
                        continue
                    if self.mtimes.get(rel) == stat.st_mtime_ns or stat.st_size > MAX_FILE_BYTES:
                        continue
                    try:
                        body = full.read_text(encoding="utf-8")
                    except (UnicodeDecodeError, OSError):
                        continue
                    self.reads += 1
                    self.db.execute("DELETE FROM docs WHERE path = ?", (rel,))
                    self.db.execute("INSERT INTO docs(path, body) VALUES (?, ?)", (rel, body))
                    self.mtimes[rel] = stat.st_mtime_ns
        for gone in set(self.mtimes) - seen:
            self.db.execute("DELETE FROM docs WHERE path = ?", (gone,))
            del self.mtimes[gone]

    def query(self, text: str, limit: int = 10) -> list[dict]:
        self.refresh()
        terms = re.findall(r"\w+", text, flags=re.UNICODE)
        if not terms:
            return []
        # Each term quoted (no FTS syntax from the model), any of them may match; BM25 ranks.
        match = " OR ".join('"' + t.replace('"', "") + '"' for t in terms)
        rows = self.db.execute(
            "SELECT path, bm25(docs) AS score, snippet(docs, 1, '[', ']', '…', 12) FROM docs WHERE docs MATCH ? "
            "ORDER BY score LIMIT ?",
            (match, max(1, min(limit, 50))),
        ).fetchall()
        return [{"path": p, "score": -s, "snippet": snip.replace("\n", " ")} for p, s, snip in rows]
