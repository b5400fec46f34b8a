"""Files the contract cannot read: malformed YAML, missing or unclosed
frontmatter, bytes where text belongs, a file over the size limit."""

from __future__ import annotations

from ..check import rule
from ..payload import MAX_FILE_BYTES, binary_finding, needs_text, size_finding
from ..paths import BINARY_MARKER


@rule("files.unreadable")
def unreadable(desk, context):
    for document in desk.documents:
        if document.error is not None:
            yield document.error


@rule("files.binary")
def binary(desk, context):
    for path, text in desk.files.items():
        if text == BINARY_MARKER and needs_text(path):
            yield binary_finding(path)


@rule("files.size")
def size(desk, context):
    for path, text in desk.files.items():
        # A character is at most four bytes: only measure what could be over.
        if len(text) * 4 > MAX_FILE_BYTES:
            measured = len(text.encode("utf-8"))
            if measured > MAX_FILE_BYTES:
                yield size_finding(path, measured, MAX_FILE_BYTES)
