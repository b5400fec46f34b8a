"""A whole flow on a laptop, no server: `foldrun run FLOW --local`.

The same engine (`run_step`) and the same flow helpers as the server; steps
run one after another (an `each:` fan-out runs its instances in turn), a gate
or `ask:` asks on the terminal (or stops the run as parked when there is no
one to ask), `wait: event` is not available locally. The record is a plain
dict, saved as JSON under `~/.foldrun/runs/` by the CLI; memory/ and state/
writes go back into the desk folder.
"""

from __future__ import annotations

import datetime as dt
import secrets as pysecrets
from decimal import Decimal
from pathlib import Path
from typing import Callable

from foldrun.contract import Desk
from foldrun.contract.model import find_flow, flow_choices, flow_names

from .cache_summary import cache_line, summarise
from .flow import check_verify, fill_task, headline_of, plan_from_steps, split_items, verdict_of
from .local import LocalHost
from .podcard import pod_card
from .step import StepRequest, run_step

Ask = Callable[[str], str | None]  # a question -> the answer (None: nobody to ask)


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def new_local_id() -> str:
    return "run_local_" + pysecrets.token_hex(6)


def run_flow_local(
    desk: Desk,
    flow_name: str,
    *,
    secrets: dict[str, str],
    inputs: dict | None = None,
    is_test: bool = False,
    ask: Ask | None = None,
    on_step: Callable[[dict], None] | None = None,
    on_trace: Callable[[str, dict], None] | None = None,
    root: Path | None = None,
    venv_cache: Path | None = None,
) -> dict:
    """Run `flow_name` from `desk` to the end; returns the run's record."""
    flow = find_flow(desk, flow_name)
    record: dict = {
        "id": new_local_id(),
        "name": flow_name,
        "kind": "flow",
        "trigger": "cli",
        "is_test": is_test,
        "status": "running",
        "verdict": None,
        "headline": "",
        "summary": "",
        "error": "",
        "cost_usd": "0",
        "tokens_in": 0,
        "tokens_out": 0,
        "started_at": _now(),
        "finished_at": None,
        "inputs": dict(inputs or {}),
        "steps": [],
    }
    if flow is None:
        return _end(
            record,
            "failed",
            f"there is no flow {flow_name} in this desk (flows/{flow_name}.md); {flow_choices(flow_names(desk))}",
        )
    errors = [p for p in flow.problems if p.level == "error"]
    if errors:
        return _end(record, "failed", f"flows/{flow_name}.md: line {errors[0].line}: {errors[0].message}")
    merged = {**(flow.inputs or {}), **(inputs or {})}
    record["inputs"] = merged
    budget = Decimal(str(flow.budget)) if flow.budget else None
    spent = Decimal("0")
    requests: list[dict] = []  # every model request's line: the run's cache line is their sum
    outputs: dict[int, str] = {}
    files = dict(desk.files)
    for spec in plan_from_steps(flow.steps):
        number = spec["number"]
        if spec["gate"] or spec["ask"]:
            question = spec["ask"] or f"Run step {number} ({spec['agent']})? yes/no"
            answer = ask(question) if ask else None
            if answer is None:
                return _end(
                    record,
                    "awaiting-approval",
                    f"step {number} ({spec['agent']}) waits for a person; with --local nobody is there to decide",
                )
            if spec["gate"] and not spec["ask"] and answer.strip().lower() not in ("y", "yes", "approve"):
                return _end(record, "cancelled", f"step {number} ({spec['agent']}) was rejected")
        else:
            answer = None
        if spec["wait_event"]:
            return _end(
                record,
                "failed",
                f"step {number} waits for event {spec['wait_event']}, which only a server run can receive",
            )
        task = fill_task(spec["task"], merged, outputs)
        items: list[str | None] = [None]
        if spec["each"]:
            try:
                items = split_items(outputs.get(number - 1, ""), spec["each"])
            except ValueError as exc:
                return _end(record, "failed", f"step {number} ({spec['agent']}) failed: {exc}")
        replies: list[str] = []
        failed = ""
        for instance, item in enumerate(items):
            label = f"{number}" if item is None else f"{number}.{instance + 1}"
            step_task = task if item is None else fill_task(spec["task"], merged, outputs, item)
            for attempt in range(1, int(spec["retry"] or 0) + 2):
                host = LocalHost(
                    secrets, budget=budget, spent=spent, on_trace=on_trace, label=f"step {label} ({spec['agent']})"
                )
                request = StepRequest(
                    run_id=record["id"],
                    label=label,
                    agent=spec["agent"],
                    task=step_task,
                    limits=spec["limits"],
                    is_test=is_test,
                    answer=answer if spec["ask"] else None,
                    inputs=merged,
                    allow_private_urls=True,
                    fence_required=False,
                    **({"venv_cache": venv_cache} if venv_cache else {}),
                )
                result = run_step(Desk(files=files, library=desk.library, gallery=desk.gallery), request, host)
                spent = host.spent
                problem = None
                if result.status == "completed":
                    problem = check_verify(spec["verify"], result.output, files, {**result.writes, **result.outputs})
                error = problem or ("" if result.status == "completed" else result.error or result.status)
                step_record = {
                    "step": label,
                    "agent": spec["agent"],
                    "item": item,
                    "attempt": attempt,
                    "status": "failed" if error else "completed",
                    "output": result.output,
                    "error": error,
                    "limits": result.limits_line,
                    "cost_usd": str(result.cost),
                    "tokens_in": result.tokens_in,
                    "tokens_out": result.tokens_out,
                    "wrote": sorted(result.writes),
                    "outputs": sorted(result.outputs),
                }
                record["steps"].append(step_record)
                record["tokens_in"] += result.tokens_in
                record["tokens_out"] += result.tokens_out
                requests += [data for kind, data in host.events if kind == "model_request"]
                record["cache"] = summarise(requests).as_dict()
                if on_step:
                    on_step(step_record)
                for path, content in result.writes.items():
                    if content is None:
                        files.pop(path, None)
                    else:
                        files[path] = content
                    if root is not None:
                        target = root / path
                        if content is None:
                            target.unlink(missing_ok=True)
                        else:
                            target.parent.mkdir(parents=True, exist_ok=True)
                            target.write_text(content, encoding="utf-8")
                if root is not None:
                    for path, content in result.outputs.items():
                        target = root / ".foldrun" / "runs" / record["id"] / path
                        target.parent.mkdir(parents=True, exist_ok=True)
                        target.write_bytes(content)
                if not error or error.startswith("budget reached"):
                    break
            record["cost_usd"] = str(spent)
            if error:
                failed = error
                break
            replies.append(result.output)
        if failed:
            if spec["on_fail"] == "continue" and not failed.startswith("budget reached"):
                continue
            return _end(record, "failed", f"step {number} ({spec['agent']}) failed: {failed}")
        outputs[number] = "\n".join(replies)
    last = outputs[max(outputs)] if outputs else ""
    record["headline"] = headline_of(last)
    record["verdict"] = verdict_of(last)
    record["summary"] = "\n".join(last.strip().splitlines()[1:]).strip()
    return _end(record, "completed", "")


def _end(record: dict, status: str, error: str) -> dict:
    record["status"] = status
    record["error"] = error
    if error and not record.get("headline"):
        record["headline"] = error.splitlines()[0]
    record["finished_at"] = _now()
    return record


def report_lines(run: dict) -> list[str]:
    """The run's report as `foldrun report` prints it (server or local record)."""
    lines = [
        f"{run['id']}  {run['name']}  {run['status']}"
        + (f"  {run['verdict']}" if run.get("verdict") else "")
        + ("  (test run)" if run.get("is_test") else "")
    ]
    if run.get("headline"):
        lines.append(run["headline"])
    if run.get("summary"):
        lines.extend("  " + line for line in run["summary"].splitlines())
    said = [_plain(run.get("headline"))]  # a failure's sentence is said once: the headline, else the first line
    if run.get("error") and not _said_in(run["error"], said):
        lines.append(f"error: {run['error']}")
        said.append(_plain(run["error"]))
    for step in run.get("steps", []):
        label = step.get("step") or step.get("label")
        tries = step.get("attempt", 1)
        lines.append(
            f"  {label}. {step['agent']}  {step['status']}  try {tries}  ${Decimal(str(step.get('cost_usd') or 0)):.6f}"
            f"  {step.get('tokens_in', 0)}/{step.get('tokens_out', 0)} tokens"
        )
        if step.get("limits") or step.get("limits_line"):
            lines.append(f"     {step.get('limits') or step.get('limits_line')}")
        if step.get("error") and not _said_in(step["error"], said):
            lines.append(f"     error: {step['error']}")
            said.append(_plain(step["error"]))
        pod_line, pod_tries = pod_card(step.get("tries") or [])
        lines.extend(f"     {text}" for text in (pod_line, pod_tries) if text)  # the step card's two lines
        earlier = [t for t in step.get("tries") or [] if t.get("n") != step.get("attempt")]
        for t in earlier:  # the tries before the last, as the Run page lists them
            error = f" — {t['error']}" if t.get("error") and not _said_in(t["error"], said) else ""
            lines.append(f"     try {t.get('n')}: {t.get('status')}{error}")
    lines.append(
        f"cost ${Decimal(str(run.get('cost_usd') or 0)):.6f} · tokens {run.get('tokens_in', 0)} in, "
        f"{run.get('tokens_out', 0)} out"
    )
    if cache_line(run.get("cache")):
        lines.append(cache_line(run.get("cache")))
    for artifact in run.get("artifacts") or []:
        lines.append(
            f"artifact {artifact.get('path')}  {artifact.get('size', 0)} bytes"
            + (f"  ({artifact['id']})" if artifact.get("id") else "")
        )
    return lines


def _plain(text: object) -> str:
    return " ".join(str(text or "").split())


def _said_in(sentence: object, said: list[str]) -> bool:
    """Whether `sentence` is already inside a line the report printed (a run's error quotes its step's)."""
    text = _plain(sentence)
    return bool(text) and any(text in s for s in said if s)
