"""A Tool Test's scratch: what the Tool Tests of one tool in a workspace leave in state/ and outputs/, kept
between calls so the next test starts where the last one ended (foldrun/engine/tooltest.py lays it out and
reads it back).

A scratch is the workspace's, per tool: every member may list and download it, a member who may write clears
it, and another account's is a 404 like any missing thing. It is bounded (`FOLDRUN_TOOL_SCRATCH_BYTES`): what
does not fit is not kept, and the answer says so in a sentence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Workspace
from foldrun.api import NotFound

from .models import ScratchFile


def limit() -> int:
    return int(settings.FOLDRUN_TOOL_SCRATCH_BYTES)


def size_text(count: int) -> str:
    """A byte count as a person reads it: 812 bytes, 4.2 KB, 20 MB."""
    if count < 1024:
        return f"{count} bytes"
    for unit, scale in (("KB", 1024), ("MB", 1024**2), ("GB", 1024**3)):
        if count < scale * 1024 or unit == "GB":
            return f"{count / scale:.1f}".rstrip("0").rstrip(".") + f" {unit}"
    return f"{count} bytes"  # pragma: no cover - the loop always answers


def full_sentence(workspace: Workspace, tool: str, left_out: list[tuple[str, int]]) -> str:
    """What a person reads when a call left more than the scratch keeps."""
    named = ", ".join(f"{path} ({size_text(size)})" for path, size in left_out[:3])
    more = f" and {len(left_out) - 3} more" if len(left_out) > 3 else ""
    return (
        f"The Tool Test scratch of {tool} is full: it keeps at most {size_text(limit())} of state/ and outputs/, "
        f"so {named}{more} {'was' if len(left_out) == 1 else 'were'} not kept and the next test will not see "
        f"{'it' if len(left_out) == 1 else 'them'}. Clear the scratch (Clear on the Tools tab, or DELETE "
        f"/api/workspaces/{workspace.name}/tools/{tool}/scratch) to start again."
    )


@dataclass
class Scratch:
    """The scratch of `tool` in `workspace`, as the engine's Tool Test uses it (`foldrun.engine.tooltest.Scratch`)."""

    workspace: Workspace
    tool: str
    loaded: dict[str, bytes] = field(default_factory=dict)

    def load(self) -> dict[str, bytes]:
        self.loaded = {
            row.path: bytes(row.content) for row in ScratchFile.objects.filter(workspace=self.workspace, tool=self.tool)
        }
        return dict(self.loaded)

    def save(self, files: dict[str, bytes]) -> dict:
        return do_keep_scratch(self.workspace, self.tool, files, before=self.loaded)


def do_keep_scratch(
    workspace: Workspace, tool: str, files: dict[str, bytes], *, before: dict[str, bytes] | None = None
) -> dict:
    """Keep `files` as the scratch of `tool` (state/ first, then outputs/, each by path, while they fit); rows
    of files the call removed go. `before`: what the call was given (rows whose content is the same are left
    alone). Returns what the answer says of it: files, bytes, limit and, when something did not fit, a note."""
    room = limit()
    kept: dict[str, bytes] = {}
    left_out: list[tuple[str, int]] = []
    used = 0
    for path in sorted(files, key=lambda p: (not p.startswith("state/"), p)):
        size = len(files[path])
        if used + size > room:
            left_out.append((path, size))
            continue
        kept[path] = files[path]
        used += size
    before = before or {}
    now = timezone.now()
    with transaction.atomic():
        rows = ScratchFile.objects.filter(workspace=workspace, tool=tool)
        rows.exclude(path__in=list(kept)).delete()
        for path, content in kept.items():
            if before.get(path) == content:
                continue
            ScratchFile.objects.update_or_create(
                workspace=workspace,
                tool=tool,
                path=path,
                defaults={"content": content, "size": len(content), "updated_at": now},
            )
    answer: dict = {"files": len(kept), "bytes": used, "limit": room}
    if left_out:
        answer["note"] = full_sentence(workspace, tool, left_out)
    return answer


def scratch_of(workspace: Workspace, tool: str) -> dict:
    """The listing: each file's path, size and time, the bytes in all and the bound."""
    rows = list(ScratchFile.objects.filter(workspace=workspace, tool=tool).only("path", "size", "updated_at"))
    return {
        "tool": tool,
        "files": [{"path": r.path, "size": r.size, "updated_at": r.updated_at} for r in rows],
        "bytes": sum(r.size for r in rows),
        "limit": limit(),
    }


def scratches_of(workspace: Workspace) -> list[dict]:
    """Every tool of the workspace with a scratch, for the Tools tab: its listing, by tool name."""
    tools = ScratchFile.objects.filter(workspace=workspace).order_by("tool").values_list("tool", flat=True).distinct()
    return [scratch_of(workspace, tool) for tool in tools]


def check_scratch_file(workspace: Workspace, tool: str, path: str) -> ScratchFile:
    """One kept file; NotFound, naming it, when the scratch has no such file."""
    row = ScratchFile.objects.filter(workspace=workspace, tool=tool, path=path).first()
    if row is None:
        raise NotFound(f"The Tool Test scratch of {tool} has no file {path}.")
    return row


def do_clear_scratch(workspace: Workspace, tool: str) -> int:
    """Forget the scratch of `tool`: the next Tool Test starts from the workspace's files alone."""
    with transaction.atomic():
        cleared, _ = ScratchFile.objects.filter(workspace=workspace, tool=tool).delete()
    return cleared
