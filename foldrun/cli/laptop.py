"""What the CLI does on this machine rather than on a server: a flow run with
the engine (`run --local`), a tool test (`tool test --local`), a probe with
the laptop vault's key (`probe --local`), the secrets a desk needs (`check`),
the laptop vault itself and a local run's webhook.

Every `foldrun` call builds its parser from all the `cmd_*` modules, so those
keep to the CLI's own light imports (httpx, PyYAML, the contract); this module
imports the engine, the laptop vault and the local notifier, and is loaded by
`foldrun.cli.loader.laptop()` only when a command works here — `foldrun
--help` and the server commands never pay for it (about half the CLI's start
on a loaded two-core machine).
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from foldrun.contract import Desk
from foldrun.contract.model import agents_md_of
from foldrun.engine.local import LocalHost
from foldrun.engine.localrun import report_lines, run_flow_local
from foldrun.engine.needs import secrets_needed
from foldrun.engine.resolve import ResolveError
from foldrun.engine.step import StepRequest
from foldrun.engine.tooltest import test_tool
from foldrun.gallery import gallery_files
from foldrun.providers.client import (MissingSecret, ModelClient, ProviderConfigError, ProviderError,
                                      ProviderRefusal, supply_from_block)
from foldrun.providers.probe import format_probe, run_probe
from notify.laptop import local_payload, notify_local_run
from vault import oauth
from vault.crypto import UndecryptableSecret, VaultKeyError
from vault.local import LocalVault
from vault.oauth import OAuthError

from . import gallery_copy
from .client import CliError, quote_path
from .cmd_probe import print_probe
from .cmd_run import ask_on_terminal, print_report, runs_dir

__all__ = ["LocalVault", "oauth", "report_lines"]  # also for cmd_vault and cmd_run's report


def run_local(args, ctx, inputs: dict) -> int:
    """`foldrun run FLOW --local`: the flow through the engine here, its record kept under the config folder."""
    root = Path(args.path).resolve()
    if not root.is_dir():
        raise CliError(f"{args.path} is not a folder; give the desk folder with --path.")
    try:
        secrets = {k: v for k, v in LocalVault(ctx.config_dir).values().items() if v is not None}
    except Exception as exc:  # noqa: BLE001 - a laptop with no vault yet runs with no secrets
        ctx.out.note(f"the laptop vault could not be read ({exc}); running with no secrets")
        secrets = {}

    def on_step(step: dict) -> None:
        mark = "✓" if step["status"] == "completed" else "✗"
        ctx.out.line(f"{mark} step {step['step']} [[{step['agent']}]] {step['status']}"
                     + (f" — {step['error']}" if step["error"] else f" — {(step['output'].splitlines() or [''])[0][:120]}"))

    # The shelf from the platform signed in to (tools.md, "On a laptop"); offline, the last copy, said so.
    gallery, said = gallery_copy.for_run(ctx)
    if said:
        ctx.out.note(said)
    record = run_flow_local(Desk.from_folder(root, gallery=gallery), args.flow, secrets=secrets, inputs=inputs, is_test=args.test,
                            ask=ask_on_terminal, on_step=None if ctx.out.json_mode else on_step, root=root,
                            venv_cache=Path(ctx.config_dir) / "venvs")
    if said:
        record.setdefault("notes", []).append(said)
    runs = runs_dir(ctx)
    runs.mkdir(parents=True, exist_ok=True)
    (runs / f"{record['id']}.json").write_text(json.dumps(record, indent=2, ensure_ascii=False), encoding="utf-8")
    (runs / "last").write_text(record["id"], encoding="utf-8")
    notify_local(ctx, root, record, secrets)
    print_report(ctx, record)
    return 0 if record["status"] == "completed" else 1


# A laptop run's status → the notification event it is (cancelled tells no one).
_LOCAL_EVENTS = {"completed": "completed", "failed": "failed", "awaiting-approval": "awaiting-approval"}


def notify_local(ctx, root: Path, record: dict, secrets: dict[str, str]) -> None:
    """A laptop install sends the desk's webhook once, with the server's
    headers, and keeps no log (spec: notifications.md)."""
    event = _LOCAL_EVENTS.get(record["status"])
    if event == "completed" and record.get("verdict") == "BLOCKED":
        event = "blocked"
    if event is None:
        return
    payload = local_payload(
        workspace=root.name, run_id=record["id"], flow=record["name"], status=record["status"],
        verdict=record.get("verdict"), headline=record.get("headline", ""), summary=record.get("summary", ""),
        cost_usd=float(record.get("cost_usd") or 0), started_at=record.get("started_at"),
        finished_at=record.get("finished_at"), event=event, error=record.get("error") or "",
    )
    outcome = notify_local_run(Desk.from_folder(root), event=event, payload=payload, secrets=secrets)
    if outcome is not None and not outcome.ok:
        ctx.out.note(f"the {event} notification was not delivered: {outcome.error or outcome.status_code}")


def test_local(args, ctx, arguments: dict) -> dict:
    """`foldrun tool test NAME --local`: the tool as the named agent calls it, with the laptop vault's secrets."""
    root = Path(args.path).resolve()
    if not root.is_dir():
        raise CliError(f"{args.path} is not a folder; give the desk folder with --path.")
    try:
        secrets = {k: v for k, v in LocalVault(ctx.config_dir).values().items() if v is not None}
    except Exception as exc:  # noqa: BLE001 - a laptop with no vault yet tests with no secrets
        ctx.out.note(f"the laptop vault could not be read ({exc}); testing with no secrets")
        secrets = {}
    desk = Desk.from_folder(root, gallery=gallery_files())
    request = StepRequest(run_id="tool-test", label="tool test", agent=args.agent or "tool-test", task="",
                          allow_private_urls=True, fence_required=False)
    try:
        return test_tool(desk, args.name, arguments, LocalHost(secrets), request, agent=args.agent,
                         operation=args.operation)
    except ResolveError as exc:
        raise CliError(str(exc)) from None


def desk_provider(root: Path):
    """The provider block of the desk's AGENTS.md in `root` (None when it has none)."""
    path = root / "AGENTS.md"
    if not path.is_file():
        return None
    defaults = agents_md_of(Desk(files={"AGENTS.md": path.read_text(encoding="utf-8")}))
    return defaults.provider if defaults is not None else None


def probe_local(args, ctx, provider) -> int:
    """`foldrun probe MODEL --local`: the probe from this machine, its key from the laptop vault."""
    vault = LocalVault(ctx.config_dir)
    if provider is None:
        provider = desk_provider(Path(args.path))
    block = provider if isinstance(provider, dict) else {"name": provider or "anthropic"}
    block = {**block, "model": args.model}

    def resolve(name: str) -> str | None:
        # A key the laptop vault cannot open or refresh is refused by name, never read as empty.
        try:
            return vault.get(name)
        except (UndecryptableSecret, VaultKeyError, OAuthError) as exc:
            raise ProviderConfigError(str(exc)) from None

    try:
        supply = supply_from_block(block, resolve)
    except MissingSecret as exc:
        raise CliError(f"the provider key {exc.name} is not in the laptop vault — "
                       f"foldrun secrets set {exc.name} --local") from None
    except ProviderConfigError as exc:
        raise CliError(str(exc)[0].upper() + str(exc)[1:] + " (the laptop vault: `foldrun secrets set NAME --local`).") from None
    lines: list[str] = []
    with ModelClient(supply, on_line=lines.append, timeout=120.0) as client:
        try:
            result = run_probe(client, provider=block)
        except (ProviderRefusal, ProviderError) as exc:
            message = exc.line if isinstance(exc, ProviderRefusal) else exc.message
            return print_probe(ctx, {"error": message, "endpoint": supply.endpoint(), "requests": client.requests})
    data = result.as_dict()
    data.update({"ok": result.closed, "endpoint": supply.endpoint(), "printed": format_probe(result, endpoint=supply.endpoint()),
                 "lines": lines})
    return print_probe(ctx, data)


def vault_names(ctx, workspace: str | None) -> tuple[set[str] | None, str, str]:
    """The names the vault that runs will read holds, how a sentence names it, and the flag that sets one."""
    if workspace and ctx.signed_in:
        try:
            rows = ctx.api.list(f"/api/workspaces/{quote_path(workspace)}/secrets")
            return {str(r.get("name")) for r in rows if isinstance(r, dict)}, f"the {workspace} vault", f"--to {workspace}"
        except CliError:
            return None, f"the {workspace} vault", f"--to {workspace}"
    try:
        return {str(r.get("name")) for r in LocalVault(ctx.config_dir).list()}, "the laptop vault", "--local"
    except Exception:  # noqa: BLE001 - a laptop with no vault yet holds nothing
        return set(), "the laptop vault", "--local"


def needed_secrets(ctx, desk: Desk, workspace: str | None) -> list[dict[str, Any]]:
    """Each secret the desk needs (`check`): its name, who asks for it, the vault its runs read, whether that
    vault holds it (None when the vault could not be asked) and the command that sets it."""
    needed = secrets_needed(desk)
    if not needed:
        return []
    held, vault, flag = vault_names(ctx, workspace)
    return [{"name": name, "for": list(where), "vault": vault, "set": None if held is None else name in held,
             "fix": f"foldrun secrets set {name} {flag}"} for name, where in needed.items()]
