"""What a browse call answers: its lines to the run log, its event, and the text the model reads."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from ..net import scrub_url
from .call import Call
from .framing import boundaries_on, bounded, fresh_nonce

if TYPE_CHECKING:  # pragma: no cover
    from ..tool import WebTool


def finish(
    tool: "WebTool",
    call: Call,
    url: str,
    final_url: str,
    mode: str,
    steps: list,
    started: float,
    body: str,
    explicit_mode: bool,
    limit: int,
) -> str:
    """The call's lines to the run log, its event, and the text the model reads."""
    for line in call.page_failures:
        tool.log(call.redact(f"browse {scrub_url(url)}: {line}"))
    tool.log(call.redact(scrub_url(final_url)))  # the last stderr line: how a caller learns where a save landed
    tool.browsers.count_bytes(sum(r.get("bytes") or 0 for r in call.network))  # the pod's bytes, for its line
    tool.emit(
        {
            "event": "browse",
            "url": url,
            "mode": mode,
            "steps": len(steps),
            "seconds": round(time.monotonic() - started, 3),
            "page_failures": len(call.page_failures) or None,
            "recordings": call.recordings or None,
        }
    )
    if call.results:
        tool.write_file(
            tool.sandbox / "outputs" / "results.json",
            call.redact(json.dumps(call.results, indent=1, ensure_ascii=False, default=str)).encode(),
        )
    parts: list[str] = []
    nonce = fresh_nonce() if boundaries_on(call) else None
    words = (lambda text: bounded(text, nonce, final_url)) if nonce else (lambda text: text)  # noqa: E731
    if call.notes:
        parts.append("\n".join(call.notes))
    if call.results and not explicit_mode:  # the answers are the output when nothing else claims it
        parts.append(words(json.dumps(call.results, indent=1, ensure_ascii=False, default=str)))
    else:
        if not body.strip():
            kind = str(call.main_response.get("contentType") or "").split(";")[0].strip().lower()
            if kind and "html" not in kind and not kind.startswith("text/"):
                why = f"it is {kind}, not a page — fetch it with mode=raw and save= to keep the bytes"
            else:
                why = "; ".join(call.page_failures[:3]) or "the page drew no text"
            parts.append(f"the page is empty — {why}")
        else:
            parts.append(words(body))
        if call.results:
            parts.append("Results:\n" + words(json.dumps(call.results, indent=1, ensure_ascii=False, default=str)))
    out = call.redact("\n\n".join(parts))
    if len(out) > limit:
        out = out[:limit] + f"\n\n[cut at {limit:,} of {len(out):,} characters]"
        if nonce and out.count(f"<<page-words {nonce} ") > out.count(f"<<end page-words {nonce}>>"):
            out += f"\n<<end page-words {nonce}>>"  # the cut page's words are still closed
    return out
