"""One BM25 engine: `search_files` over knowledge, memory, state and storage, and `web action=answer`.

`Bm25` is SQLite FTS5 in memory (its own bm25() ranking and snippets), keyed by
a string with a rowid map, so replacing or dropping one document never scans
the table. `SearchIndex` keeps the step's files in one: built on the first
query, then refreshed only when the step may have changed something
(`touch()` — the engine calls it after every tool call that is not a read) by
one stat pass that re-reads only the files whose size or mtime moved. Nothing
is persisted, so the index can never be stale across a deploy or a hand edit.
"""
from __future__ import annotations

import os
import re
import sqlite3
from pathlib import Path

PLACES = ("knowledge", "memory", "state", "storage")
MAX_FILE_BYTES = 2_000_000
SKIPPED = {"index.md", "log.md"}


class Bm25:
    """Documents by key, ranked by BM25 (FTS5 `unicode61`, diacritics folded)."""

    def __init__(self) -> None:
        self.db = sqlite3.connect(":memory:", check_same_thread=False)
        self.db.execute("CREATE VIRTUAL TABLE docs USING fts5(body, tokenize='unicode61 remove_diacritics 2')")
        self.rowids: dict[str, int] = {}
        self.keys: dict[int, str] = {}
        self._next = 1

    def __len__(self) -> int:
        return len(self.rowids)

    def put_many(self, items: list[tuple[str, str]]) -> None:
        rows = []
        for key, body in items:
            old = self.rowids.pop(key, None)
            if old is not None:
                self.db.execute("DELETE FROM docs WHERE rowid = ?", (old,))
                del self.keys[old]
            rowid, self._next = self._next, self._next + 1
            self.rowids[key], self.keys[rowid] = rowid, key
            rows.append((rowid, body))
        with self.db:
            self.db.executemany("INSERT INTO docs(rowid, body) VALUES (?, ?)", rows)

    def drop(self, key: str) -> None:
        old = self.rowids.pop(key, None)
        if old is not None:
            self.db.execute("DELETE FROM docs WHERE rowid = ?", (old,))
            del self.keys[old]

    def query(self, text: str, limit: int = 10, *, snippet_tokens: int = 12) -> list[dict]:
        """[{key, score, snippet}], best first; every word of `text` may match (no FTS syntax passes through)."""
        terms = re.findall(r"\w+", text, flags=re.UNICODE)
        if not terms or not self.rowids:
            return []
        match = " OR ".join('"' + t.replace('"', "") + '"' for t in dict.fromkeys(terms))
        rows = self.db.execute(
            "SELECT rowid, bm25(docs) AS score, snippet(docs, 0, '[', ']', '…', ?) FROM docs WHERE docs MATCH ? "
            "ORDER BY score LIMIT ?", (snippet_tokens, match, max(1, limit))).fetchall()
        return [{"key": self.keys[r], "score": -s, "snippet": snip.replace("\n", " ")} for r, s, snip in rows]

    def body(self, key: str) -> str:
        row = self.db.execute("SELECT body FROM docs WHERE rowid = ?", (self.rowids[key],)).fetchone()
        return row[0] if row else ""


def _roots(root: Path, agent: str) -> list[Path]:
    roots = [root / "agents" / agent / p for p in PLACES]
    roots += [root / p for p in PLACES]
    roots += [root / "library" / p for p in PLACES]
    return roots


def _files(base: Path, root: Path):  # noqa: ANN202 - yields (rel, full, size, mtime_ns)
    stack = [base]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            if entry.is_symlink():
                continue
            if entry.is_dir():
                stack.append(Path(entry.path))
            elif entry.name not in SKIPPED:
                try:
                    stat = entry.stat()
                except OSError:
                    continue
                yield Path(entry.path).relative_to(root).as_posix(), entry.path, stat.st_size, stat.st_mtime_ns


class SearchIndex:
    def __init__(self, root: Path, agent: str) -> None:
        self.root = root
        self.agent = agent
        self.engine = Bm25()
        self.stamps: dict[str, tuple[int, int]] = {}
        self.reads = 0     # files (re-)read, for tests of the refresh
        self.passes = 0    # stat passes made
        self._stale = True

    def touch(self) -> None:
        """Something may have changed the step's files: the next query makes one stat pass first."""
        self._stale = True

    def refresh(self) -> None:
        self.passes += 1
        seen: set[str] = set()
        changed: list[tuple[str, str]] = []
        for base in _roots(self.root, self.agent):
            if not base.is_dir():
                continue
            for rel, full, size, mtime in _files(base, self.root):
                seen.add(rel)
                stamp = (size, mtime)
                if self.stamps.get(rel) == stamp:
                    continue
                if size > MAX_FILE_BYTES:
                    self.engine.drop(rel)
                    self.stamps[rel] = stamp
                    continue
                try:
                    with open(full, encoding="utf-8") as handle:
                        body = handle.read()
                except (UnicodeDecodeError, OSError):
                    self.engine.drop(rel)
                    continue
                self.reads += 1
                changed.append((rel, body))
                self.stamps[rel] = stamp
        if changed:
            self.engine.put_many(changed)
        for gone in set(self.stamps) - seen:
            self.engine.drop(gone)
            del self.stamps[gone]
        self._stale = False

    def query(self, text: str, limit: int = 10) -> list[dict]:
        if self._stale:
            self.refresh()
        hits = self.engine.query(text, max(1, min(limit, 50)))
        return [{"path": h["key"], "score": h["score"], "snippet": h["snippet"]} for h in hits]
