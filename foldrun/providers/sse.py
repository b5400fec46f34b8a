"""Server-sent events, read from an answer's lines or straight from its bytes.

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


def iter_byte_events(chunks: Iterable[bytes]) -> Iterator[tuple[str | None, str]]:
    """(event name, data) of each dispatched event in a body's (decoded) bytes, as iter_events reads its lines.

    Events are cut on the bytes — a blank line is two line ends, which no UTF-8 character contains — and
    each is decoded once, so a chunk may end anywhere: inside a line, a line end or a character. A line
    ends as SSE says, at CRLF, LF or CR, and nowhere else (a line splitter that also breaks at U+2028 or
    a form feed would break a JSON string carrying one raw). A trailing event without its blank line is
    still yielded, as iter_events does."""
    buffer = b""
    for chunk in chunks:
        if not chunk:
            continue
        buffer = buffer + chunk if buffer else chunk
        if b"\r" in buffer:
            # CR or CRLF line ends become LF; a CR at the end waits, since its LF may open the next chunk
            held = buffer[-1:] == b"\r"
            buffer = (buffer[:-1] if held else buffer).replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if b"\n\n" not in buffer:
                buffer += b"\r" if held else b""
                continue
            *blocks, buffer = buffer.split(b"\n\n")
            buffer += b"\r" if held else b""
        elif b"\n\n" not in buffer:
            continue
        else:
            *blocks, buffer = buffer.split(b"\n\n")
        for block in blocks:
            if block and (event := _event(block)) is not None:
                yield event
    if buffer:
        block = buffer.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        for part in block.split(b"\n\n"):
            if part and (event := _event(part)) is not None:
                yield event


def _event(block: bytes) -> tuple[str | None, str] | None:
    """One event's lines (no blank line among them but a leading one) as (name, data); None without data."""
    name: str | None = None
    data: list[str] = []
    for line in block.decode("utf-8", "replace").split("\n"):
        if not line or line[0] == ":":
            continue
        field, _, value = line.partition(":")
        if value[:1] == " ":
            value = value[1:]
        if field == "data":
            data.append(value)
        elif field == "event":
            name = value
    if not data:
        return None
    return name, data[0] if len(data) == 1 else "\n".join(data)
