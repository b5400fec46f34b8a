"""One BM25 engine: `search_files` over knowledge, memory, state and storage, and `web action=answer`.

`Bm25` is bm25s (sparse BM25 over its own tokenizer), keyed by a string. `SearchIndex` keeps the step's files in one: built on the first
query, then refreshed only when the step may have changed something
(`touch()` — the engine calls it after every tool call that is not a read) by
one stat pass that re-reads only the files whose size or mtime moved. Nothing
is persisted, so the index can never be stale across a deploy or a hand edit.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

PLACES = ("knowledge", "memory", "state", "storage")
MAX_FILE_BYTES = 2_000_000
SKIPPED = {"index.md", "log.md"}


class Bm25:
    """Documents by key, ranked by BM25 (bm25s: its tokenizer, English stopwords, sparse scoring).

    bm25s scores a query over a sparse matrix in microseconds, where FTS5's bm25()
    ranks every matching row in SQL (most rows, for common words). Its index is
    built whole, so a change marks it dirty and the next query rebuilds it from
    the bodies kept here — nothing is read from disk again.
    """

    def __init__(self) -> None:
        self.bodies: dict[str, str] = {}
        self._keys: list[str] = []
        self._retriever = None
        self._dirty = False
        self.builds = 0

    def __len__(self) -> int:
        return len(self.bodies)

    def put_many(self, items: list[tuple[str, str]]) -> None:
        for key, body in items:
            self.bodies[key] = body
        self._dirty = self._dirty or bool(items)

    def drop(self, key: str) -> None:
        if self.bodies.pop(key, None) is not None:
            self._dirty = True

    def _build(self) -> None:
        import bm25s

        self._keys = list(self.bodies)
        self._retriever = None
        if self._keys:
            tokens = bm25s.tokenize([self.bodies[k] for k in self._keys], stopwords="en", show_progress=False)
            retriever = bm25s.BM25()
            retriever.index(tokens, show_progress=False)
            self._retriever = retriever
        self._dirty = False
        self.builds += 1

    def query(self, text: str, limit: int = 10, *, snippet_tokens: int = 12) -> list[dict]:
        """[{key, score, snippet}], best first; any word of `text` may match."""
        if self._dirty or (self._retriever is None and self.bodies):
            self._build()
        terms = [t for t in _WORD.findall(text.lower()) if t not in _STOP]
        if self._retriever is None or not terms:
            return []
        known = self._retriever.vocab_dict
        terms = [t for t in terms if t in known]
        if not terms:
            return []
        found, scores = self._retriever.retrieve(
            [list(dict.fromkeys(terms))], k=min(max(1, limit), len(self._keys)), show_progress=False
        )
        out = []
        for index, score in zip(found[0], scores[0]):
            if score <= 0:
                continue
            key = self._keys[int(index)]
            out.append(
                {"key": key, "score": float(score), "snippet": _snippet(self.bodies[key], set(terms), snippet_tokens)}
            )
        return out

    def body(self, key: str) -> str:
        return self.bodies.get(key, "")


_WORD = re.compile(r"(?u)\b\w\w+\b")
try:
    from bm25s.stopwords import STOPWORDS_EN as _STOPWORDS
except ImportError:  # pragma: no cover
    _STOPWORDS = ()
_STOP = frozenset(_STOPWORDS)


_NONSPACE = re.compile(r"\S+")
_PUNCT = ".,;:!?()[]\"'"
_ASCII_SPACE = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"  # what str.split() splits an ASCII text on


def _snippet(body: str, terms: set[str], size: int) -> str:
    """About `size` words around the first matching word, each match in [brackets].

    A word matches when, its edge punctuation stripped, it is one of `terms` in
    lower case. Only the words up to the match and the window are split: a hit's
    body is read once per query, and splitting all of it was a quarter of a
    query's time.
    """
    start = 0
    if body.isascii():  # lower() keeps every offset: jump to the word holding the first occurrence of any term
        lowered = body.lower()
        found = [at for at in map(lowered.find, terms) if at >= 0]
        if found:
            first = min(found)
            start = max(body.rfind(space, 0, first) for space in _ASCII_SPACE) + 1
    at = 0
    for word in _NONSPACE.finditer(body, start):
        if word.group().strip(_PUNCT).lower() in terms:
            at = word.start()
            break
    back = size // 3
    before = body[:at].rsplit(None, back) if at else []
    lead = len(before) > back
    words = before[1:] if lead else before
    after = body[at:].split(None, max(0, size - len(words)))
    trail = len(after) > size - len(words)
    words += after[: size - len(words)]
    shown = [f"[{word}]" if word.strip(_PUNCT).lower() in terms else word for word in words]
    return ("…" if lead else "") + " ".join(shown) + ("…" if trail else "")


def _roots(root: Path, agent: str) -> list[Path]:
    roots = [root / "agents" / agent / p for p in PLACES]
    roots += [root / p for p in PLACES]
    roots.append(root / "desk" / "memory")  # the desk's shared memory (a step's memory/ is its agent's own)
    roots += [root / "library" / p for p in PLACES]
    return roots


def _files(base: Path, root: Path):  # noqa: ANN202 - yields (rel, full, size, mtime_ns)
    prefix = os.path.join(
        str(root), ""
    )  # entries' paths as strings: a Path and relative_to per file cost more than the stat
    stack = [str(base)]
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
                stack.append(entry.path)
            elif entry.name not in SKIPPED:
                try:
                    stat = entry.stat()
                except OSError:
                    continue
                yield entry.path[len(prefix) :], entry.path, stat.st_size, stat.st_mtime_ns


class SearchIndex:
    def __init__(self, root: Path, agent: str) -> None:
        self.root = root
        self.agent = agent
        self.engine = Bm25()
        self.stamps: dict[str, tuple[int, int]] = {}
        self.reads = 0  # files (re-)read, for tests of the refresh
        self.passes = 0  # stat passes made
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
