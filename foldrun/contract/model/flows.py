"""Flow files parsed: parse_steps (a body's numbered steps and their options) and flow_of."""

from __future__ import annotations

import re

import yaml

from ..desk import Desk, Document
from ..findings import Finding
from ..frontmatter import load_yaml
from .records import Flow, Step, Verify
from .values import (
    EVENT_NAME_RE,
    STEP_OPTIONS,
    VERIFY_KINDS,
    cached_model,
    as_str,
    timezone_problems,
    as_list,
    cron_problem,
    did_you_mean,
    is_whole,
    parse_duration,
)

_STEP_OUTPUT_RE = re.compile(r"\{\{\s*steps\.(\d+)\.output\s*\}\}")
_STEP_LINE = re.compile(r"^ {0,3}(\d+)[.)]\s+(.*)$")
_STEP_HEAD = re.compile(r"^\[\[([^\]]*)\]\](\s*!)?\s*(?:(?:—|–|--|-|:)\s*(.*))?$")
_OPTION_LINE = re.compile(r"^(\s+)([a-z][A-Za-z0-9_-]*)\s*:(?:\s+(.*)|\s*)$")


def _option_key(key: str) -> str:
    return "on-fail" if key in ("on_fail", "onFail", "on-fail") else key


def parse_steps(body: str, body_line: int, path: str) -> tuple[list[Step], list[Finding]]:
    """Steps from a flow body's numbered list (DESIGN.md: Flow), with problems.

    `N. [[agent]] — task`; `!` after the agent is a gate; indented lines below
    are `key: value` options (each, max, verify, retry, on-fail, limits, wait,
    ask) or more of the task.
    """
    steps: list[Step] = []
    problems: list[Finding] = []
    current: Step | None = None
    lines = body.split("\n")
    block_limits: tuple[Step, int, list[str]] | None = None  # `limits:` with an indented block beneath
    in_fence = False
    for offset, raw in enumerate(lines):
        line_no = body_line + offset
        if raw.lstrip().startswith("```"):
            in_fence = not in_fence
        if in_fence:
            continue
        if block_limits is not None:
            step, indent, collected = block_limits
            if raw.strip() and (len(raw) - len(raw.lstrip())) > indent:
                collected.append(raw)
                continue
            _apply_option(step, "limits", "\n".join(collected), step.option_lines["limits"], path, problems, block=True)
            block_limits = None
        match = _STEP_LINE.match(raw)
        if match:
            written, rest = int(match.group(1)), match.group(2).strip()
            head = _STEP_HEAD.match(rest)
            number = len(steps) + 1
            if not head or not head.group(1).strip():
                problems.append(
                    Finding(
                        path,
                        line_no,
                        "error",
                        f"line {written}. is not a step; write {written}. [[agent]] — the task.",
                        "flow.step_line",
                    )
                )
                current = None
                continue
            current = Step(
                number=number,
                agent=head.group(1).strip(),
                task=(head.group(3) or "").strip(),
                line=line_no,
                gate=bool(head.group(2)),
                written_number=written,
            )
            steps.append(current)
            if written != number:
                problems.append(
                    Finding(
                        path,
                        line_no,
                        "warning",
                        f"step {number} ([[{current.agent}]]) is numbered {written}; {{{{steps.N.output}}}} counts steps in order from 1, so this one is {number}.",
                        "flow.numbering",
                    )
                )
            continue
        if current is None:
            continue
        if not raw.strip():
            continue
        if not raw[0].isspace():
            current = None  # prose after the list ends the step
            continue
        option = _OPTION_LINE.match(raw)
        if option:
            key, value = _option_key(option.group(2)), (option.group(3) or "").strip()
            current.options[key] = value
            current.option_lines[key] = line_no
            if key not in STEP_OPTIONS:
                hint = did_you_mean(option.group(2), STEP_OPTIONS, "{}:") or "."
                problems.append(
                    Finding(
                        path,
                        line_no,
                        "error",
                        f"{current.label} has an option {option.group(2)}: that foldrun does not read; the options are {', '.join(STEP_OPTIONS[:-1])} and {STEP_OPTIONS[-1]}{hint}",
                        "flow.option_unknown",
                    )
                )
                continue
            if key == "limits" and not value:
                block_limits = (current, len(option.group(1)), [])
                continue
            _apply_option(current, key, value, line_no, path, problems)
            continue
        current.task = (current.task + "\n" + raw.strip()).strip()
    if block_limits is not None:
        step, _indent, collected = block_limits
        _apply_option(step, "limits", "\n".join(collected), step.option_lines["limits"], path, problems, block=True)
    for step in steps:
        for match in _STEP_OUTPUT_RE.finditer(step.task):
            wanted = int(match.group(1))
            if wanted >= step.number:
                problems.append(
                    Finding(
                        path,
                        step.line,
                        "error",
                        f"{step.label} reads {{{{steps.{wanted}.output}}}}, which is not an earlier step; it can read the output of {'step 1' if step.number == 2 else f'steps 1 to {step.number - 1}'}."
                        if step.number > 1
                        else f"{step.label} reads {{{{steps.{wanted}.output}}}}, but the first step has no earlier step to read.",
                        "flow.step_output",
                    )
                )
        if step.max is not None and step.each is None:
            problems.append(
                Finding(
                    path,
                    step.option_lines["max"],
                    "warning",
                    f"{step.label} has max: without each:; max: caps an each: fan-out, so add each: lines or each: json, or drop max:.",
                    "flow.max_without_each",
                )
            )
    return steps, problems


def _apply_option(
    step: Step, key: str, value: str, line: int, path: str, problems: list[Finding], block: bool = False
) -> None:
    label = step.label

    def bad(message: str, code: str) -> None:
        problems.append(Finding(path, line, "error", f"{label} {message}", code))

    if key == "each":
        if value in ("lines", "json"):
            step.each = value
        else:
            bad(f"has each: {value}; it must be lines or json.", "flow.each")
    elif key == "max":
        if value.isdigit() and int(value) >= 1:
            step.max = int(value)
        else:
            bad(f"has max: {value}; it must be a whole number, 1 or more.", "flow.max")
    elif key == "retry":
        if value.isdigit():
            step.retry = int(value)
        else:
            bad(f"has retry: {value}; it must be a whole number, 0 or more.", "flow.retry")
    elif key == "on-fail":
        if value in ("stop", "continue"):
            step.on_fail = value
        else:
            bad(f"has on-fail: {value}; it must be stop or continue.", "flow.on_fail")
    elif key == "verify":
        kind, _, argument = value.partition(" ")
        argument = argument.strip()
        if kind not in VERIFY_KINDS or not argument:
            bad(
                f"has verify: {value}; write verify: file <path>, verify: reply <regex> or verify: grows <path>.",
                "flow.verify",
            )
            return
        if kind == "reply":
            try:
                re.compile(argument)
            except re.error as exc:
                bad(f"has verify: reply with a regular expression that does not compile ({exc}).", "flow.verify_regex")
                return
        elif argument.startswith(("/", "~")) or ".." in argument.replace("\\", "/").split("/"):
            bad(
                f"has verify: {kind} {argument}; the path must stay inside the step's folder (no leading / and no ..).",
                "flow.verify_path",
            )
            return
        step.verify = Verify(kind, argument)
    elif key == "wait":
        word, _, name = value.partition(" ")
        name = name.strip()
        if word != "event" or not EVENT_NAME_RE.match(name):
            bad(
                f"has wait: {value}; write wait: event <name>, the name in letters, digits, '-' and '_' (such as wait: event signed-off).",
                "flow.wait",
            )
            return
        step.wait_event = name
    elif key == "ask":
        if not value:
            bad("has ask: with no question; write ask: <the question for a person>.", "flow.ask")
            return
        step.ask = value
    elif key == "limits":
        try:
            parsed = load_yaml(value) if value else None
        except yaml.YAMLError:
            parsed = None
        if not isinstance(parsed, dict):
            bad("has limits: that is not a mapping; write limits: {web.search: 10}.", "flow.limits")
            return
        step.limits = parsed


# What a flow's `webhook: {signature: …}` may name: how an inbound webhook proves its sender (runs.hook_signing).
WEBHOOK_SCHEMES = ("none", "hmac", "standard", "github", "stripe")
_SCHEME_WORDS = {
    "none": "unsigned",
    "hmac": "foldrun's x-signature, or X-Foldrun-Signature with X-Foldrun-Timestamp",
    "standard": "Standard Webhooks' webhook-id, webhook-timestamp and webhook-signature",
    "github": "GitHub's X-Hub-Signature-256",
    "stripe": "Stripe's Stripe-Signature",
}


def webhook_problems(webhook: dict) -> list[tuple[str, str]]:
    """(sentence, code) for each thing wrong with a flow's `webhook:` mapping."""
    raw = webhook.get("signature")
    if raw is None or raw is False:
        scheme = "none"
    else:
        scheme = str(raw).strip().lower()
    if scheme not in WEBHOOK_SCHEMES:
        listed = "; ".join(f"{name} ({words})" for name, words in _SCHEME_WORDS.items())
        return [
            (
                f"webhook: signature: {str(raw)[:40]} is not a scheme foldrun checks; write one of {listed}.",
                "flow.webhook_signature",
            )
        ]
    secret = webhook.get("secret")
    if scheme != "none" and (not isinstance(secret, str) or not secret.strip()):
        return [
            (
                f"webhook: signature: {scheme} needs secret: — the NAME of the vault secret the sender signs with, "
                f"such as secret: INBOUND_KEY.",
                "flow.webhook_secret",
            )
        ]
    if scheme == "none" and secret not in (None, ""):
        return [
            (
                "webhook: names secret: but no signature:, so nothing would check it; write signature: hmac "
                "(or standard, github, stripe), or drop secret:.",
                "flow.webhook_signature",
            )
        ]
    return []


def flow_of(desk: Desk, document: Document) -> Flow:
    """The Flow a flows/<name>.md describes (cached)."""

    def build() -> Flow:
        meta = document.meta
        path = document.path
        problems: list[Finding] = []
        steps, step_problems = parse_steps(document.body, document.parsed.body_line if document.parsed else 1, path)
        problems.extend(step_problems)
        if document.parsed and not steps:
            problems.append(
                Finding(
                    path,
                    document.parsed.body_line,
                    "error",
                    "has no steps; list them in the body as 1. [[agent]] — the task.",
                    "flow.no_steps",
                )
            )
        flow = Flow(
            name=document.name,
            path=path,
            steps=steps,
            description=as_str(meta.get("description")),
            meta=meta,
            problems=problems,
        )

        def err(key: str, message: str, code: str) -> None:
            problems.append(Finding(path, document.line_of(key), "error", message, code))

        schedule = meta.get("schedule")
        if schedule is not None:
            why = cron_problem(schedule)
            if why:
                err(
                    "schedule",
                    f'schedule: "{schedule}" is not a cron expression ({why}); write five fields — minute, hour, day of month, month, day of week — such as "0 7 * * MON".',
                    "flow.schedule",
                )
            else:
                flow.schedule = str(schedule).strip()
        if meta.get("timezone") is not None:
            timezone_problems(document, meta.get("timezone"), problems)
            flow.timezone = as_str(meta.get("timezone"))
        inputs = meta.get("inputs")
        if inputs is not None:
            if isinstance(inputs, dict):
                flow.inputs = inputs
            else:
                err(
                    "inputs",
                    "inputs: must be a mapping of names to default values, such as inputs: {topic: building inspections}.",
                    "flow.inputs",
                )
        for key in ("sla", "approve_within"):
            if meta.get(key) is None:
                continue
            duration = parse_duration(meta.get(key))
            if duration is None:
                err(
                    key,
                    f"{key}: {meta.get(key)} is not a duration; write a whole number and a unit: 30m, 2h, 2d or 1w.",
                    f"flow.{key}",
                )
            elif key == "sla":
                flow.sla = duration
            else:
                flow.approve_within = duration
        if meta.get("disable_after") is not None:
            if is_whole(meta.get("disable_after"), 1):
                flow.disable_after = meta["disable_after"]
            else:
                err(
                    "disable_after",
                    f"disable_after: {meta.get('disable_after')} must be a whole number, 1 or more (failed runs in a row before the flow stops firing).",
                    "flow.disable_after",
                )
        approvers = meta.get("approvers")
        if approvers is not None:
            if isinstance(approvers, (list, str)):
                flow.approvers = as_list(approvers)
            else:
                err(
                    "approvers",
                    "approvers: must be a list of addresses, such as approvers: [owner@example.com].",
                    "flow.approvers",
                )
        budget = meta.get("budget")
        if budget is not None:
            if isinstance(budget, (int, float)) and not isinstance(budget, bool) and budget > 0:
                flow.budget = float(budget)
            else:
                err(
                    "budget",
                    f"budget: {budget} is not an amount; write the run's cap in USD, such as budget: 5.00.",
                    "flow.budget",
                )
        webhook = meta.get("webhook")
        if webhook is not None:
            if isinstance(webhook, dict):
                flow.webhook = webhook
                for message, code in webhook_problems(webhook):
                    problems.append(
                        Finding(
                            path,
                            document.line_at("webhook", "signature") or document.line_of("webhook"),
                            "error",
                            message,
                            code,
                        )
                    )
            else:
                err(
                    "webhook",
                    "webhook: must be a mapping, such as webhook: {signature: hmac, secret: INBOUND_KEY}.",
                    "flow.webhook",
                )
        return flow

    return cached_model(desk, document, "flow", build)
