"""Where a result written to a file may go: inside the agent directory only.

"`../`, an absolute path elsewhere or a symlink out is refused before any
request, so a bad path costs no fetch." (spec, tools.md)
"""

from __future__ import annotations

import errno
import os
import queue
import threading
from pathlib import Path, PurePosixPath

from .errors import WebToolError


def save_path(sandbox: Path, raw: object, *, arg: str = "save", for_write: bool = True) -> Path:
    """The absolute path for `raw` inside `sandbox`, or WebToolError naming why not.

    Precondition: `sandbox` exists. Nothing is created here; the caller writes.
    """
    if not isinstance(raw, str) or not raw.strip():
        raise WebToolError(f"{arg}= must be a path inside the agent directory, such as outputs/page.md")
    text = raw.strip()
    pure = PurePosixPath(text.replace("\\", "/"))
    if pure.is_absolute() or text.startswith("~") or (len(text) > 1 and text[1] == ":"):
        raise WebToolError(
            f"{arg}={text}: an absolute path is refused — write a path inside the agent directory, "
            f"such as outputs/page.md"
        )
    if ".." in pure.parts:
        raise WebToolError(f"{arg}={text}: `..` is refused — the path must stay inside the agent directory")
    if for_write and _is_knowledge(pure.parts):
        raise WebToolError(f"{arg}={text}: knowledge/ is never written by a run — use outputs/")
    root = sandbox.resolve()
    target = root.joinpath(*pure.parts)
    if target.is_symlink() or not _inside(root, target):
        raise WebToolError(f"{arg}={text}: a symlink out of the agent directory is refused")
    if for_write and target.is_dir():
        raise WebToolError(f"{arg}={text}: that is a folder; name a file, such as {text.rstrip('/')}/page.md")
    return target


def _is_knowledge(parts: tuple[str, ...]) -> bool:
    """knowledge/, an agent's own agents/<name>/knowledge/, the library's library/knowledge/ (the sandbox's rule)."""
    return bool(parts) and (
        parts[0] == "knowledge"
        or (parts[0] == "agents" and len(parts) > 2 and parts[2] == "knowledge")
        or (parts[0] == "library" and len(parts) > 1 and parts[1] == "knowledge")
    )


def _inside(root: Path, target: Path) -> bool:
    """True when every existing part of `target` resolves inside `root` (a symlinked folder out fails)."""
    resolved = Path(os.path.realpath(target))
    return resolved == root or root in resolved.parents


def write_inside(sandbox: Path, target: Path, data: bytes) -> None:
    """Write, re-checking at write time: a symlink planted after the check is still refused."""
    if not target.parent.is_dir():  # a stat, not a failing mkdir, for the many files of one folder (a crawl)
        target.parent.mkdir(parents=True, exist_ok=True)
    if target.is_symlink() or not _inside(sandbox.resolve(), target):
        raise WebToolError(f"{target.name}: a symlink out of the agent directory is refused")
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(target, flags, 0o644)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)


class FolderWriter:
    """Many files into one folder of the sandbox — a crawl's pages — off the caller's thread.

    The folder is checked once (inside the sandbox, no symlink out) and held open; each file is
    opened relative to that handle with O_NOFOLLOW, so a folder swapped for a symlink afterwards
    still receives nothing outside, and a file planted as a symlink is refused as write_inside
    refuses it. Per file that is one open, one write, one close.

    `write` hands the file to one writer thread and returns: creating a file is the slowest
    part of a crawled page where the file system is busy (0.2–8 ms a file in a crowded folder,
    against a millisecond to read and convert the page), and a reader that waited for it read
    nothing meanwhile. At most BACKLOG files wait, so a disk slower than the site holds the readers
    back rather than the pages piling up in memory. `close` waits for every file; a refusal or a
    disk error is raised by the next `write` and by `close`, so nothing after it is counted.

    The hand-over is a SimpleQueue (C: a put and a get take no Python-level condition) with a
    semaphore for the bound, which only blocks when BACKLOG files wait: queue.Queue's two
    conditions cost each page a Python-level wait and notify on both threads.
    """

    BACKLOG = 64

    def __init__(self, sandbox: Path, folder: Path) -> None:
        self.folder = folder
        if not folder.is_dir():
            folder.mkdir(parents=True, exist_ok=True)
        if folder.is_symlink() or not _inside(sandbox.resolve(), folder):
            raise WebToolError(f"{folder.name}: a symlink out of the agent directory is refused")
        self._shown = rel(sandbox, folder)
        self._fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_NOFOLLOW", 0))
        self._queue: queue.SimpleQueue[tuple[str, bytes] | None] = queue.SimpleQueue()
        self._room = threading.Semaphore(self.BACKLOG)
        self._failure: BaseException | None = None
        self._thread = threading.Thread(target=self._drain, name=f"write-{folder.name}", daemon=True)
        self._thread.start()

    def write(self, name: str, data: bytes) -> None:
        if "/" in name or name in ("", ".", ".."):
            raise WebToolError(f"{name!r}: a file of {self.folder.name}/ has a plain name")
        if self._failure is not None:
            raise self._failure
        self._room.acquire()
        self._queue.put((name, data))

    def _drain(self) -> None:
        while (item := self._queue.get()) is not None:
            if self._failure is None:  # after a failure, the rest is taken and dropped: no writer blocks
                try:
                    self._write_now(*item)
                except BaseException as exc:  # noqa: BLE001 - raised on the caller's thread by write/close
                    self._failure = exc
            self._room.release()

    def _write_now(self, name: str, data: bytes) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(name, flags, 0o644, dir_fd=self._fd)
        except OSError as exc:
            if exc.errno == errno.ELOOP:  # O_NOFOLLOW met a symlink
                raise WebToolError(f"{name}: a symlink out of the agent directory is refused") from None
            raise self._refused(name, exc) from None
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        except OSError as exc:  # a full disk, a quota
            raise self._refused(name, exc) from None
        finally:
            os.close(fd)

    def _refused(self, name: str, exc: OSError) -> WebToolError:
        return WebToolError(
            f"{self._shown}/{name} could not be written ({exc.strerror or exc}), so the call stopped there"
        )

    def close(self, *, quiet: bool = False) -> None:
        """Wait for every file handed over; raise the first refusal or disk error unless `quiet`."""
        if self._fd < 0:
            return
        self._queue.put(None)
        self._thread.join()
        os.close(self._fd)
        self._fd = -1
        if self._failure is not None and not quiet:
            raise self._failure

    def __enter__(self) -> "FolderWriter":
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close(quiet=kind is not None)  # an error already on its way out is not replaced by this one


def rel(sandbox: Path, target: Path) -> str:
    return target.resolve().relative_to(sandbox.resolve()).as_posix()
