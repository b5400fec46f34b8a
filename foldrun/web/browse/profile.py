"""`cpu_profile=`: where the page's JavaScript spent its time, as a `.cpuprofile` DevTools opens.

The profiler (CDP `Profiler`, Chromium only — the engine table's `cpu_profile` row) starts on the call's tab
before the page opens, so the page's own start-up is in it, and stops once the steps and the read are done.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ..errors import WebToolError

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from .call import Call

DEFAULT_PATH = "outputs/page.cpuprofile"
SAMPLING_US = 200  # a sample every 0.2 ms: short functions show, and the file stays small


def profile_target(call: "Call") -> Any:
    """Where the profile goes (checked before a browser opens), or None when the call asks for none."""
    value = call.args.get("cpu_profile")
    if value in (None, "", False, "false"):
        return None
    path = DEFAULT_PATH if value is True or str(value).lower() == "true" else str(value).strip()
    if not path.lower().endswith(".cpuprofile"):
        raise WebToolError(
            f"browse: cpu_profile= is a .cpuprofile path, such as {DEFAULT_PATH}; {json.dumps(value)} is not"
        )
    return call.tool.save_target(path)


def start(call: "Call", page: "Page") -> Any:
    session = page.context.new_cdp_session(page)
    session.send("Profiler.enable")
    session.send("Profiler.setSamplingInterval", {"interval": SAMPLING_US})
    session.send("Profiler.start")
    return session


def stop(call: "Call", session: Any, target: Any) -> None:
    """Write the profile and say where; a tab already gone leaves a line instead of failing the call."""
    try:
        profile = session.send("Profiler.stop")["profile"]
        session.detach()
    except Exception as exc:  # noqa: BLE001 - the tab closed under the profiler
        call.notes.append(
            f"cpu_profile: not written — the tab closed before the profiler stopped ({str(exc).splitlines()[0][:120]})"
        )
        return
    where = call.tool.write_file(target, json.dumps(profile, separators=(",", ":")).encode())
    functions = {n["callFrame"]["functionName"] for n in profile.get("nodes", []) if n["callFrame"]["functionName"]}
    call.notes.append(
        f"cpu_profile: {where} ({len(profile.get('samples', []))} samples, {len(functions)} functions) "
        f"— open it in Chrome DevTools' Performance panel"
    )
