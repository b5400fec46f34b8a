"""The step's sandbox: a fresh directory holding the resolved files.

Layout (the agent's working directory is the root):

    AGENTS.md, agents/, flows/, tools/, skills/, knowledge/, state/, storage/
                       the workspace's files at the run's revision
    memory/            the agent's own memory (the workspace's agents/<name>/memory/): "Memory is per agent
                       by default" — what it writes there is kept there
    desk/memory/       the workspace's memory/, shared by the desk: every agent reads and writes it here
    library/           the account library's knowledge/, memory/, skills/, scripts/
    outputs/           what the step leaves as run artifacts

(Without an agent — `materialise(own_memory=None)` — memory/ is the workspace's, as the files are.)

Paths a tool touches stay inside: `..`, absolute paths and symlinks out are
refused before any work is done (`SandboxPathError`). `knowledge/` anywhere is
never writable: the file tools refuse it, and on disk it is read-only so a
script cannot change it either (and a change is detected and discarded).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Callable


class SandboxPathError(ValueError):
    """A path that would leave the sandbox, or write where no one may."""


WRITABLE_BACK = ("memory", "state")  # written back as revisions attributed to the run
LIBRARY_DIR = "library"
OUTPUTS_DIR = "outputs"
DESK_MEMORY = "desk/memory"  # where a step sees the workspace's shared memory/ (its own is memory/)


def _is_knowledge(rel: PurePosixPath) -> bool:
    return "knowledge" in rel.parts[:3] and (
        rel.parts[0] == "knowledge"
        or (rel.parts[0] == "agents" and len(rel.parts) > 2 and rel.parts[2] == "knowledge")
        or (rel.parts[0] == LIBRARY_DIR and len(rel.parts) > 1 and rel.parts[1] == "knowledge")
    )


def is_memory_path(rel: str) -> bool:
    parts = PurePosixPath(rel).parts
    return bool(parts) and (
        parts[0] == "memory"
        or (parts[0] == "agents" and len(parts) > 2 and parts[2] == "memory")
        or parts[:2] == ("desk", "memory")
    )


@dataclass
class Sandbox:
    root_: Path | None = None  # None until its files are written (see `root`)
    # rel path -> (inode, size, mtime, ctime) at materialise time: a file whose stat is the same is unchanged
    # (any write or utime moves ctime, which no program can set back), so only changed files are read again.
    snapshot: dict[str, tuple[int, int, int, int]] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # rel path -> the text materialise wrote there
    make: Callable[["Sandbox"], None] | None = field(default=None, repr=False)  # writes the files (lazy)
    own_memory: str | None = None  # the workspace folder the step's memory/ is (agents/<name>/memory)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def root(self) -> Path:
        """The sandbox's folder. A lazy sandbox (materialise(lazy=True)) writes its files on the first use of
        this — a step whose model only answers never touches its sandbox, and writing and removing the desk's
        files was most of what such a step did on disk; whatever reads or runs anything in it comes here first."""
        if self.root_ is None:
            with self._lock:
                if self.root_ is None:
                    assert self.make is not None
                    self.make(self)
        assert self.root_ is not None
        return self.root_

    @property
    def made(self) -> bool:
        """Whether its files were written (a lazy sandbox nothing used has none: nothing in it changed)."""
        return self.root_ is not None

    # -- paths ---------------------------------------------------------------
    def resolve(self, raw: str, *, for_write: bool = False) -> Path:
        """The real path for `raw`, refusing anything that leaves the sandbox.

        Refused: empty, absolute, any `..` segment, and a path whose real
        location (after symlinks) is outside. For writes, `knowledge/` too.
        """
        if not isinstance(raw, str) or not raw.strip():
            raise SandboxPathError("a path is required")
        text = raw.strip().replace("\\", "/")
        if text.startswith("/") or (len(text) > 1 and text[1] == ":"):
            raise SandboxPathError(f"{raw}: absolute paths are refused; use a path inside the workspace")
        rel = PurePosixPath(text)
        if any(part == ".." for part in rel.parts):
            raise SandboxPathError(f"{raw}: '..' is refused; paths stay inside the workspace")
        root = self.root.resolve()
        target = root / rel
        real = Path(os.path.realpath(target))
        if real != root and root not in real.parents:
            raise SandboxPathError(f"{raw}: it leads outside the workspace (a symlink), refused")
        if for_write and _is_knowledge(PurePosixPath(real.relative_to(root).as_posix())):
            raise SandboxPathError(
                f"{raw}: knowledge/ is given, not learned — it is never written; write what you found to memory/"
            )
        return target

    def rel(self, path: Path) -> str:
        return path.resolve().relative_to(self.root.resolve()).as_posix()

    # -- lifecycle -----------------------------------------------------------
    def files(self) -> dict[str, str]:
        """Every regular file's sha256, by relative path (symlinks skipped)."""
        result: dict[str, str] = {}
        for dirpath, dirnames, filenames in os.walk(self.root):
            dirnames[:] = [d for d in dirnames if d not in {".venv", "__pycache__", ".foldrun"}]
            for name in filenames:
                full = Path(dirpath) / name
                if full.is_symlink() or not full.is_file():
                    continue
                result[full.relative_to(self.root).as_posix()] = hashlib.sha256(full.read_bytes()).hexdigest()
        return result

    def signatures(self) -> dict[str, tuple[int, int, int, int]]:
        """Every regular file's stat signature, by relative path (symlinks skipped, as `files`)."""
        result: dict[str, tuple[int, int, int, int]] = {}
        root = str(self.root)
        skip = len(root) + 1
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = [d for d in dirnames if d not in {".venv", "__pycache__", ".foldrun"}]
            for name in filenames:
                full = os.path.join(dirpath, name)
                try:
                    info = os.lstat(full)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    result[full[skip:]] = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
        return result

    def _changed(self, path: str, now: dict[str, tuple[int, int, int, int]]) -> bool:
        if now.get(path) == self.snapshot.get(path):
            return False
        if path not in now or path not in self.written:
            return True  # deleted, or new
        try:  # touched or rewritten: changed only when its content differs from what was written
            return (self.root / path).read_bytes() != self.written[path].encode("utf-8")
        except OSError:
            return True

    def changes(self) -> tuple[dict[str, str | None], list[str]]:
        """(memory/state writes to keep {path: text or None for deleted}, knowledge paths changed and discarded)."""
        if not self.made:
            return {}, []
        now = self.signatures()
        keep: dict[str, str | None] = {}
        refused: list[str] = []
        for path in sorted(set(now) | set(self.snapshot)):
            if not self._changed(path, now):
                continue
            rel = PurePosixPath(path)
            if _is_knowledge(rel):
                refused.append(path)
                continue
            top = rel.parts[0]
            agent_own = top == "agents" and len(rel.parts) > 2 and rel.parts[2] in WRITABLE_BACK
            desk_memory = self.own_memory is not None and rel.parts[:2] == ("desk", "memory")
            if top in WRITABLE_BACK or agent_own or desk_memory:
                where = self.workspace_path(path)
                if path in now:
                    try:
                        keep[where] = (self.root / path).read_text(encoding="utf-8")
                    except UnicodeDecodeError:
                        refused.append(path)
                else:
                    keep[where] = None
        return keep, refused

    def workspace_path(self, path: str) -> str:
        """Where a sandbox path is kept in the workspace: memory/ is the agent's own, desk/memory/ the desk's."""
        if self.own_memory is None:
            return path
        if path.startswith("memory/"):
            return f"{self.own_memory}/{path[len('memory/') :]}"
        if path.startswith(f"{DESK_MEMORY}/"):
            return path[len("desk/") :]
        return path

    def outputs(self) -> dict[str, bytes]:
        if not self.made:
            return {}
        out = self.root / OUTPUTS_DIR
        result: dict[str, bytes] = {}
        if not out.is_dir():
            return result
        for full in sorted(out.rglob("*")):
            if full.is_file() and not full.is_symlink():
                result[full.relative_to(self.root).as_posix()] = full.read_bytes()
        return result

    def cleanup(self) -> None:
        if not self.made:
            return
        for dirpath, dirnames, _ in os.walk(self.root):
            for name in dirnames:
                try:
                    os.chmod(Path(dirpath) / name, 0o755)
                except OSError:
                    pass
        shutil.rmtree(self.root, ignore_errors=True)


def materialise(
    files: dict[str, str],
    library: dict[str, str] | None = None,
    *,
    base: str | None = None,
    lazy: bool = False,
    own_memory: str | None = None,
) -> Sandbox:
    """Write `files` (workspace, relative path -> text) and `library` under a fresh directory — with `lazy`,
    on the first use of the sandbox's `root` (none: nothing is written, nothing changes, nothing is left).
    With `own_memory` (agents/<name>/memory) the step's memory/ is that folder and the workspace's memory/
    is at desk/memory/; `changes()` gives workspace paths either way.

    Precondition: paths are normalised (the contract's `normalise_path`).
    """
    if own_memory is not None:
        files = {sandbox_path(path, own_memory): text for path, text in files.items()}
    sandbox = Sandbox(make=lambda box: _fill(box, files, library, base), own_memory=own_memory)
    if not lazy:
        _fill(sandbox, files, library, base)
    return sandbox


def sandbox_path(path: str, own_memory: str) -> str:
    """Where a workspace file sits in a step's sandbox whose memory/ is `own_memory`."""
    if path.startswith("memory/"):
        return f"desk/{path}"
    if path.startswith(f"{own_memory}/"):
        return f"memory/{path[len(own_memory) + 1 :]}"
    return path


def _fill(sandbox: Sandbox, files: dict[str, str], library: dict[str, str] | None, base: str | None) -> None:
    # Every sandbox sits in one dedicated folder: a step's programs see that folder with only their own
    # sandbox in it (the rest of /tmp or /dev/shm is untouched).
    folder = Path(base or tempfile.gettempdir()) / "foldrun-sandboxes"
    folder.mkdir(mode=0o700, exist_ok=True)
    root = Path(tempfile.mkdtemp(prefix="foldrun-step-", dir=folder))
    written: dict[str, str] = {}
    made: set[str] = set()
    for path, text in files.items():
        _write(root, path, text, made)
        written[path] = text
    for path, text in (library or {}).items():
        top = path.split("/", 1)[0]
        if top in {"knowledge", "memory", "skills", "scripts", ".agents"}:
            _write(root, f"{LIBRARY_DIR}/{path}", text, made)
            written[f"{LIBRARY_DIR}/{path}"] = text
    (root / OUTPUTS_DIR).mkdir(exist_ok=True)
    for sub in ("memory", "state", "storage"):
        (root / sub).mkdir(exist_ok=True)
    if sandbox.own_memory is not None:
        (root / DESK_MEMORY).mkdir(parents=True, exist_ok=True)
    _lock_knowledge(root)
    # After the lock: chmod moves ctime, and the snapshot is what the step starts from.
    sandbox.root_, sandbox.written = root, written
    sandbox.snapshot = sandbox.signatures()


# Every materialised file's mtime is set this far back: a write by the step then always moves it, however
# coarse the file system's clock (the kernel stamps files at tick granularity, a few milliseconds).
_BACKDATE_NS = 2_000_000_000


def _write(root: Path, path: str, text: str, made: set[str] | None = None) -> None:
    """Precondition: `path` is normalised (no empty or `.` segments). Plain string paths: this runs for every
    file of the desk on every step, where pathlib's parsing cost more than the writes."""
    if path.startswith("/") or ".." in path.split("/"):
        raise SandboxPathError(f"{path}: not a relative path")
    target = os.path.join(root, path)
    parent = os.path.dirname(target)
    if made is None or parent not in made:
        os.makedirs(parent, exist_ok=True)
        if made is not None:
            made.add(parent)
    with open(target, "w", encoding="utf-8") as handle:
        handle.write(text)
    stamp = time.time_ns() - _BACKDATE_NS
    os.utime(target, ns=(stamp, stamp))
    if path.endswith((".py", ".sh", ".js")) and text.startswith("#!"):
        os.chmod(target, os.stat(target).st_mode | stat.S_IXUSR)


def _lock_knowledge(root: Path) -> None:
    """Make every knowledge/ tree read-only on disk (a script cannot write it either)."""
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        if here.name == "knowledge":
            for sub_dir, _, sub_files in os.walk(here):
                for name in sub_files:
                    os.chmod(Path(sub_dir) / name, 0o444)
                os.chmod(sub_dir, 0o555)
            dirnames[:] = []
