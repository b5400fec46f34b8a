"""`foldrun tool test NAME`: call one tool with typed arguments from where a run would call it, and print
the raw result — the Tool Test button from a terminal, no model call (spec/tools.md, The Test button).

    foldrun tool test web --to rank-desk --arg action=fetch --arg url=https://example.com/
    foldrun tool test web --local --agent researcher --arg action=search --arg query=leases --json

`--arg k=v` is repeatable; a value that reads as JSON (a number, true, a list, an object) is sent as that,
anything else as the text. With --local the desk folder (--path, default here) and the laptop vault are
used; otherwise the workspace on the server (--to, else ./.foldrun/workspace).
"""

from __future__ import annotations

import json


from .client import LONG_TIMEOUT, CliError, quote_path
from .cmd_run import workspace_name
from .loader import laptop


def register(subparsers, common) -> None:
    p = subparsers.add_parser("tool", parents=[common], help="a tool, on its own")
    sub = p.add_subparsers(dest="tool_command", metavar="<test>")
    t = sub.add_parser("test", parents=[common], help="call a tool with typed arguments and print the raw result")
    t.add_argument("name", metavar="NAME")
    where = t.add_mutually_exclusive_group()
    where.add_argument("--to", metavar="WS", help="the workspace to call it from (default: ./.foldrun/workspace)")
    where.add_argument("--local", action="store_true", help="call it on this machine, from a desk folder")
    t.add_argument("--path", default=".", metavar="DIR", help="with --local: the desk folder (default: here)")
    t.add_argument("--agent", metavar="A", help="call it as this agent would (its web: block, language, secrets)")
    t.add_argument("--arg", action="append", default=[], metavar="K=V", help="an argument (repeatable)")
    t.add_argument("--operation", metavar="OP", help="for a tool offering several: which one")
    t.set_defaults(func=cmd_tool_test)
    p.set_defaults(func=lambda args, ctx: (p.print_help(), 2)[1])


def parse_args(pairs: list[str]) -> dict:
    arguments: dict = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise CliError(f"--arg {pair}: write it as name=value.", exit_code=2)
        try:
            parsed = json.loads(value)
            arguments[key.strip()] = parsed if not isinstance(parsed, str) else value
        except ValueError:
            arguments[key.strip()] = value
    return arguments


def cmd_tool_test(args, ctx) -> int:
    arguments = parse_args(args.arg)
    if args.local:
        answer = laptop(ctx).test_local(args, ctx, arguments)
    else:
        body: dict = {"arguments": arguments}
        if args.agent:
            body["agent"] = args.agent
        if args.operation:
            body["operation"] = args.operation
        answer = ctx.api.post(
            f"/api/workspaces/{quote_path(workspace_name(args.to))}/tools/{quote_path(args.name)}/test",
            body,
            timeout=LONG_TIMEOUT,
        )
    if ctx.out.json_mode:
        ctx.out.json(answer)
    else:
        ctx.out.line(str(answer.get("result") or ""))
    return 0 if answer.get("ok") else 1
