"""Server-sent events, read line by line from an httpx response.

Only what the three provider wires use: `event:` names, `data:` payloads
(several data lines join with a newline), `:` comments and blank-line
dispatch. Each event's data is parsed as JSON by the caller.
"""
from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass


@dataclass
class Event:
    event: str | None
    data: str


def iter_events(lines: Iterable[str]) -> Iterator[Event]:
    """Yield each dispatched event; a trailing event without a blank line is
    still yielded, since some servers close the stream right after it."""
    name: str | None = None
    data: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r\n")
        if line == "":
            if data:
                yield Event(name, "\n".join(data))
            name, data = None, []
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if field == "event":
            name = value
        elif field == "data":
            data.append(value)
    if data:
        yield Event(name, "\n".join(data))
