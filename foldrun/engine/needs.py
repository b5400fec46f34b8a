"""What a desk needs from the vault before its runs can work: every secret its agents' steps
receive (`secrets:`, tools' ${NAME}, MCP servers), the key each agent's provider block reads, and the key a
flow's signed `webhook:` checks its senders with.

`foldrun check` and the workspace page list these, and say which the vault does not hold.
"""

from __future__ import annotations

from typing import Any

from foldrun.contract import Desk
from foldrun.contract.desk import AGENT, FLOW
from foldrun.contract.model import PLACEHOLDER_RE, agents_md_of, flow_of, webhook_problems
from foldrun.contract.resolve import resolve_agent, step_secrets
from foldrun.providers.supply import default_key_name

LOCAL_HOSTS = ("localhost", "127.0.0.1", "::1", "[::1]")


def provider_key(block: Any) -> str | None:
    """The vault name a provider block reads (a local server with no `key:` reads none)."""
    if not block:
        block = {"name": "anthropic"}
    if isinstance(block, str):
        return default_key_name(block)
    if not isinstance(block, dict):
        return None
    key = block.get("key")
    if key is not None:
        match = PLACEHOLDER_RE.fullmatch(str(key).strip())
        return match.group(1) if match else None
    base_url = str(block.get("base_url") or "")
    if any(f"//{host}" in base_url for host in LOCAL_HOSTS):
        return None
    return default_key_name(block.get("name"))


def secrets_needed(desk: Desk) -> dict[str, list[str]]:
    """Vault name -> who asks for it ("the model provider of agents a, b", "agent ranker", "tool dataforseo")."""
    needed: dict[str, set[str]] = {}
    providers: dict[str, list[str]] = {}  # key -> agents whose provider reads it
    workspace, library = agents_md_of(desk, "workspace"), agents_md_of(desk, "library")
    for document in desk.of_kind(AGENT):
        name = document.name
        resolved = resolve_agent(desk, name) if name else None
        if resolved is None:
            continue
        for secret, where in step_secrets(desk, name).items():
            needed.setdefault(secret, set()).add(f"agent {name}" if where == "agent" else where)
        block = (
            resolved.model.meta.get("provider")
            or (workspace.provider if workspace else None)
            or (library.provider if library else None)
        )
        key = provider_key(block)
        if key:
            needed.setdefault(key, set())
            providers.setdefault(key, []).append(name)
    for document in desk.of_kind(FLOW):
        if document.parsed is None:
            continue
        webhook = flow_of(desk, document).webhook
        secret = webhook.get("secret") if isinstance(webhook, dict) and not webhook_problems(webhook) else None
        if isinstance(secret, str) and secret.strip():
            # Until it is set, every signed request is refused (runs.hook_signing.secret_not_set).
            needed.setdefault(secret.strip(), set()).add(f"the webhook of flow {document.name}")
    out: dict[str, list[str]] = {}
    for secret, where in sorted(needed.items()):
        agents = sorted(providers.get(secret, []))
        said = [f"the model provider of agent{'' if len(agents) == 1 else 's'} {', '.join(agents)}"] if agents else []
        out[secret] = said + sorted(where)
    return out
