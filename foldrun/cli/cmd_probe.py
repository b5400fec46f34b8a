"""`foldrun probe MODEL` and `foldrun account providers`.

probe: can this model drive an agent through this endpoint? A real tool
loop — a tool call made, its result read back — with the stop reason, the
requests and the cost printed. On the server (keys from the vault) by
default; `--local` asks from this machine with the laptop vault.

account providers: the daily key probe's table — ✓, ✗ with the verdict, or
· for never checked; `--check` asks now. A dead key exits non-zero, so a
deploy script can refuse to continue.
"""

from __future__ import annotations

import json


from .client import LONG_TIMEOUT, CliError, quote_path
from .loader import laptop
from .output import short_time

BROKEN = {"credential", "not-found", "unreachable", "provider-error"}


def register(subparsers, common) -> None:
    p = subparsers.add_parser("probe", parents=[common], help="drive a real tool loop through a model's endpoint")
    p.add_argument("model", metavar="MODEL")
    p.add_argument(
        "--provider",
        metavar="P",
        help="a preset name, or a JSON provider block (default: the workspace's AGENTS.md, else anthropic)",
    )
    where = p.add_mutually_exclusive_group()
    where.add_argument("--to", metavar="WS", help="use this workspace's vault and defaults")
    where.add_argument("--local", action="store_true", help="ask from this machine with the laptop vault")
    p.add_argument(
        "--path",
        default=".",
        metavar="DIR",
        help="with --local: the desk folder whose AGENTS.md gives the provider (default: here)",
    )
    p.set_defaults(func=cmd_probe)

    if "account" in subparsers.choices:  # another module owns `account`; leave it be
        return
    a = subparsers.add_parser("account", parents=[common], help="account-wide views")
    sub = a.add_subparsers(dest="account_command", metavar="<view>")
    pr = sub.add_parser("providers", parents=[common], help="is each provider key still good?")
    pr.add_argument("--check", action="store_true", help="check every key now instead of showing the last check")
    pr.set_defaults(func=cmd_account_providers)
    se = sub.add_parser("search-engine", parents=[common], help="the account's own search engine (a SearXNG URL)")
    se_sub = se.add_subparsers(dest="search_engine_command", metavar="<set|show|unset>")
    se_set = se_sub.add_parser("set", parents=[common], help="search through this SearXNG instance")
    se_set.add_argument("url", metavar="URL")
    se_set.set_defaults(func=cmd_search_engine_set)
    se_sub.add_parser("show", parents=[common], help="the engine a search step asks").set_defaults(
        func=cmd_search_engine_show
    )
    se_sub.add_parser("unset", parents=[common], help="use the install's default again").set_defaults(
        func=lambda args, ctx: _print_search_engine(ctx, ctx.api.patch("/api/account", {"search_engine_url": ""}))
    )
    se.set_defaults(func=cmd_search_engine_show)
    a.set_defaults(func=lambda args, ctx: (a.print_help(), 2)[1])


def _provider(text: str | None):
    if text is None:
        return None
    stripped = text.strip()
    if stripped.startswith("{"):
        try:
            return json.loads(stripped)
        except ValueError:
            raise CliError(
                '--provider: give a preset name or a JSON block like \'{"name": "openai", "format": "responses"}\'.'
            ) from None
    return stripped


def cmd_probe(args, ctx) -> int:
    provider = _provider(args.provider)
    if args.local:
        return laptop(ctx).probe_local(args, ctx, provider)
    path = f"/api/workspaces/{quote_path(args.to)}/probe" if args.to else "/api/probe"
    body: dict = {"model": args.model}
    if provider is not None:
        body["provider"] = provider
    data = ctx.api.post(path, body, timeout=LONG_TIMEOUT)
    return print_probe(ctx, data)


def print_probe(ctx, data: dict) -> int:
    if data.get("error"):
        ctx.out.result(
            data, [f"probe failed at {data.get('endpoint')}: {data['error']}", f"requests: {data.get('requests', 0)}"]
        )
        return 1
    lines = list(data.get("printed") or [])
    lines += [f"note: {line}" for line in data.get("lines") or []]
    if not data.get("ok"):
        lines.append("the tool loop did not close: this model cannot drive an agent here as it stands")
    ctx.out.result(data, lines)
    return 0 if data.get("ok") else 1


def _print_search_engine(ctx, data: dict) -> int:
    own, effective = data.get("search_engine_url") or "", data.get("search_engine")
    if own:
        line = f"{data.get('name')} searches through its own engine: {own}"
    elif effective:
        line = f"{data.get('name')} has no engine of its own; searching uses the install's default: {effective}"
    else:
        line = (
            f"{data.get('name')} has no search engine, and the install has no default — "
            "`foldrun account search-engine set URL` gives it one"
        )
    ctx.out.result(data, [line])
    return 0


def cmd_search_engine_set(args, ctx) -> int:
    return _print_search_engine(ctx, ctx.api.patch("/api/account", {"search_engine_url": args.url}))


def cmd_search_engine_show(args, ctx) -> int:
    return _print_search_engine(ctx, ctx.api.get("/api/account"))


def _mark(row: dict) -> str:
    verdict = row.get("verdict")
    if not verdict:
        return "·"
    if verdict in BROKEN:
        return f"✗ {verdict}"
    return "✓" if verdict == "ok" else f"✓ {verdict}"


def cmd_account_providers(args, ctx) -> int:
    data = ctx.api.post("/api/account/providers") if args.check else ctx.api.get("/api/account/providers")
    rows = data.get("results", [])
    for row in rows:
        row["mark"] = _mark(row)
        key = row.get("key") or {}
        row["key_words"] = f"{key.get('name')} ({key.get('scope')})" if key.get("name") else "-"
    if ctx.out.json_mode:
        ctx.out.json(data)
    else:
        ctx.out.table(
            rows,
            [
                ("mark", ""),
                ("endpoint", "ENDPOINT"),
                ("key_words", "KEY"),
                ("model", "MODEL"),
                ("checked_at", "CHECKED", short_time),
                ("message", "WHY"),
            ],
            empty="No provider blocks in this account's files.",
        )
    return 1 if any(r.get("verdict") in BROKEN for r in rows) else 0
