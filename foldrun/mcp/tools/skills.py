"""Skills as tools: list_skills, run_skill, get_skill_run, and one skill_<name> per skill the account can see.

A skill is a SKILL.md of the gallery or of the account's library (library/skills.py) whose frontmatter
declares its inputs and grants (foldrun/contract/skill_inputs.py). `smoke-uat` runs as the smoke test does;
any other skill is the browser agent following the skill's procedure (runs/skill_procedure.py) — both on
browsing's SkillRun and its worker phases. The waits are capped at 120 s: a run still going is `running`.
"""

from __future__ import annotations

import time
from typing import Any

from browsing.actions import check_create_session, do_create_session
from browsing.models import SkillRun, SkillStatus
from browsing.records import placement_of
from browsing.reports import scoped_report
from browsing.skill_results import skill_record, skill_text
from foldrun.contract.skill_inputs import GRANTS, input_schema, is_vault_reference
from library.skills import VisibleSkill, find_skill, visible_skills
from runs.skill_procedure import do_deny_skill, do_start_skill
from runs.skill_runs import SMOKE, do_start_smoke

from ..call import McpCall
from ..registry import McpTool, check_arguments, mcp_tool, register_dynamic
from ..results import ToolError, ToolResult, ok
from .tasks import SIGN_IN_OPTIONS, SMOKE_SCHEMA, check_smoke_args

WAIT_CAP = 120
DEFAULT_TOOL_WAIT = 30
POLL_SECONDS = 0.2
TOOL_PREFIX = "skill_"
ERROR_STATUSES = (SkillStatus.ERROR, SkillStatus.DENIED, SkillStatus.CANCELLED)

_SESSION = {
    "type": "object",
    "description": "Session options for the run, for example proxyUrl and allowHosts; "
    "sign-in options are refused (skill runs cannot sign in yet)",
}

RUN_SKILL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 100, "description": "The skill name, e.g. smoke-uat"},
        "inputs": {"type": "object", "description": "The skill's inputs. Default {}"},
        "version": {"type": "string", "maxLength": 40, "description": "A skill version. Default: the newest"},
        "grant": {
            "type": "array",
            "items": {"type": "string", "enum": list(GRANTS)},
            "uniqueItems": True,
            "description": "Permissions to grant. A skill that does active security probes needs "
            '["active_scan"]. Ask the user first',
        },
        "session": _SESSION,
        "engineId": {"type": "string", "description": "The engine for the run's session"},
    },
    "required": ["name"],
    "additionalProperties": False,
}

GET_SKILL_RUN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "runId": {"type": "string", "description": "The run id (run_…)"},
        "waitSeconds": {
            "type": "integer",
            "minimum": 0,
            "maximum": WAIT_CAP,
            "description": "0 to 120. Default 0, which does not wait",
        },
    },
    "required": ["runId"],
    "additionalProperties": False,
}


def tool_name(skill: str) -> str:
    return TOOL_PREFIX + skill.replace("-", "_")


def _invalid(issues: list[dict[str, str]], message: str) -> ToolError:
    return ToolError("invalid_input", message, {"issues": issues})


# A SKILL.md declares types, not ranges; the platform's own smoke-uat takes smoke_test's ranges (maxLinks 0 to
# 200), so run_skill and skill_smoke_uat refuse what smoke_test refuses and tools/list shows the same bounds.
_RANGES = ("minimum", "maximum", "minLength", "maxLength", "maxItems")


def _declared_schema(skill: VisibleSkill) -> dict[str, Any]:
    declared = input_schema(skill.declaration)
    if skill.name != SMOKE:
        return declared
    properties = {}
    for name, prop in declared["properties"].items():
        own = SMOKE_SCHEMA["properties"].get(name, {})
        properties[name] = {**prop, **{k: own[k] for k in _RANGES if k in own}}
    return {**declared, "properties": properties}


def _check_inputs(skill: VisibleSkill, inputs: dict[str, Any], where: str) -> dict[str, Any]:
    """The inputs against the skill's declaration (types, required, enum), secrets as vault references."""
    schema = {"type": "object", **_declared_schema(skill), "additionalProperties": False}
    probe = McpTool(tool_name(skill.name), "", schema, lambda call, args: ok(""))
    try:
        check_arguments(probe, inputs)
    except ToolError as exc:
        issues = [
            {**i, "path": f"{where}{i['path']}" if i["path"] else where.rstrip(".")}
            for i in (exc.details or {}).get("issues", [])
        ]
        first = issues[0] if issues else {"path": where, "message": exc.message}
        raise _invalid(
            issues, f"The inputs of the skill {skill.name} are not valid: {first['path']}: {first['message']}"
        ) from None
    for item in skill.declaration.inputs:
        if item.type == "secret" and item.name in inputs and not is_vault_reference(inputs[item.name]):
            path = f"{where}{item.name}"
            raise _invalid(
                [{"path": path, "message": "Takes a vault reference, never the secret itself."}],
                f"{path} takes a vault reference such as https://host#password, never the secret itself.",
            )
    given = {item.name: item.default for item in skill.declaration.inputs if item.default is not None}
    return {**given, **inputs}


def _check_session(session: dict[str, Any], where: str) -> None:
    signed_in = [key for key in SIGN_IN_OPTIONS if key in session]
    if signed_in:
        raise _invalid(
            [{"path": f"{where}.{key}", "message": "Skill runs cannot sign in yet."} for key in signed_in],
            f"Signed-in skill runs are not available yet: remove session.{signed_in[0]}",
        )


def _start(
    call: McpCall, skill: VisibleSkill, inputs: dict[str, Any], granted: set[str], session_options: dict[str, Any]
) -> SkillRun:
    missing = [g for g in skill.declaration.grants if g not in granted]
    if missing:
        reason = (
            f"The skill {skill.name} needs the grant{'s' if len(missing) > 1 else ''} {', '.join(missing)}, "
            f"which {'was' if len(missing) == 1 else 'were'} not given; ask the user before granting it."
        )
        return do_deny_skill(
            call.account, skill=skill.name, version=skill.version, inputs=inputs, reason=reason, user=call.user
        )
    if skill.name == SMOKE:
        checked = check_smoke_args({**inputs, "session": session_options})
        options = check_create_session(call.account, {**session_options, "record": True})
        session = do_create_session(call.account, options, user=call.user)
        return do_start_smoke(call.account, session, checked, user=call.user)
    options = check_create_session(call.account, {**session_options, "record": True})
    session = do_create_session(call.account, options, user=call.user)
    return do_start_skill(
        call.account,
        session,
        skill=skill.name,
        version=skill.version,
        description=skill.description,
        procedure=skill.body,
        inputs=inputs,
        user=call.user,
    )


def _wait(run: SkillRun, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        run.refresh_from_db()
        if run.status != SkillStatus.RUNNING or time.monotonic() >= deadline:
            return
        time.sleep(POLL_SECONDS)


def _result(run: SkillRun) -> ToolResult:
    record = skill_record(run)
    return ok(skill_text(record), record, is_error=run.status in ERROR_STATUSES)


def _skill(call: McpCall, name: str, version: str | None = None) -> VisibleSkill:
    skill = find_skill(call.account, name, version)
    if skill is None:
        at = f" at version {version[:40]}" if version else ""
        raise ToolError("not_found", f"No skill {name[:100]}{at} in this project; list_skills names the skills.")
    if not skill.runnable:
        problem = next(p for p in skill.problems if p.level == "error")
        raise ToolError(
            "invalid_input",
            f"The skill {skill.name} cannot run: {problem.format()}",
            {"issues": [{"path": "name", "message": problem.message}]},
        )
    return skill


@mcp_tool(
    name="list_skills",
    description=(
        "List the skills this project can run, with their inputs and the permissions (grants) each needs. Each "
        "skill with declared inputs also has its own skill_<name> tool."
    ),
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
)
def list_skills(call: McpCall, args: dict) -> ToolResult:
    skills = [
        {
            "name": s.name,
            "description": s.description,
            "version": s.version,
            "source": s.scope,
            "inputs": [i.to_dict() for i in s.declaration.inputs],
            "grants": list(s.declaration.grants),
            "tool": tool_name(s.name) if _has_tool(s) else None,
            "problems": [p.format() for p in s.problems if p.level == "error"],
        }
        for s in visible_skills(call.account)
    ]
    names = ", ".join(s["name"] for s in skills) or "none"
    return ok(f"{len(skills)} skill{'s' if len(skills) != 1 else ''}: {names}.", {"skills": skills})


@mcp_tool(
    name="run_skill",
    description=(
        "Start a skill run by name and return at once with its runId; it does not wait. Read it with get_skill_run "
        "(the run) or get_report (the pass/fail report). To test a page or flow, smoke_test is easier: it waits. "
        'A skill that does active security probes needs grant ["active_scan"]: ask the user first.'
    ),
    input_schema=RUN_SKILL_SCHEMA,
    acts=True,
)
def run_skill(call: McpCall, args: dict) -> ToolResult:
    session_options = dict(args.get("session") or {})
    _check_session(session_options, "session")
    if args.get("engineId"):
        session_options["engineId"] = args["engineId"]
    skill = _skill(call, args["name"], args.get("version"))
    inputs = _check_inputs(skill, dict(args.get("inputs") or {}), "inputs.")
    run = _start(call, skill, inputs, set(args.get("grant") or ()), session_options)
    # The session's own placement: "pool" when it took a browser at once, "queued" when it waits for one
    # (queueForCapacity) — the same word the session record gives.
    placement = "denied" if run.status == SkillStatus.DENIED else placement_of(run.session)
    data = {
        "runId": run.public_id,
        "sessionId": run.session.public_id if run.session_id else None,
        "status": run.status,
        "placement": placement,
    }
    text = f"Skill run {run.public_id} of {skill.name}: {run.status}."
    if run.status == SkillStatus.DENIED:
        text += f" {run.state.get('denied')}"
    else:
        text += f" Call get_skill_run with runId {run.public_id} for its verdict."
    return ok(text, data, is_error=run.status in ERROR_STATUSES)


@mcp_tool(
    name="get_skill_run",
    description=(
        "Read a skill run; while it runs, wait up to waitSeconds (0 to 120, default 0) for the verdict. A failed run "
        "is a normal result: read status. isError is true only for status error, denied or cancelled. For failed "
        "steps, console errors and failed network calls, call get_report with the runId."
    ),
    input_schema=GET_SKILL_RUN_SCHEMA,
    waits_seconds=WAIT_CAP,
)
def get_skill_run(call: McpCall, args: dict) -> ToolResult:
    found = scoped_report(call.account, args["runId"])
    if not isinstance(found, SkillRun):
        raise ToolError("not_found", f"No skill run {str(args['runId'])[:60]} in this project.")
    _wait(found, int(args.get("waitSeconds", 0)))
    return _result(found)


# ---------------------------------------------------------------- skill_<name>


def _has_tool(skill: VisibleSkill) -> bool:
    return skill.runnable and skill.declaration.declared_inputs


def _tool_schema(skill: VisibleSkill) -> dict[str, Any]:
    declared = _declared_schema(skill)
    properties = dict(declared["properties"])
    properties["options"] = {
        "type": "object",
        "properties": {
            "waitSeconds": {
                "type": "integer",
                "minimum": 0,
                "maximum": WAIT_CAP,
                "description": "0 to 120. Default 30. A run still going comes back running, with a runId",
            },
            "session": _SESSION,
        },
        "additionalProperties": False,
    }
    required = list(declared["required"])
    if skill.declaration.active:
        properties["confirm"] = {
            "type": "boolean",
            "const": True,
            "description": (
                "Must be true. This skill sends active security probes: set it only after the user confirms they may "
                "test the target"
            ),
        }
        required.append("confirm")
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def _skill_handler(skill: VisibleSkill):  # noqa: ANN202 - a handler bound to one skill
    def handler(call: McpCall, args: dict) -> ToolResult:
        options = dict(args.get("options") or {})
        session_options = dict(options.get("session") or {})
        _check_session(session_options, "options.session")
        inputs = {k: v for k, v in args.items() if k not in ("options", "confirm")}
        inputs = _check_inputs(skill, inputs, "")
        # Calling the skill's own tool grants what it declares, but active probes only with confirm.
        granted = {g for g in skill.declaration.grants if g != "active_scan"}
        if args.get("confirm") is True:
            granted.add("active_scan")
        run = _start(call, skill, inputs, granted, session_options)
        _wait(run, int(options.get("waitSeconds", DEFAULT_TOOL_WAIT)))
        return _result(run)

    return handler


@register_dynamic
def skill_tools(call: McpCall) -> list[McpTool]:
    """One skill_<name> per skill of the account's that declares its inputs (a skill without inputs: none)."""
    tools = []
    for skill in visible_skills(call.account):
        if not _has_tool(skill):
            continue
        description = (
            f"{skill.description} Runs the skill {skill.name} and waits for its verdict (30 s by "
            f"default, up to 120 s); a failed run is a normal result, isError means it could not run."
        )
        tools.append(
            McpTool(
                tool_name(skill.name),
                description.strip(),
                _tool_schema(skill),
                _skill_handler(skill),
                waits_seconds=WAIT_CAP,
                acts=True,
            )
        )
    return tools
