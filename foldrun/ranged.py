"""A file answered with byte ranges (RFC 9110 §14), so a <video> can seek in a recording.

Django's FileResponse always sends the whole file; a browser asking `Range: bytes=N-` to seek gets a 200
and cannot. One range is served (what browsers ask for a media element); a header this does not read —
several ranges, another unit, bad syntax — is ignored and the whole file sent, as the RFC allows; a range
past the end is a 416 naming the size.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from django.http import FileResponse, HttpRequest, HttpResponse, StreamingHttpResponse

CHUNK = 64 * 1024
_ONE_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


def span(header: str, size: int) -> tuple[int, int] | None | bool:
    """(first, last) byte of a satisfiable single range; None when the header is not one to read;
    False when it asks for bytes the file does not have."""
    match = _ONE_RANGE.match(header.strip())
    if match is None or match.groups() == ("", ""):
        return None
    first, last = match.groups()
    if first == "":  # a suffix: the last N bytes
        count = int(last)
        if count == 0 or size == 0:
            return False
        return max(0, size - count), size - 1
    start = int(first)
    end = min(int(last), size - 1) if last else size - 1
    if start >= size or (last and int(last) < start):
        return False
    return start, end


def _chunks(path: Path, start: int, length: int) -> Iterator[bytes]:
    with path.open("rb") as handle:
        handle.seek(start)
        while length > 0:
            data = handle.read(min(CHUNK, length))
            if not data:
                return
            length -= len(data)
            yield data


def ranged_file(
    request: HttpRequest, path: Path, content_type: str, *, filename: str = "", inline: bool = True
) -> HttpResponse:
    size = path.stat().st_size
    wanted = span(request.headers.get("Range", ""), size)
    if wanted is False:
        response: HttpResponse = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
    elif wanted is None:
        response = FileResponse(path.open("rb"), content_type=content_type)
    else:
        start, end = wanted
        response = StreamingHttpResponse(_chunks(path, start, end - start + 1), status=206, content_type=content_type)
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
        response["Content-Length"] = str(end - start + 1)
    response["Accept-Ranges"] = "bytes"
    if filename:
        response["Content-Disposition"] = f'{"inline" if inline else "attachment"}; filename="{filename}"'
    return response


def ranged_bytes(
    request: HttpRequest, data: bytes, content_type: str, *, filename: str = "", inline: bool = True
) -> HttpResponse:
    """The same answer for bytes held in the database (a run's artifact, such as a step's video)."""
    size = len(data)
    wanted = span(request.headers.get("Range", ""), size)
    if wanted is False:
        response = HttpResponse(status=416)
        response["Content-Range"] = f"bytes */{size}"
    elif wanted is None:
        response = HttpResponse(data, content_type=content_type)
    else:
        start, end = wanted
        response = HttpResponse(data[start : end + 1], status=206, content_type=content_type)
        response["Content-Range"] = f"bytes {start}-{end}/{size}"
    response["Accept-Ranges"] = "bytes"
    if filename:
        response["Content-Disposition"] = f'{"inline" if inline else "attachment"}; filename="{filename}"'
    return response
