"""`foldrun notify test`, `foldrun notifications [set …]`, and
`foldrun webhooks deliveries|redeliver` (the outbound delivery log)."""

from __future__ import annotations

from contextlib import contextmanager

from .client import ApiFailure, CliError, quote_path
from .output import short_time
from .workspace import missing_workspace

CATEGORIES = ("security", "invites", "billing", "account", "run-alerts", "approvals", "low-balance", "product-updates")


def register(subparsers, common) -> None:
    p = subparsers.add_parser("notify", parents=[common], help="test a workspace's notification destination")
    sub = p.add_subparsers(dest="notify_command", metavar="<action>")
    test = sub.add_parser(
        "test", parents=[common], help="send one real message to the saved destination and show what came back"
    )
    test.add_argument("--to", required=True, metavar="WS", help="the workspace")
    test.set_defaults(func=cmd_notify_test)
    p.set_defaults(func=lambda args, ctx: _usage(p))

    p = subparsers.add_parser("notifications", parents=[common], help="which mail you get, by category")
    p.set_defaults(func=cmd_notifications)
    sub = p.add_subparsers(dest="notifications_command", metavar="<action>")
    s = sub.add_parser("set", parents=[common], help="turn a category on or off (per workspace with --to)")
    s.add_argument("category", choices=CATEGORIES, metavar="CATEGORY")
    s.add_argument("state", choices=("on", "off"), metavar="on|off")
    s.add_argument("--to", metavar="WS", help="only for this workspace (run-alerts and approvals)")
    s.set_defaults(func=cmd_notifications_set)

    p = subparsers.add_parser("webhooks", parents=[common], help="outbound webhook deliveries of a workspace")
    sub = p.add_subparsers(dest="webhooks_command", metavar="<action>")
    d = sub.add_parser("deliveries", parents=[common], help="every delivery, its status and attempts")
    d.add_argument("--to", required=True, metavar="WS", help="the workspace")
    d.add_argument("--failed", action="store_true", help="only the ones that gave up")
    d.set_defaults(func=cmd_deliveries)
    r = sub.add_parser("redeliver", parents=[common], help="one attempt now, same id and body, signed afresh")
    r.add_argument("delivery_id", metavar="ID")
    r.add_argument("--to", required=True, metavar="WS", help="the workspace")
    r.set_defaults(func=cmd_redeliver)
    p.set_defaults(func=lambda args, ctx: _usage(p))


def _usage(parser) -> int:
    parser.print_usage()
    return 2


@contextmanager
def naming_what_is_missing(ctx, workspace: str, delivery: str | None = None):
    """The server's bare "Not found." said as the workspace that is not there (with those that are), else the
    delivery (with the workspace's newest)."""
    try:
        yield
    except ApiFailure as exc:
        if exc.status != 404:
            raise
        missing = missing_workspace(ctx, workspace)
        if missing is not None:
            raise missing from None
        if delivery is None:
            raise
        rows = ctx.api.get(f"/api/workspaces/{quote_path(workspace)}/notify/deliveries").get("deliveries", [])
        ids = [str(d["id"]) for d in rows[:5]]
        newest = f"its newest are {', '.join(ids)}" if ids else "it has none in the last 30 days"
        raise ApiFailure(
            f"There is no delivery {delivery} in {workspace}; {newest} "
            f"(`foldrun webhooks deliveries --to {workspace}` lists them).",
            status=404,
            code="not_found",
            details={"what": "delivery", "name": delivery, "where": workspace, "choices": ids},
        ) from None


def cmd_notify_test(args, ctx) -> int:
    with naming_what_is_missing(ctx, args.to):
        answer = ctx.api.post(f"/api/workspaces/{quote_path(args.to)}/notify/test", json={})
    where = answer.get("to") or answer.get("destination", "destination")
    if answer.get("ok"):
        text = f"Sent to {where}: {answer.get('message', '')}".rstrip()
    else:
        text = f"Not delivered to {where}: {answer.get('message', '')}".rstrip()
    ctx.out.result(answer, text)
    return 0 if answer.get("ok") else 1


def _category_rows(data: dict) -> list[dict]:
    rows = []
    for entry in data.get("categories", []):
        state = "on (locked)" if entry.get("locked") else ("on" if entry.get("enabled") else "off")
        off_in = [w["workspace"] for w in entry.get("workspaces", []) if not w.get("enabled")]
        on_in = [w["workspace"] for w in entry.get("workspaces", []) if w.get("enabled")]
        if entry.get("perWorkspace") and off_in and on_in:
            state = (
                f"{state}; off for {', '.join(off_in)}" if entry.get("enabled") else f"off; on for {', '.join(on_in)}"
            )
        rows.append({"category": entry["category"], "state": state, "what": entry.get("what", "")})
    return rows


def cmd_notifications(args, ctx) -> int:
    data = ctx.api.get("/api/me/notifications")
    if ctx.out.json_mode:
        ctx.out.json(data)
        return 0
    ctx.out.table(_category_rows(data), [("category", "CATEGORY"), ("state", "MAIL"), ("what", "WHAT")])
    return 0


def cmd_notifications_set(args, ctx) -> int:
    body: dict = {"category": args.category, "enabled": args.state == "on", "via": "cli"}
    if args.to:
        body["workspace"] = args.to
    data = ctx.api.patch("/api/me/notifications", json=body)
    where = f" for {args.to}" if args.to else ""
    ctx.out.result(data, f"{args.category} mail is {args.state}{where}.")
    return 0


def cmd_deliveries(args, ctx) -> int:
    params = {"failed": "1"} if args.failed else None
    with naming_what_is_missing(ctx, args.to):
        data = ctx.api.get(f"/api/workspaces/{quote_path(args.to)}/notify/deliveries", params=params)
    rows = []
    for d in data.get("deliveries", []):
        last = (d.get("attempts") or [{}])[-1]
        answer = str(last.get("statusCode") or last.get("error") or "")
        rows.append(
            {
                "id": d["id"],
                "event": d["event"],
                "status": d["status"],
                "attempts": d["attemptsMade"],
                "last": answer,
                "when": d["createdAt"],
            }
        )
    if ctx.out.json_mode:
        ctx.out.json(data)
        return 0
    ctx.out.table(
        rows,
        [
            ("id", "DELIVERY"),
            ("event", "EVENT"),
            ("status", "STATUS"),
            ("attempts", "ATTEMPTS"),
            ("last", "LAST ANSWER"),
            ("when", "WHEN", short_time),
        ],
        empty="No outbound webhook deliveries in the last 30 days.",
    )
    return 0


def cmd_redeliver(args, ctx) -> int:
    if not args.delivery_id.startswith("dlv_"):
        raise CliError(f"{args.delivery_id} is not a delivery id; they look like dlv_….")
    with naming_what_is_missing(ctx, args.to, args.delivery_id):
        data = ctx.api.post(
            f"/api/workspaces/{quote_path(args.to)}/notify/deliveries/{quote_path(args.delivery_id)}/redeliver",
            json={},
        )
    attempt = data.get("attempt", {})
    if attempt.get("ok"):
        text = f"Redelivered {args.delivery_id}: the receiver answered {attempt.get('statusCode')}."
    else:
        text = f"Redelivered {args.delivery_id}: it failed — {(attempt.get('error') or '').rstrip('.')}."
    ctx.out.result(data, text)
    return 0 if attempt.get("ok") else 1
