"""Where `notify:` (and `budget:`) is read from: the workspace's AGENTS.md,
else the account's. A workspace block replaces the account's whole."""

from __future__ import annotations

import copy
import logging
from typing import Any

from accounts.models import Workspace
from foldrun.contract.findings import ContractError
from foldrun.contract.frontmatter import split_frontmatter
from foldrun.contract.rules.notify import NotifyConfig, parse_notify
from library.models import LibraryFile, scope_key_for

from .secrets import read_secret

log = logging.getLogger(__name__)


def agents_meta(account, workspace: Workspace | None) -> dict[str, Any] | None:
    """The frontmatter of AGENTS.md at the head of a scope; None when there is none."""
    row = (
        LibraryFile.objects.select_related("head")
        .filter(scope_key=scope_key_for(account, workspace), path="AGENTS.md", deleted=False)
        .first()
    )
    if row is None or row.head is None:
        return None
    try:
        return split_frontmatter(row.head.content, "AGENTS.md", required=False).meta
    except ContractError:
        return None


def agents_metas(workspace: Workspace, *, heads: str | None = None) -> list[dict[str, Any]]:
    """The frontmatter of AGENTS.md at the head of the workspace and of its account's library, nearest first,
    in one query (a scope without one, or whose frontmatter does not parse, left out). A caller reading
    several keys for one event reads them all from this (`inherited(..., metas=)`).

    `heads`: the two heads' sha256 as "OWN LIBRARY" ("" for a scope without one), read by the caller in a query
    it made anyway; when this process has parsed both texts, no query."""
    if heads is not None:
        shas = heads.split(" ")
        if len(shas) == 2 and all(not sha or sha in _META_BY_SHA for sha in shas):
            return [copy.deepcopy(meta) for meta in (_META_BY_SHA[sha] for sha in shas if sha) if meta is not None]
    own, library = scope_key_for(workspace.account, workspace), scope_key_for(workspace.account, None)
    rows = {row.scope_key: row for row in _agents_files(own, library)}
    metas = []
    for scope_key in (own, library):
        row = rows.get(scope_key)
        if row is None or row.head is None:
            continue
        meta = _meta(row.head.sha256, row.head.content)
        if meta is not None:
            metas.append(meta)
    return metas


# AGENTS.md's frontmatter by its text's sha256: every run's end reads it, and the text is the same run after run,
# so it is parsed once per process. Keyed by the hash, not a revision's key: the closing query of a run's last step
# names the heads by hash, and a hash names one text — a key can come back with other text (a test database's
# rolled-back sequence), a hash cannot. None for a text whose frontmatter does not parse.
_META_BY_SHA: dict[str, dict[str, Any] | None] = {}
_META_MAX = 256


def _meta(sha: str, content: str) -> dict[str, Any] | None:
    """The frontmatter of this AGENTS.md text (a copy: callers may change what they get), None when it does not
    parse."""
    try:
        meta = _META_BY_SHA[sha]
    except KeyError:
        try:
            meta = split_frontmatter(content, "AGENTS.md", required=False).meta
        except ContractError:
            meta = None
        if not sha:  # a revision without its hash: parsed, not kept
            return meta
        if len(_META_BY_SHA) >= _META_MAX:
            _META_BY_SHA.pop(next(iter(_META_BY_SHA)), None)  # the oldest: a process sees few texts at a time
        _META_BY_SHA[sha] = meta
    return copy.deepcopy(meta)


def _agents_files(own: str, library: str):
    return LibraryFile.objects.select_related("head").filter(
        scope_key__in=[own, library], path="AGENTS.md", deleted=False
    )


def inherited(workspace: Workspace, key: str, *, metas: list[dict[str, Any]] | None = None) -> Any:
    """`key` from the workspace's AGENTS.md if it declares it, else the account's. `metas`: agents_metas'
    answer when the caller has it (no query)."""
    for meta in metas if metas is not None else agents_metas(workspace):
        if key in meta:
            return meta[key]
    return None


def notify_config_for(workspace: Workspace, *, metas: list[dict[str, Any]] | None = None) -> NotifyConfig | None:
    """The destination this workspace's notifications go to, or None.

    A block that does not parse sends nothing (`check` and deploy refuse it
    before it gets here; this is the belt to that).
    """
    raw = inherited(workspace, "notify", metas=metas)
    if raw is None:
        return None
    try:
        result = parse_notify(raw)
    except ValueError as exc:  # e.g. urlparse's "Invalid IPv6 URL": a block `check` should have refused
        log.warning("workspace %s has an unreadable notify: block (%s)", workspace.public_id, type(exc).__name__)
        return None
    if result.problems:
        log.warning("workspace %s has an unreadable notify: block: %s", workspace.public_id, result.problems[0])
    return result.config


def webhook_url(workspace: Workspace, config: NotifyConfig) -> str | None:
    """The webhook URL now: the literal, or the named secret's value."""
    if config.url:
        return config.url
    if config.url_secret:
        return read_secret(workspace.account, workspace, config.url_secret)
    return None
