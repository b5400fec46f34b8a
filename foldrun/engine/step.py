"""One step: one agent's model loop with the tools it was granted.

`run_step(desk, request, host)` is what the Celery task and `foldrun run
--local` both call. It materialises a sandbox, resolves the agent and its
tools (nearest wins; `prepare.py`), resolves secrets (the trace says which store each came
from), builds the prompt, runs the model loop until the model ends its turn,
and returns a `StepResult`: the reply, memory/state writes to keep, outputs,
the limits line. It knows nothing of Django: the `Host` is its only window
onto records, secrets, the model and money. Tools see the step through the
`ToolContext` (`StepEnv`); programs start through `programs.py`; secrets are
kept out of what is saved by `redact.py`.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import time
from typing import Any

from foldrun import incidents
from foldrun.contract import Desk
from foldrun.contract.resolve import agent_folder
from foldrun.providers.refusal import step_timezone
from foldrun.providers.supply import ProviderConfigError  # its message is the sentence

from . import spend
from .cost import uncached_cost, usage_of
from .context import DEFAULT_MAX_TURNS, Host, StepRequest, StepResult, ToolContext
from .errors import BudgetExceeded, MissingSecret, PodLost, StepFailed
from .httpclient import shared_http
from .limits import LimitCounter, merge_limits
from .prepare import prepare_tools
from .programs import ISOLATE, isolation_works, namespace_prefix
from .redact import RedactingHost, Redactor
from .resolve import AgentSpec, ResolveError, resolve_agent
from .sandbox import materialise
from .stepenv import WITHHELD, StepEnv
from .tools.base import Park, Tool, ToolError, check_arguments

log = logging.getLogger(__name__)

# Re-exported: the runs app, the CLI and the tests import these from here.
__all__ = [
    "BudgetExceeded",
    "DEFAULT_MAX_TURNS",
    "Host",
    "ISOLATE",
    "MissingSecret",
    "RedactingHost",
    "Redactor",
    "StepEnv",
    "StepFailed",
    "StepRequest",
    "StepResult",
    "ToolContext",
    "WITHHELD",
    "isolation_works",
    "namespace_prefix",
    "prepare_tools",
    "run_step",
    "shared_http",
]

MAX_RESULT_CHARS = 50_000
DEFAULT_MAX_TOKENS = 4096


def _prompt(agent: AgentSpec, request: StepRequest) -> list[dict]:
    """The system prompt as two blocks: the agent's own prompt (its body, AGENTS.md, skills, language), then the
    knowledge preamble (the workspace folder and today's date). Each is a prompt-cache breakpoint on the
    Anthropic wire (foldrun/providers/caching.py): the second changes daily, the first only with the files."""
    parts = [agent.body or f"You are {agent.name}."]
    for rules in agent.house_rules:  # AGENTS.md: what `init` promises every agent of the desk reads first
        parts.append("The desk's AGENTS.md, which every agent here follows:\n" + rules)
    if agent.skills:
        lines = [f"- {s['name']}: {s['description']} ({s['path']})" for s in agent.skills]
        parts.append("Skills you can use — read the SKILL.md when a task matches:\n" + "\n".join(lines))
    language = (
        agent.meta.get("language") or agent.workspace_defaults.get("language") or agent.account_defaults.get("language")
    )
    region = agent.meta.get("region") or agent.workspace_defaults.get("region") or agent.account_defaults.get("region")
    if language:
        parts.append(f"Write in {language}.")
    if region:
        parts.append(f"Your region is {region}.")
    preamble = (
        "You work in a workspace folder: knowledge/ is given (read-only), memory/ is yours to write one fact per "
        "file (your own: no other agent's memory/ is there), desk/memory/ is the desk's memory, shared by every "
        "agent, state/ is the bookmark between runs (append, never rewrite), outputs/ is what this step leaves. "
        f"Today is {dt.date.today().isoformat()}."
    )
    return [{"type": "text", "text": "\n\n".join(parts)}, {"type": "text", "text": preamble}]


def _provider(agent: AgentSpec) -> dict:
    for layer in (agent.meta, agent.workspace_defaults, agent.account_defaults):
        block = layer.get("provider")
        if block:
            return dict(block) if isinstance(block, dict) else {"name": str(block)}
    return {}


def _limit_layers(agent: AgentSpec, request: StepRequest) -> dict[str, int]:
    """Nearest wins per key: account AGENTS.md, workspace AGENTS.md, agent (already merged), the step's."""
    return merge_limits(agent.limits, request.limits)


def _text_of(content: list[dict]) -> str:
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text").strip()


def run_step(desk: Desk, request: StepRequest, host: Host) -> StepResult:
    """Run one step to the end of the model's turn. Never raises for a step-level failure."""
    try:
        agent = resolve_agent(desk, request.agent)
    except ResolveError as exc:
        host.trace("log", {"message": str(exc)})
        return StepResult(status="failed", error=str(exc))
    # Written when the step first reads, runs or lists anything in it: a step whose model only answers
    # writes and removes no copy of the desk (which was most of such a step's own work).
    # "Memory is per agent by default": the step's memory/ is agents/<name>/memory/, the desk's at desk/memory/.
    own_memory = f"agents/{agent_folder(desk, agent.name)}/memory"
    sandbox = materialise(desk.files, desk.library, base=request.sandbox_base, lazy=True, own_memory=own_memory)
    note = memory_note(desk.files, own_memory)
    if note:
        host.trace("log", {"message": note})
    redactor = Redactor()
    host = RedactingHost(host, redactor)
    env = StepEnv(request, host, sandbox, agent)
    env.sandbox_files = desk.files
    result = StepResult(status="failed")
    try:
        _run(agent, request, host, env, result)
    finally:
        env.close()
        writes, refused = sandbox.changes()
        result.writes, result.refused_writes = writes, refused
        for path in refused:
            host.trace(
                "log",
                {
                    "message": f"{path} was changed during the step; the change was discarded — "
                    f"knowledge/ is never written by a run"
                },
            )
        result.outputs = sandbox.outputs()
        result.image, result.pod_line = env.browser_image, env.pod_line
        sandbox.cleanup()
        _redact_result(result, redactor)
    return result


def memory_note(files: dict[str, str], own_memory: str) -> str | None:
    """For a desk whose memory/ was written before memory was per agent: the agent has none of its own yet,
    and the desk's (kept where it was, moved nowhere) is at desk/memory/ — the run says so."""
    if any(p.startswith(f"{own_memory}/") for p in files):
        return None
    shared = [p for p in files if p.startswith("memory/") and p.rsplit("/", 1)[-1] not in ("index.md", "log.md")]
    if not shared:
        return None
    return (
        f"memory/ is this agent's own ({own_memory}/, empty so far); the desk's memory/ ({len(shared)} "
        f"file{'s' if len(shared) != 1 else ''}, kept where it was) is shared at desk/memory/"
    )


def _redact_result(result: StepResult, redactor: Redactor) -> None:
    """No secret value leaves the step in what is kept: the reply, the lines, outputs/, memory/ and state/."""
    if not redactor.values:
        return
    result.output = redactor.text(result.output)
    result.error = redactor.text(result.error)
    result.question = redactor.text(result.question)
    result.outputs = {path: redactor.bytes(content) for path, content in result.outputs.items()}
    result.writes = {
        path: redactor.text(content) if isinstance(content, str) else content for path, content in result.writes.items()
    }


def _run(agent: AgentSpec, request: StepRequest, host: Host, env: StepEnv, result: StepResult) -> None:
    try:
        tools = prepare_tools(agent, env, host)
    except StepFailed as exc:
        result.error = str(exc)
        host.trace("log", {"message": str(exc)})
        return
    nested = request.counter is not None
    try:
        counter = request.counter or LimitCounter(_limit_layers(agent, request))
    except ValueError as exc:
        result.error = str(exc)
        return
    env.counter = counter
    if not nested:
        host.trace("limit", {"line": counter.opening_line()})
    by_name = {t.name: t for t in tools}
    provider = _provider(agent)
    system = _prompt(agent, request)
    task = request.task
    if request.answer is not None:
        task += f"\n\nYou asked a person a question; their answer: {request.answer}"
    messages: list[dict] = [{"role": "user", "content": task}]
    max_tokens = int(agent.meta.get("max_tokens") or DEFAULT_MAX_TOKENS)
    try:
        zone = step_timezone(
            agent.meta.get("timezone"),
            request.timezone,
            agent.workspace_defaults.get("timezone"),
            agent.account_defaults.get("timezone"),
        )
        client = host.model_client(provider, timezone=zone)
        tenant = {"safety_identifier": request.tenant} if request.tenant else {}
        windows = agent.workspace_defaults.get("budget")  # the workspace's `budget: {month: 50}`, if any
        for _turn in range(request.max_turns):
            host.check_budget()
            definitions = [t.definition() for t in tools] + _server_definitions(tools, counter)
            # What this call can cost is reserved first; too little left and it is not made.
            reserved, call_tokens = spend.reserve_model_call(
                host, provider, system, messages, definitions, max_tokens, windows
            )
            started = time.monotonic()
            plugins = _server_plugins(tools, counter)
            try:
                response = client.create(
                    system=system,
                    messages=messages,
                    tools=definitions,
                    max_tokens=call_tokens,
                    **tenant,
                    **({"plugins": plugins} if plugins else {}),
                )
            except BaseException:  # whatever ends the call, a worker's shutdown too, gives the reserve back
                spend.release(host, reserved)
                raise
            if plugins:  # a plugin runs once on every request that carries it: one web.search each
                counter.check(["web", "web.search"])
                host.trace("web", {"event": "search", "provider": "model", "server_tool": "plugin:web"})
            used = usage_of(response)
            result.tokens_in += used.prompt  # every input token, read at full price or from the cache
            result.tokens_out += used.output
            cost = spend.charge(host, response, provider, reserved)
            # The request's own cost on its line: a browser agent's task prices each of its steps from it. Its
            # cache reads and writes beside it, and what the cache saved against the same request uncached.
            line: dict[str, Any] = {
                "model": response.get("model") or provider.get("model"),
                "stop_reason": response.get("stop_reason"),
                "input_tokens": used.input,
                "output_tokens": used.output,
                "cache_read_tokens": used.cache_read,
                "cache_write_tokens": used.cache_write,
                "seconds": round(time.monotonic() - started, 3),
                "cost_usd": str(cost),
            }
            if used.cache_read or used.cache_write:
                line["saved_usd"] = str(uncached_cost(response, provider) - cost)
            host.trace("model_request", line)
            result.cost += cost
            content = list(response.get("content") or [])
            _count_server_uses(content, counter, host)
            messages.append({"role": "assistant", "content": content})
            uses = [b for b in content if b.get("type") == "tool_use"]
            if not uses:
                result.output = _text_of(content)
                result.status = "completed"
                return
            replies = []
            for use in uses:
                replies.append(_call_tool(use, by_name, counter, env, result, windows))
            messages.append({"role": "user", "content": replies})
        result.error = f"the model did not end its turn within {request.max_turns} requests"
    except Park as park:
        result.status = "parked"
        result.question = park.question
    except BudgetExceeded as exc:
        host.trace("budget", {"line": str(exc)})  # a budget-stopped call counts toward no limit
        result.error = str(exc)
    except PodLost as lost:
        if env.pod_writes:  # doing it again could send or charge twice: a person, retry: or on-fail: decides
            result.error = env.redact(f"browser pod died after the step had written {'; '.join(env.pod_writes)}")
            host.trace("refusal", {"line": result.error})
        else:  # it had only read: the run re-runs it from the start with a browser inside the step
            result.status, result.error = "lost", env.redact(str(lost))
    except Exception as exc:  # a provider refusal or a transport failure: the step fails with its line
        # The spec's sentence alone (a refusal's line, a provider error's message, the host's sentence);
        # an unexpected error is a sentence with an incident code, its traceback in the platform's log.
        line = (
            getattr(exc, "line", None)
            or getattr(exc, "message", None)
            or (
                str(exc)
                if isinstance(exc, (StepFailed, ProviderConfigError))
                else incidents.sentence("the step", incidents.record(log, "step %s stopped", request.label))
            )
        )
        host.trace("refusal", {"line": env.redact(str(line))})
        result.error = env.redact(str(line))
    finally:
        result.limits_line = counter.closing_line()
        if not nested:
            host.trace("limit", {"line": result.limits_line})


def _server_definitions(tools: list[Tool], counter: LimitCounter) -> list[dict]:
    """A provider's own server tools a tool hands over (web.search: anthropic → web_search_20250305), each
    capped at what its limit key has left, so the provider's loop cannot search past the step's limit."""
    out = []
    for tool in tools:
        for definition in getattr(tool, "server_definitions", None) or []:
            key = SERVER_USE_KEYS.get(str(definition.get("name")))
            limit = counter.limits.get(key) if key else None
            if limit is not None:
                left = limit - counter.used.get(key, 0)
                if left <= 0:
                    continue  # spent: the provider is not offered it again
                definition = {**definition, "max_uses": left}
            out.append(definition)
    return out


def _server_plugins(tools: list[Tool], counter: LimitCounter) -> list[dict]:
    """OpenRouter's web plugin, while web.search has something left (each request that carries it is a search)."""
    plugins = [p for tool in tools for p in getattr(tool, "server_plugins", None) or []]
    limit = counter.limits.get("web.search")
    if plugins and limit is not None and counter.used.get("web.search", 0) >= limit:
        return []
    return plugins


# The built-ins the lost-pod rule counts as reads ("Read/Glob/Grep, … the search, history and desks tools and a
# consult"); every other built-in (Write, Edit, Bash, ask) is a write, as is every script and MCP tool.
POD_READS = frozenset({"Read", "Glob", "Grep", "search_files", "recall_runs", "read_run", "consult"})


def pod_write(tool: Tool, arguments: Any) -> bool:
    """Whether a call counts as a write when the step's browser pod is lost (spec: "Slim steps and a lost pod").
    A call that could be either counts as a write; the web tool and an API call judge their own arguments."""
    if tool.name == "web" or tool.kind == "http":
        return tool.call_writes(arguments if isinstance(arguments, dict) else {})
    return tool.kind != "builtin" or tool.name not in POD_READS


# A server tool's use, by the name it carries in the reply, counted as the web action it is.
SERVER_USE_KEYS = {"web_search": "web.search", "web_fetch": "web.fetch"}
# A provider's built-in the loop answers by handing its arguments back (Moonshot's $web_search), counted as this.
ECHOED_BUILTINS = {"$web_search": "web.search"}


def _count_server_uses(content: list[dict], counter: LimitCounter, host: Host) -> None:
    for block in content:
        if block.get("type") == "server_tool_use" and block.get("name") in SERVER_USE_KEYS:
            key = SERVER_USE_KEYS[block["name"]]
            refused = counter.check(["web", key])
            event = {
                "event": key.split(".")[1],
                "provider": "model",
                "server_tool": block["name"],
                "query": (block.get("input") or {}).get("query"),
            }
            host.trace("web", {**event, "over_limit": refused} if refused else event)


def _call_tool(
    use: dict, by_name: dict[str, Tool], counter: LimitCounter, env: StepEnv, result: StepResult, windows: Any = None
) -> dict:
    name = str(use.get("name"))
    reply = {"type": "tool_result", "tool_use_id": use.get("id")}
    tool = by_name.get(name)
    arguments = use.get("input")
    env.host.trace(
        "tool_call",
        {
            "id": use.get("id"),
            "name": name,
            "input": json.loads(env.redact(json.dumps(arguments, ensure_ascii=False)))
            if arguments is not None
            else None,
        },
    )
    if (
        tool is None
        and name in ECHOED_BUILTINS
        and any(d.get("name") == name for t in by_name.values() for d in getattr(t, "server_definitions", None) or [])
    ):
        # Moonshot's own search: the model names it, we hand its arguments back, Moonshot searches.
        refused = counter.check(["web", ECHOED_BUILTINS[name]])
        event = {"event": "search", "provider": "model", "server_tool": name}
        env.host.trace("web", {**event, "over_limit": refused} if refused else event)
        if refused:
            return {**reply, "content": refused, "is_error": True}
        return {**reply, "content": json.dumps(arguments if arguments is not None else {}, ensure_ascii=False)}
    if tool is None:
        message = f"{name} is not a tool this agent was granted"
        env.host.trace("tool_result", {"id": use.get("id"), "name": name, "error": True, "content": message})
        return {**reply, "content": message, "is_error": True}
    try:
        check_arguments(tool, arguments)
    except ToolError as exc:
        env.host.trace("tool_result", {"id": use.get("id"), "name": name, "error": True, "content": str(exc)})
        return {**reply, "content": str(exc), "is_error": True}
    paid = tool.kind != "builtin" or tool.source.startswith("gallery")
    if paid:
        # A paid call is checked against the caps (in-flight reservations included) before it counts:
        # one the budget stops counts toward no limit.
        env.host.check_budget()
        spend.reserve_tool_call(env.host, windows)
    refusal = counter.check(tool.call_limit_keys(arguments))
    if refusal is not None:
        env.host.trace("limit", {"tool": name, "refused": refusal})
        return {**reply, "content": refusal, "is_error": True}
    what = f"{name} {json.dumps(arguments, ensure_ascii=False)[:200]}"
    if tool.call_writes(arguments):
        env.host.before_write(env.redact(what))
        result.wrote.append(env.redact(what))
        env.wrote.append(env.redact(what))
    if pod_write(tool, arguments):
        env.pod_writes.append(env.redact(what))
    started = time.monotonic()
    try:
        content = tool.handler(arguments, env)
        is_error = False
    except PodLost as lost:
        if not getattr(lost, "reached", True) and env.pod_writes and pod_write(tool, arguments):
            env.pod_writes.pop()  # "a browse call that never reached the pod changed nothing and does not count"
        raise
    except (Park, BudgetExceeded):
        raise
    except ToolError as exc:
        content, is_error = str(exc), True
    except Exception:  # noqa: BLE001 - a broken tool is an error the model sees; the loop goes on
        code = incidents.record(log, "tool %s failed in step %s", name, env.request.label)
        content, is_error = f"{name} failed on an internal error (incident {code})", True
    env.files_may_have_changed(name)
    content = env.redact(str(content))[:MAX_RESULT_CHARS]
    line: dict[str, Any] = {
        "id": use.get("id"),
        "name": name,
        "error": is_error,
        "seconds": round(time.monotonic() - started, 3),
        "content": content[:4000],
    }
    if paid:
        # A paid call's own charge. No tool declares a price of its own yet, so it is what the call itself
        # charged beyond the model requests traced on their own lines (a colleague's, a browser agent's): none.
        line["cost_usd"] = "0"
    env.host.trace("tool_result", line)
    out = {**reply, "content": content}
    if is_error:
        out["is_error"] = True
    return out
