"""The engine's side of the `web` tool: a `Tool` for one step, registered as the gallery tool `web`.

Loaded by the engine's tool registry (`foldrun.engine.tools.registry.TRANSPORT_MODULES`); it uses only
`engine.tools` (the `Tool`, the registry) and the step's `ToolContext`, never `engine.step`.
"""

from __future__ import annotations

import json
import os
from typing import Any

from foldrun.engine.errors import PodLost
from foldrun.engine.tools.base import Tool, ToolError
from foldrun.engine.tools.registry import ToolPlan, register_gallery_tool

from .browse.lost import PodLostError
from .browse.lost import summary as pod_summary
from .errors import WebToolError
from .tool import MISPLACED, WebTool, resolve_language, resolve_web_block
from .providers.models import server_tools


def _endpoints() -> dict[str, str]:
    """FOLDRUN_WEB_ENDPOINTS: a JSON object of provider name -> base URL, for an install that reaches a vendor
    through its own gateway (and for tests, a loopback stand-in). Unreadable is ignored, never fatal."""
    raw = os.environ.get("FOLDRUN_WEB_ENDPOINTS") or ""
    try:
        data = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def web_tool_for(agent: Any, env: Any, *, searxng_url: str | None = None) -> WebTool:
    """The step's WebTool, from the resolved agent (`AgentSpec`) and the step's `StepEnv`.

    `searxng_url` is the account's own engine; absent, the worker's `FOLDRUN_SEARXNG_URL`.
    """
    layers = (agent.meta, agent.workspace_defaults, agent.account_defaults)
    language, region = resolve_language(*layers)

    def secret(name: str) -> str:
        return env.secret_values([name])[name]

    # The account's own engine is an address a person typed, so it meets the network guard; the install's
    # default (FOLDRUN_SEARXNG_URL) is the operator's, and may sit on the cluster's private network.
    own = searxng_url or str(getattr(getattr(env, "request", None), "search_engine_url", "") or "") or None
    searxng = own or os.environ.get("FOLDRUN_SEARXNG_URL") or None
    provider = next((layer.get("provider") for layer in layers if layer and layer.get("provider")), None)
    model_provider = str(provider.get("name") if isinstance(provider, dict) else provider or "") or None
    model_format = str(provider.get("format") or "") if isinstance(provider, dict) else ""
    web = WebTool(
        resolve_web_block(*layers),
        http=env.http,
        sandbox=env.sandbox.root,
        allow_private=bool(env.allow_private_urls),
        test_mode=bool(env.is_test),
        trace=lambda event: env.host.trace("web", event),
        log=env.log,
        secret=secret,
        language=language,
        region=region,
        searxng_url=searxng,
        model_provider=model_provider,
        searxng_guarded=bool(own),
        pod_account=_pod_account(env),
        session_cdp=str(getattr(getattr(env, "request", None), "browser_cdp", "") or "") or None,
        session_allow_hosts=list(getattr(getattr(env, "request", None), "browser_allow_hosts", None) or []),
        seeds=env.host.kept_seeds,
    )  # what seeded a kept vendor profile: the host's
    web.model_format = model_format or None
    web.on_session_action = env.host.session_action  # a task's browse is its session's action
    web.live_frames = env.host.live_frames()  # the Run page's live view of the step's browser, when kept
    env.on_close(web.close)
    env.on_close(lambda: _say_where_it_browsed(web, env))
    web.endpoints.update(_endpoints())
    return web


def _say_where_it_browsed(web: WebTool, env: Any) -> None:
    """The try's image and pod line, for its row in `tries`: "slim" on the account's pod, "full" for the re-run
    after a lost pod (a browser inside the step)."""
    request = getattr(env, "request", None)
    rerun = request is not None and not getattr(request, "browser_pod", True) and "browse" in web.allowed_actions()
    in_step = getattr(web, "in_step_browser", False)  # a live page, a pinned version, a window: not the pod's
    env.browser_image = "slim" if web.on_pod and not in_step else ("full" if rerun or in_step else "")
    env.pod_line = pod_summary(web.pod_lines)


def _pod_account(env: Any) -> str | None:
    """The account whose browser pods serve the step: a worker's step names its account (the request's
    tenant); the CLI and the engine's own tests name none, and launch Chromium inside the step — so does the
    re-run of a step whose pod was lost (`browser_pod` False)."""
    if os.environ.get("FOLDRUN_BROWSER_PODS", "1") == "0":
        return None
    request = getattr(env, "request", None)
    if request is not None and not getattr(request, "browser_pod", True):
        return None
    return str(getattr(request, "tenant", "") or "") or None


def engine_tool(agent: Any, env: Any, *, searxng_url: str | None = None) -> tuple[Any, list[str]]:
    """(the engine `Tool` for `web`, the vault names it needs)."""
    web = web_tool_for(agent, env, searxng_url=searxng_url)
    definition = web.schema()

    def handler(args: dict, _env: Any) -> str:
        try:
            return web.call(args)
        except WebToolError as exc:
            raise ToolError(str(exc)) from None
        except PodLostError as exc:  # the step's try ends; the engine judges its reads and writes
            raise PodLost(str(exc), reached=exc.reached) from None

    tool = Tool(
        name="web",
        description=definition["description"],
        input_schema=definition["input_schema"],
        handler=handler,
        limit_keys=web.limit_keys,
        writes=web.writes,
        outward=False,
        kind="builtin",
        source="gallery/tools/web/tool.md",
        misplaced=dict(MISPLACED),
    )
    tool.server_definitions = server_definitions(web, env)  # type: ignore[attr-defined]
    tool.server_plugins = server_plugins(web)  # type: ignore[attr-defined]
    return tool, web.required_secret_names()


# Model providers whose endpoint speaks Anthropic's Messages wire, where a server tool rides in `tools`.
ANTHROPIC_SHAPED = ("anthropic", "zai")


def server_definitions(web: WebTool, env: Any) -> list[dict]:
    """The model provider's own search or fetch, as the server tool its request carries (web.search: anthropic)."""
    wanted = server_tools(web)
    if not wanted:
        return []
    if (web.model_provider == "openai" and web.model_format == "responses") or (
        web.model_provider in ("kimi", "moonshot") and web.model_format == "openai"
    ):
        return [dict(definition) for where, definition in wanted if where == "tools"]
    if all(where == "plugins" for where, _definition in wanted):
        return []  # OpenRouter's plugin rides beside the tools (server_plugins)
    if web.model_provider not in ANTHROPIC_SHAPED:
        env.log(
            f"web: {web.model_provider}'s own search or fetch is handed over here only on an Anthropic-shaped "
            f"endpoint ({', '.join(ANTHROPIC_SHAPED)}), OpenAI's Responses (format: responses) or Moonshot's "
            f"chat endpoint (format: openai); this step's model is not given it"
        )
        return []
    return [dict(definition) for where, definition in wanted if where == "tools"]


def plan_web(tool_file: Any, ctx: Any) -> ToolPlan:
    """The gallery's `web`: offered beside the built-ins; its vault names are resolved with the step's
    others (a missing one fails the step)."""
    tool, names = engine_tool(ctx.agent, ctx)
    return ToolPlan(names, lambda: [tool], with_builtins=True)


register_gallery_tool("web", plan_web)


def server_plugins(web: WebTool) -> list[dict]:
    """OpenRouter's web plugin ({id: web}), sent in the body of that provider's requests."""
    if web.model_provider != "openrouter":
        return []
    return [dict(definition) for where, definition in server_tools(web) if where == "plugins"]
