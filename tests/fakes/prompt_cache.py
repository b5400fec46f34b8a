"""Anthropic's prompt cache, as its documentation describes it, for the loopback provider.

A request's prefix runs tools, then system, then messages, block by block. Each block that carries
`cache_control` is a breakpoint: the prefix up to it is looked up, and the longest one found is read from
the cache (`cache_read_input_tokens`); every breakpoint after it whose prefix is long enough to cache is
written (`cache_creation_input_tokens`, the tokens from the read's end to the last breakpoint); the tokens
after the last breakpoint are `input_tokens`. A prefix shorter than `min_tokens` (1,024 for Sonnet and Opus)
is never cached. An entry lives `ttl` seconds from its last use (five minutes). Tokens are counted as
characters / 4 of each block's JSON, which is near enough for a ratio.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class CacheUsage:
    input: int
    cache_read: int
    cache_write: int


def tokens(value: Any) -> int:
    return max(1, (len(json.dumps(value, sort_keys=True)) + 3) // 4)


def _blocks(body: dict) -> list[tuple[Any, bool]]:
    """(the block without its cache_control, whether it carried one), in prefix order."""
    out: list[tuple[Any, bool]] = []

    def add(block: Any) -> None:
        if isinstance(block, dict):
            marked = "cache_control" in block
            out.append(({k: v for k, v in block.items() if k != "cache_control"}, marked))
        else:
            out.append((block, False))

    for tool in body.get("tools") or []:
        add(tool)
    system = body.get("system")
    for block in [{"type": "text", "text": system}] if isinstance(system, str) else system or []:
        add(block)
    for message in body.get("messages") or []:
        out.append(({"role": message.get("role")}, False))  # the turn's boundary is part of the prefix
        content = message.get("content")
        for block in [{"type": "text", "text": content}] if isinstance(content, str) else content or []:
            add(block)
    return out


class PromptCache:
    def __init__(self, *, min_tokens: int = 1024, ttl: float = 300.0) -> None:
        self.min_tokens = min_tokens
        self.ttl = ttl
        self.entries: dict[str, float] = {}  # prefix hash -> when it was last written or read
        self._lock = threading.Lock()

    def use(self, body: dict) -> CacheUsage:
        """What a request reads, writes and pays in full; the cache updated as the provider would."""
        digest = hashlib.sha256()
        prefixes: list[tuple[str, int]] = []  # (hash, tokens so far) at each breakpoint
        total = 0
        for block, marked in _blocks(body):
            digest.update(json.dumps(block, sort_keys=True).encode())
            total += tokens(block)
            if marked:
                prefixes.append((digest.hexdigest(), total))
        now = time.monotonic()
        with self._lock:
            self.entries = {k: t for k, t in self.entries.items() if now - t <= self.ttl}
            read = 0
            for key, size in prefixes:
                if key in self.entries:
                    read = max(read, size)
                    self.entries[key] = now
            written_to = read
            for key, size in prefixes:
                if size > read and size >= self.min_tokens:
                    self.entries[key] = now
                    written_to = max(written_to, size)
        return CacheUsage(input=total - written_to, cache_read=read, cache_write=written_to - read)
