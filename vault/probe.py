"""Is the key still good? The daily key probe, and `foldrun probe` server-side.

Every provider block the account's files use (the account's AGENTS.md, each
workspace's, each agent's) is resolved as a run would resolve it — endpoint,
key from the nearest vault — and each distinct (endpoint, key) is asked one
minimal question. The verdict is written on a ProviderCheck row per secret;
only a newly broken one is reported.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import httpx
from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from accounts.models import Account, Membership, Role, Workspace
from foldrun.api import ApiError
from foldrun.providers.client import (
    MissingSecret,
    ModelClient,
    ProviderConfigError,
    ProviderError,
    ProviderRefusal,
    Supply,
    supply_from_block,
)
from foldrun.providers.probe import format_probe, run_probe
from foldrun.contract.desk import AGENT, AGENTS_MD, classify
from foldrun.contract.frontmatter import split_frontmatter
from foldrun import mail
from foldrun.leases import Heartbeat
from library.services import files_at
from vault import actions
from vault.models import BROKEN_VERDICTS, ProviderCheck, Verdict
from vault.serializers import check_data

log = logging.getLogger(__name__)

# Sent with the ProviderCheck row when a provider is newly broken; the
# notification events subscribe to it.
provider_broken = Signal()

PROBE_QUESTION = [{"role": "user", "content": "Reply with the word ok."}]
# The Responses API refuses max_output_tokens below 16; everywhere else one token.
MIN_OUTPUT = {"responses": 16}
# A block that names no model is asked with the cheapest model the endpoint surely has.
DEFAULT_PROBE_MODELS = {
    "anthropic": "claude-haiku-4-5",
    "openrouter": "anthropic/claude-haiku-4.5",
    "deepseek": "deepseek-chat",
    "openai": "gpt-4o-mini",
}
PROBE_TIMEOUT = 20.0
PARALLEL_QUESTIONS = 4
_CREDIT_WORDS = ("credit balance", "insufficient_quota", "exceeded your current quota", "billing", "payment required")
_MODEL_WORDS = (
    "model_not_found",
    "model not found",
    "does not exist",
    "unknown model",
    "no such model",
    "invalid model",
    "not a valid model",
)


@dataclass
class UsedBlock:
    block: dict
    workspace: Workspace | None
    where: str
    account: Account | None = None


@dataclass
class Credential:
    """One (endpoint, key) pair and every place it is used."""

    supply: Supply | None
    endpoint: str
    fmt: str
    provider: str
    key_name: str
    key_scope: str
    model: str
    used_by: list[str] = field(default_factory=list)
    problem: tuple[str, str] | None = None  # (verdict, message) known before asking
    # Every (scope, name) holding this same key at this endpoint: one question, a row each.
    also: list[tuple[str, str]] = field(default_factory=list)

    def keys(self) -> list[tuple[str, str]]:
        return [(self.key_scope, self.key_name)] + [k for k in self.also if k != (self.key_scope, self.key_name)]


def _provider_of(text: str, path: str) -> Any:
    try:
        parsed = split_frontmatter(text, path, required=False)
    except Exception:  # a malformed file is check's business, not the probe's
        return None
    return parsed.meta.get("provider") if isinstance(parsed.meta, dict) else None


def _blocks_in(files: Mapping[str, Any], workspace: Workspace | None, prefix: str) -> list[UsedBlock]:
    found = []
    for path, revision in sorted(files.items()):
        kind = classify(path)[0]
        if kind not in (AGENT, AGENTS_MD):
            continue
        text = getattr(revision, "content", revision)
        block = _provider_of(text if isinstance(text, str) else "", path)
        if not block:
            continue
        block = {"name": block} if isinstance(block, str) else dict(block) if isinstance(block, Mapping) else None
        if block is None:
            continue
        found.append(UsedBlock(block, workspace, f"{prefix}{path}"))
        if isinstance(block.get("fallback"), (str, Mapping)):
            fallback = block["fallback"]
            second = {"name": fallback} if isinstance(fallback, str) else dict(fallback)
            if not second.get("model") and not second.get("models") and block.get("model"):
                second["model"] = block["model"]  # as a run would: the second supply inherits the model
            found.append(UsedBlock(second, workspace, f"{prefix}{path} (fallback)"))
    return found


def provider_blocks(account: Account) -> list[UsedBlock]:
    """Every provider block the account's files use, and where."""
    blocks = _blocks_in(files_at(account, None), None, "account library: ")
    for workspace in Workspace.objects.filter(account=account).order_by("name"):
        blocks += _blocks_in(files_at(account, workspace), workspace, f"{workspace.name}: ")
    for used in blocks:
        used.account = account
    return blocks


def _credential(used: UsedBlock, *, reveal: bool = True) -> tuple[Credential, str | None]:
    """Resolve a block as a run would. Returns the credential and the key's
    value (kept only in memory, to group blocks that share a key). With
    `reveal=False` nothing is decrypted or refreshed: the key is only looked
    up by name (what a GET may do)."""
    scope_of: dict[str, str] = {}
    values: dict[str, str] = {}

    def resolve(name: str) -> str | None:
        if not reveal:
            row = actions.find_secret(_account_of(used), used.workspace, name)
            if row is None:
                return None
            scope_of[name] = f"workspace {row.workspace.name}" if row.workspace_id else "account"
            return ""  # a stand-in; never sent anywhere
        found = actions.resolve_secrets(used.workspace, [name], account=_account_of(used))
        if name in found:
            item = found[name]
            scope_of[name] = f"workspace {used.workspace.name}" if item.scope == "workspace" else "account"
            values[name] = item.value
            return item.value
        if name in found.failed:
            raise ProviderConfigError(found.failed[name])
        return None

    block = dict(used.block)
    block.pop("fallback", None)
    name = str(block.get("name") or "")
    try:
        supply = supply_from_block(block, resolve)
    except ProviderConfigError as exc:
        endpoint = str(block.get("base_url") or name or "?")
        key_name = getattr(exc, "name", "") or ""
        text = str(exc)
        if key_name or "decrypt" in text or "token endpoint" in text or "OAuth" in text or "key:" in text:
            verdict = Verdict.CREDENTIAL  # absent, unreadable or unrefreshable key
        elif "unknown name" in text:
            verdict = Verdict.NOT_FOUND  # no such endpoint in the preset table
        else:
            verdict = Verdict.UNREACHABLE  # no address to ask (per-account preset without base_url)
        return Credential(
            None,
            endpoint,
            str(block.get("format") or ""),
            name,
            key_name,
            "missing" if key_name else "",
            str(block.get("model") or ""),
            [used.where],
            (verdict, str(exc)),
        ), None
    model = supply.model or DEFAULT_PROBE_MODELS.get(name) or DEFAULT_PROBE_MODELS.get(supply.format, "")
    supply.model = model
    key_name = supply.key_name or ""
    return Credential(
        supply, supply.endpoint(), supply.format, name, key_name, scope_of.get(key_name, ""), model, [used.where]
    ), values.get(key_name)


def _account_of(used: UsedBlock) -> Account:
    return used.account if used.account is not None else used.workspace.account


def credentials_for(account: Account, *, reveal: bool = True) -> list[Credential]:
    """Blocks grouped by (endpoint, format, key): one question each. With
    `reveal`, blocks whose different names hold the same value share one."""
    grouped: dict[tuple, Credential] = {}
    for used in provider_blocks(account):
        cred, value = _credential(used, reveal=reveal)
        identity = value if (reveal and value is not None) else f"ref:{cred.key_scope}:{cred.key_name}"
        group = (cred.endpoint, cred.fmt, identity)
        if group in grouped:
            first = grouped[group]
            if used.where not in first.used_by:
                first.used_by.append(used.where)
            if (cred.key_scope, cred.key_name) not in first.keys():
                first.also.append((cred.key_scope, cred.key_name))
            continue
        grouped[group] = cred
    return list(grouped.values())


def _body_says(message: str, words: tuple[str, ...]) -> bool:
    lowered = message.lower()
    return any(word in lowered for word in words)


def verdict_for(exc: Exception) -> tuple[str, str]:
    """Refusals and errors as verdicts, reading the body where the status is ambiguous."""
    if isinstance(exc, ProviderRefusal):
        if exc.status == 429 and _body_says(exc.provider_message, _CREDIT_WORDS):
            return Verdict.CREDENTIAL, exc.line  # OpenAI's out-of-credit arrives as a 429
        return (Verdict.BUSY if exc.status == 429 else Verdict.CREDENTIAL), exc.line
    if isinstance(exc, ProviderError):
        if exc.status in (400, 403, 404) and _body_says(exc.message, _MODEL_WORDS):
            return Verdict.NOT_FOUND, exc.message
        if exc.status == 400 and _body_says(exc.message, _CREDIT_WORDS):
            return Verdict.CREDENTIAL, exc.message
        if exc.status == 529:  # Anthropic's overloaded: capacity, the key is fine
            return Verdict.BUSY, exc.message
        return exc.verdict, exc.message
    return Verdict.PROVIDER_ERROR, f"{type(exc).__name__}"


def ask(cred: Credential, http: httpx.Client | None) -> tuple[str, str]:
    """One minimal question: a single request, one output token."""
    if cred.problem:
        return cred.problem
    supply = cred.supply
    assert supply is not None
    if not supply.model:
        return Verdict.NOT_FOUND, "the block names no model to ask — add model: or models:"
    # A private base_url is refused at connect time by foldrun.net, as "base_url: …" (unreachable).
    client = ModelClient(Supply(**{**supply.__dict__, "fallback": None}), http=http, timeout=PROBE_TIMEOUT)
    try:
        client.create(None, PROBE_QUESTION, [], MIN_OUTPUT.get(supply.format, 1))
    except (ProviderRefusal, ProviderError) as exc:
        return verdict_for(exc)
    return Verdict.OK, "the key was accepted and the model answered"


def check_account_providers(
    account_id: int,
    *,
    report: bool = True,
    http: httpx.Client | None = None,
    lease: Heartbeat | None = None,
    daily: bool = False,
) -> list[ProviderCheck]:
    """Ask every distinct (endpoint, key) once; record per secret; report the newly broken.

    With `lease` (the daily probe's, see vault/tasks.py) the verdicts and the
    report are written only while it still holds: a worker that lost its
    lease mid-check (LeaseLost) writes nothing and mails nobody. `daily` is the once-a-day check's; any
    other is one forced by hand (POST, `foldrun account providers --check`), and its mail says so."""
    account = Account.objects.get(pk=account_id)
    rows: list[ProviderCheck] = []
    newly_broken: list[ProviderCheck] = []
    never_checked: set[int] = set()  # rows broken at their first check: they did not "work before"
    creds = credentials_for(account)
    # The questions go out side by side (each waits on a network answer);
    # the records are written afterwards, in one transaction.
    with ThreadPoolExecutor(max_workers=PARALLEL_QUESTIONS) as pool:
        answers = list(pool.map(lambda cred: ask(cred, http), creds))  # None: net's "model" client
    if lease is not None:
        lease.check()
    with transaction.atomic():
        for cred, (verdict, message) in zip(creds, answers):
            now = timezone.now()
            for key_scope, key_name in cred.keys():
                row, _ = ProviderCheck.objects.select_for_update().get_or_create(
                    account=account,
                    endpoint=cred.endpoint[:500],
                    key_scope=key_scope,
                    key_name=key_name,
                    defaults={"format": cred.fmt},
                )
                was_broken = row.verdict in BROKEN_VERDICTS
                first_check = not row.verdict
                row.format, row.provider, row.model = cred.fmt, cred.provider, cred.model[:200]
                row.used_by, row.verdict, row.message, row.checked_at = cred.used_by, verdict, message[:600], now
                is_broken = verdict in BROKEN_VERDICTS
                if is_broken and not was_broken:
                    row.broken_since = now
                    newly_broken.append(row)
                elif not is_broken:
                    row.broken_since = None
                row.save()
                if first_check and is_broken:
                    never_checked.add(row.pk)
                rows.append(row)
        if report and newly_broken:
            _report(account, newly_broken, never_checked=never_checked, daily=daily)
        if lease is not None:
            lease.check()  # still ours at the commit: else roll it all back
    if report:
        for row in newly_broken:
            provider_broken.send(sender=ProviderCheck, check=row, account=account)
    return rows


def report_body(rows: list[ProviderCheck], *, never_checked: set[int], daily: bool) -> str:
    """The owners' mail: which check found it (the daily one, or one forced by hand), and for each key
    whether it worked at its last check or had never been checked before."""
    lines = []
    for row in rows:
        key = f"{row.key_name} ({row.key_scope})" if row.key_name else "no key"
        before = "never checked before" if row.pk in never_checked else "it worked at the last check"
        lines.append(
            f"- {row.endpoint} with {key}: {row.verdict} — {row.message}\n  {before}"
            f"\n  used by: {', '.join(row.used_by)}"
        )
    which = "The daily key check" if daily else "A key check forced by hand"
    found = (
        "a provider key that does not work now" if len(rows) == 1 else f"{len(rows)} provider keys that do not work now"
    )
    return (
        f"{which} found {found}:\n\n"
        + "\n".join(lines)
        + "\n\nRuns that use it will fail until the key is fixed. After rotating a key, "
        "`foldrun account providers --check` checks again.\n"
    )


def _report(account: Account, rows: list[ProviderCheck], *, never_checked: set[int], daily: bool) -> None:
    owners = list(
        Membership.objects.filter(account=account, role=Role.OWNER)
        .select_related("user")
        .values_list("user__email", flat=True)
    )
    # "stopped working" only where a key worked before; a key broken at its first check never worked here.
    verb = "stopped working" if any(r.pk not in never_checked for r in rows) else "does not work"
    if len(rows) > 1:
        verb = "stopped working" if verb == "stopped working" else "do not work"
    subject = (
        f"foldrun: a provider key {verb} for {account.name}"
        if len(rows) == 1
        else f"foldrun: {len(rows)} provider keys {verb} for {account.name}"
    )
    body = report_body(rows, never_checked=never_checked, daily=daily)
    for owner in owners:
        if owner:  # the account category: always on, but still asked at send time
            # The mail outbox: written with the verdicts, sent by its own task once they commit.
            mail.queue_platform_mail(to=owner, subject=subject, body=body, category="account")
    ProviderCheck.objects.filter(pk__in=[row.pk for row in rows]).update(reported_at=timezone.now())


def providers_table(account: Account) -> dict:
    """What would be checked now, beside the last answer for each."""
    last = {(r.endpoint, r.key_scope, r.key_name): r for r in ProviderCheck.objects.filter(account=account)}
    results = []
    seen = set()
    for cred in credentials_for(account, reveal=False):
        key = (cred.endpoint, cred.key_scope, cred.key_name)
        seen.add(key)
        row = last.get(key)
        entry = {
            "endpoint": cred.endpoint,
            "format": cred.fmt,
            "provider": cred.provider or None,
            "key": {"name": cred.key_name or None, "scope": cred.key_scope or None},
            "model": cred.model or None,
            "used_by": cred.used_by,
            "verdict": row.verdict if row and row.verdict else None,
            "message": row.message if row else None,
            "checked_at": row.checked_at.isoformat() if row and row.checked_at else None,
        }
        results.append(entry)
    stale = [check_data(r) for k, r in last.items() if k not in seen]
    return {"results": results, "no_longer_used": stale}


# ------------------------------------------------------------------ foldrun probe


def _workspace_block(account: Account, workspace: Workspace | None) -> dict | None:
    for scope in ([workspace] if workspace else []) + [None]:
        files = files_at(account, scope)
        revision = files.get("AGENTS.md")
        if revision is not None:
            block = _provider_of(revision.content, "AGENTS.md")
            if block:
                return {"name": block} if isinstance(block, str) else dict(block)
    return None


def check_probe(
    account: Account, workspace: Workspace | None, body: Mapping[str, Any], *, http: httpx.Client | None = None
) -> dict:
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise ApiError(
            "model: name the model to probe, e.g. claude-haiku-4-5.", code="invalid", details={"field": "model"}
        )
    provider = body.get("provider")
    if provider in (None, ""):
        block = _workspace_block(account, workspace) or {"name": "anthropic"}
    elif isinstance(provider, str):
        block = {"name": provider}
    elif isinstance(provider, Mapping):
        block = dict(provider)
    else:
        raise ApiError(
            "provider: give a preset name or a provider block.", code="invalid", details={"field": "provider"}
        )
    block = {**block, "model": model.strip()}
    block.pop("models", None)

    def resolve(name: str) -> str | None:
        found = actions.resolve_secrets(workspace, [name], account=account)
        if name in found.failed:
            raise ProviderConfigError(found.failed[name])
        return found[name].value if name in found else None

    try:
        supply = supply_from_block(block, resolve)
    except MissingSecret as exc:  # the request is fine; the vault lacks the key (set it, then probe again)
        raise ApiError(str(exc), code="missing_secret", status_code=409, details={"secret": exc.name}) from None
    except ProviderConfigError as exc:
        raise ApiError(str(exc), code="provider", details={"field": "provider"}) from None
    lines: list[str] = []
    client = ModelClient(supply, http=http, on_line=lines.append, timeout=120.0)
    try:
        result = run_probe(client, provider=block)
    except ProviderRefusal as exc:
        return {
            "ok": False,
            "endpoint": supply.endpoint(),
            "format": supply.format,
            "model": supply.model,
            "error": exc.line,
            "requests": client.requests,
            "lines": lines,
        }
    except ProviderError as exc:
        return {
            "ok": False,
            "endpoint": supply.endpoint(),
            "format": supply.format,
            "model": supply.model,
            "error": exc.message,
            "requests": client.requests,
            "lines": lines,
        }
    finally:
        client.close()
    result.lines = lines
    data = result.as_dict()
    data.update(
        {
            "ok": result.closed,
            "endpoint": supply.endpoint(),
            "format": supply.format,
            "printed": format_probe(result, endpoint=supply.endpoint()),
        }
    )
    return data
