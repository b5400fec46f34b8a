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

import http.server
import json
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from foldrun.contract import Desk
from foldrun.contract.model import agents_md_of, find_flow, flow_choices, flow_names
from foldrun.engine.local import LocalHost
from foldrun.engine.localrun import report_lines, run_flow_local
from foldrun.engine.resolve import ResolveError
from foldrun.engine.step import StepRequest
from foldrun.engine.tooltest import test_tool
from foldrun.gallery import gallery_files
from foldrun.providers.client import (
    MissingSecret,
    ModelClient,
    ProviderConfigError,
    ProviderError,
    ProviderRefusal,
    supply_from_block,
)
from foldrun.providers.probe import format_probe, run_probe
from notify.laptop import local_payload, notify_local_run
from vault import oauth
from vault.crypto import UndecryptableSecret, VaultKeyError
from vault.local import LocalVault
from vault.oauth import OAuthError

from . import gallery_copy
from .client import CliError
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
        ctx.out.line(
            f"{mark} step {step['step']} ({step['agent']}) {step['status']}"
            + (f" — {step['error']}" if step["error"] else f" — {(step['output'].splitlines() or [''])[0][:120]}")
        )

    # The shelf from the platform signed in to (tools.md, "On a laptop"); offline, the last copy, said so.
    gallery, said = gallery_copy.for_run(ctx)
    if said:
        ctx.out.note(said)
    desk = Desk.from_folder(root, gallery=gallery)
    if find_flow(desk, args.flow) is None:
        # Said before anything starts: no run record, no failed-run notification for a typo.
        names = flow_names(desk)
        raise CliError(
            f"There is no flow {args.flow} in {root} (flows/{args.flow}.md); {flow_choices(names)}.",
            code="not_found",
            details={"what": "flow", "name": args.flow, "where": str(root), "choices": names},
        )
    record = run_flow_local(
        desk,
        args.flow,
        secrets=secrets,
        inputs=inputs,
        is_test=args.test,
        ask=ask_on_terminal,
        on_step=None if ctx.out.json_mode else on_step,
        root=root,
        venv_cache=Path(ctx.config_dir) / "venvs",
    )
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
        workspace=root.name,
        run_id=record["id"],
        flow=record["name"],
        status=record["status"],
        verdict=record.get("verdict"),
        headline=record.get("headline", ""),
        summary=record.get("summary", ""),
        cost_usd=float(record.get("cost_usd") or 0),
        started_at=record.get("started_at"),
        finished_at=record.get("finished_at"),
        event=event,
        error=record.get("error") or "",
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
    request = StepRequest(
        run_id="tool-test",
        label="tool test",
        agent=args.agent or "tool-test",
        task="",
        allow_private_urls=True,
        fence_required=False,
    )
    try:
        return test_tool(
            desk, args.name, arguments, LocalHost(secrets), request, agent=args.agent, operation=args.operation
        )
    except ResolveError as exc:
        said = str(exc)
        raise CliError(said[:1].upper() + said[1:] + ".", code="not_found", details=exc.details) from None


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
        raise CliError(
            f"the provider key {exc.name} is not in the laptop vault — foldrun secrets set {exc.name} --local"
        ) from None
    except ProviderConfigError as exc:
        raise CliError(
            str(exc)[0].upper() + str(exc)[1:] + " (the laptop vault: `foldrun secrets set NAME --local`)."
        ) from None
    lines: list[str] = []
    with ModelClient(supply, on_line=lines.append, timeout=120.0) as client:
        try:
            result = run_probe(client, provider=block)
        except (ProviderRefusal, ProviderError) as exc:
            message = exc.line if isinstance(exc, ProviderRefusal) else exc.message
            return print_probe(ctx, {"error": message, "endpoint": supply.endpoint(), "requests": client.requests})
    data = result.as_dict()
    data.update(
        {
            "ok": result.closed,
            "endpoint": supply.endpoint(),
            "printed": format_probe(result, endpoint=supply.endpoint()),
            "lines": lines,
        }
    )
    return print_probe(ctx, data)


# connect's redirect --------------------------------------------------------
class _Catcher(http.server.BaseHTTPRequestHandler):
    """Catches the provider's redirect on localhost:8642/callback."""

    result: dict[str, str] = {}
    done = threading.Event()

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path != "/callback":
            self.send_response(404)
            self.send_header("content-length", "0")
            self.end_headers()
            return
        type(self).result = {k: v[0] for k, v in parse_qs(parts.query).items()}
        text = (
            "Connected — you can close this tab and go back to the terminal."
            if "code" in self.result
            else "The provider did not grant access; see the terminal."
        )
        data = f"<!doctype html><title>foldrun connect</title><p>{text}</p>".encode()
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        type(self).done.set()


def redirect_catcher(port: int) -> tuple[http.server.ThreadingHTTPServer, type[_Catcher]]:
    """`foldrun connect`'s server on localhost:PORT and the handler whose `done` and `result` say what came
    back (OSError when the port is taken)."""
    handler = type("Catcher", (_Catcher,), {"result": {}, "done": threading.Event()})
    return http.server.ThreadingHTTPServer(("127.0.0.1", port), handler), handler
