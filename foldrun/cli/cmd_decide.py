"""Finishing what a run started: the dashboard's decisions, from the command line.

    foldrun approve RUN STEP [--to WS]        let a `!` step go on
    foldrun reject RUN STEP [--to WS]         stop it there
    foldrun answer RUN STEP TEXT [--to WS]    answer an `ask:` step's question
    foldrun cancel RUN [--to WS]              stop a run that has not finished

The workspace is --to, else the one this desk folder was pushed to
(./.foldrun/workspace). Permissions are the server's, as on the dashboard:
a viewer is refused, another account's run is not found.
"""

from __future__ import annotations

from .client import ApiFailure, CliError, quote_path
from .cmd_run import run_not_found
from .workspace import desk_workspace, missing_workspace


def register(subparsers, common) -> None:
    for verb, text in (
        ("approve", "approve a step that waits for a decision"),
        ("reject", "reject a step that waits for a decision; the run stops there"),
    ):
        p = subparsers.add_parser(verb, parents=[common], help=text)
        p.add_argument("run", metavar="RUN", help="the run's id (run_…)")
        p.add_argument("step", metavar="STEP", type=int, help="the step's number in the flow")
        _to(p)
        p.set_defaults(func=cmd_decide, decision=verb)

    p = subparsers.add_parser("answer", parents=[common], help="answer the question an `ask:` step put")
    p.add_argument("run", metavar="RUN", help="the run's id (run_…)")
    p.add_argument("step", metavar="STEP", type=int, help="the step's number in the flow")
    p.add_argument("text", metavar="TEXT", help="the answer (quote it)")
    _to(p)
    p.set_defaults(func=cmd_answer)

    p = subparsers.add_parser("cancel", parents=[common], help="cancel a run that has not finished")
    p.add_argument("run", metavar="RUN", help="the run's id (run_…)")
    _to(p)
    p.set_defaults(func=cmd_cancel)


def _to(parser) -> None:
    parser.add_argument("--to", metavar="WS", help="the workspace the run is in (default: ./.foldrun/workspace)")


def run_path(workspace: str, run_id: str) -> str:
    return f"/api/workspaces/{quote_path(workspace)}/runs/{quote_path(run_id)}"


def name_the_missing(ctx, exc: ApiFailure, workspace: str, run_id: str) -> ApiFailure:
    """The server answers every missing thing (and everything of another
    account) with the same "Not found."; say which one, without telling an
    outsider any more than that."""
    if exc.status != 404:
        return exc
    return missing_workspace(ctx, workspace) or run_not_found(ctx, workspace, run_id)


def _post(ctx, workspace: str, run_id: str, tail: str, body: dict) -> dict:
    try:
        return ctx.api.post(f"{run_path(workspace, run_id)}/{tail}", body)
    except ApiFailure as exc:
        raise name_the_missing(ctx, exc, workspace, run_id) from None


def _pending_kind(ctx, workspace: str, run_id: str, step: int) -> str | None:
    """The kind (gate/ask) of the decision step `step` waits for, if any."""
    try:
        run = ctx.api.get(run_path(workspace, run_id))
    except ApiFailure as exc:
        raise name_the_missing(ctx, exc, workspace, run_id) from None
    for approval in run.get("approvals") or []:
        if approval.get("step") == step and approval.get("state") == "pending":
            return approval.get("kind")
    return None


def cmd_decide(args, ctx) -> int:
    workspace = desk_workspace(args.to)
    if args.decision == "approve" and _pending_kind(ctx, workspace, args.run, args.step) == "ask":
        raise CliError(
            f"Step {args.step} of {args.run} asked a question; answer it with "
            f'`foldrun answer {args.run} {args.step} "TEXT"`.',
            exit_code=2,
        )
    answer = _post(ctx, workspace, args.run, f"steps/{args.step}/{args.decision}", {})
    done = "Approved" if args.decision == "approve" else "Rejected"
    after = "the run goes on" if args.decision == "approve" else "the run stops there"
    ctx.out.result(
        answer,
        f"{done} step {args.step} of {args.run} in {workspace}; {after}. "
        f"See it with `foldrun report {args.run} --to {workspace}`.",
    )
    return 0


def cmd_answer(args, ctx) -> int:
    workspace = desk_workspace(args.to)
    if not args.text.strip():
        raise CliError("The answer is empty; give the text to answer with.", exit_code=2)
    answer = _post(ctx, workspace, args.run, f"steps/{args.step}/approve", {"answer": args.text})
    ctx.out.result(
        answer,
        f"Answered step {args.step} of {args.run} in {workspace}; the step runs again with "
        f"the answer. See it with `foldrun report {args.run} --to {workspace}`.",
    )
    return 0


def cmd_cancel(args, ctx) -> int:
    workspace = desk_workspace(args.to)
    run = _post(ctx, workspace, args.run, "cancel", {})
    ctx.out.result(run, f"Cancelled {args.run} ({run.get('name', '')} in {workspace}); it is {run.get('status')}.")
    return 0
