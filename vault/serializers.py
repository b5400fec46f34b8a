"""What the API says about a secret: names, scope, who and when — never a value."""
from __future__ import annotations

from typing import Any

from vault.models import ProviderCheck, Secret


def _who(user) -> str | None:
    return user.email if user is not None else None


def secret_data(row: Secret, *, overridden: bool = False) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": row.public_id,
        "name": row.name,
        "scope": row.scope,
        "workspace": row.workspace.name if row.workspace_id else None,
        "kind": row.kind,
        "hosts": list(row.hosts or []),
        "created_by": _who(row.created_by),
        "created_at": row.created_at.isoformat(),
        "updated_by": _who(row.updated_by),
        "updated_at": row.updated_at.isoformat(),
    }
    if row.kind == "oauth2":
        data["refreshable"] = row.refreshable
        data["expires_at"] = row.expires_at.isoformat() if row.expires_at else None
    if overridden:
        data["overridden"] = True
    return data


def check_data(row: ProviderCheck) -> dict[str, Any]:
    return {
        "id": row.public_id,
        "endpoint": row.endpoint,
        "format": row.format,
        "provider": row.provider or None,
        "key": {"name": row.key_name or None, "scope": row.key_scope or None},
        "model": row.model or None,
        "used_by": list(row.used_by or []),
        "verdict": row.verdict or None,
        "message": row.message or None,
        "checked_at": row.checked_at.isoformat() if row.checked_at else None,
        "broken_since": row.broken_since.isoformat() if row.broken_since else None,
    }
