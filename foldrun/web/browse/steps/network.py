"""Network steps: mock and unmock requests, go offline, download."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import WebToolError
from ...net import scrub_url
from ..registry import step

if TYPE_CHECKING:  # pragma: no cover
    from playwright.sync_api import Page

    from ..call import Call


@step("mock", acts=False, capability="mock")
def mock_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    mock(call, page, str(value), item)


@step("unmock", acts=False, capability="mock")
def unmock(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    if value == "*":
        page.unroute_all(behavior="ignoreErrors")
    else:
        page.unroute(str(value))


@step("offline", acts=False)
def offline(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    page.context.set_offline(bool(value))


@step("download", acts=True)
def download_step(call: "Call", page: "Page", name: str, value: Any, item: dict, index: int, timeout: float) -> None:
    download(call, page, value, item, timeout)


def download(call: "Call", page: "Page", value: Any, step: dict, timeout: float) -> None:
    """`download` from a control (or a URL) to `outputs/<to>`."""
    to = str(step.get("to") or "")
    given_url = isinstance(value, str) and value.startswith(("http://", "https://"))
    if given_url:  # a navigation: goto's denial and allowed_domains hold for it
        call.denied("goto", "a download given a URL")
        reason = call.host_refusal(value)
        if reason:
            raise WebToolError(f"browse: {scrub_url(value)} was not downloaded — {reason}")
    with page.expect_download(timeout=max(timeout, 30_000)) as caught:
        if given_url:
            page.evaluate(
                "u => { const a = document.createElement('a'); a.href = u; a.download = ''; "
                "document.body.appendChild(a); a.click(); a.remove(); }",
                value,
            )
        else:
            call.locate(page, value).click(timeout=timeout)
    got = caught.value
    name = to or got.suggested_filename or "download"
    target = call.tool.save_target(name if name.startswith("outputs/") else f"outputs/{name}")
    temp = got.path()
    call.tool.write_file(target, Path(temp).read_bytes())
    call.notes.append(f"download: {call.tool.relative(target)} ({Path(temp).stat().st_size:,} bytes)")


def mock(call: "Call", page: "Page", glob: str, step: dict) -> None:
    """Answer for the server on every request matching the glob, from now on."""
    if step.get("abort"):
        page.route(glob, lambda route: route.abort())
        return
    headers = {str(k): str(v) for k, v in (step.get("headers") or {}).items()}
    if "json" in step:
        body, headers = json.dumps(step["json"]).encode(), {"content-type": "application/json", **headers}
    elif "file" in step:
        body = call.tool.sandbox_file(step["file"], arg="mock file").read_bytes()
    else:
        body = str(step.get("body") or "").encode()
    status = int(step.get("status") or 200)
    page.route(glob, lambda route: route.fulfill(status=status, headers=headers, body=body))
