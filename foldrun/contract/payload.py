"""Byte-level checks a server runs on each pushed file before it becomes text.

    check_payload(path, data, max_bytes=MAX_FILE_BYTES) -> Finding | None
    needs_text(path) -> bool        (markdown, programs, requirements.txt, package.json)
    decode(data) -> str             (BINARY_MARKER when not UTF-8)

The CLI runs the same function over a folder (check.check_folder), so a
laptop and the server refuse the same files with the same sentence.
"""

from __future__ import annotations

from .findings import Finding

# A stand-in for a file that is not UTF-8 text; check reports it by name.
BINARY_MARKER = "\x00foldrun:binary\x00"

MAX_FILE_BYTES = 5 * 1024 * 1024
TEXT_SUFFIXES = (".md", ".py", ".js", ".mjs", ".cjs", ".ts", ".sh", ".bash", ".rb", ".yaml", ".yml", ".json", ".toml")
TEXT_NAMES = ("requirements.txt", "package.json", "AGENTS.md", "SKILL.md")


def needs_text(path: str) -> bool:
    """Markdown and programs must be UTF-8 text; storage/ may hold any bytes."""
    if path.startswith("storage/") or "/storage/" in path:
        return False
    name = path.rsplit("/", 1)[-1]
    return name in TEXT_NAMES or name.lower().endswith(TEXT_SUFFIXES)


def human_size(size: int) -> str:
    if size >= 1024 * 1024:
        return f"{size / (1024 * 1024):.1f} MB"
    if size >= 1024:
        return f"{size / 1024:.0f} KB"
    return f"{size} bytes"


def binary_finding(path: str) -> Finding:
    return Finding(
        path,
        None,
        "error",
        "is not UTF-8 text; a markdown file or a program must be text — keep other bytes in storage/.",
        "file.binary",
    )


def size_finding(path: str, size: int, max_bytes: int) -> Finding:
    return Finding(
        path, None, "error", f"is {human_size(size)}; a file may be at most {human_size(max_bytes)}.", "file.too_large"
    )


def check_payload(path: str, data: bytes, max_bytes: int = MAX_FILE_BYTES) -> Finding | None:
    """The one finding that stops this file before anything else reads it:
    too large, or bytes where text belongs. None when it is fine."""
    if len(data) > max_bytes:
        return size_finding(path, len(data), max_bytes)
    if needs_text(path):
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return binary_finding(path)
        if b"\x00" in data:
            return binary_finding(path)
    return None


def decode(data: bytes) -> str:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return BINARY_MARKER
    return BINARY_MARKER if "\x00" in text else text
