"""The one model call both of run_overhead.py's peers make (the bare Celery task in tests/bench/tasks.py and the
DBOS workflow step in run_overhead.py), so that a peer does what a step does over the wire and nothing more.

A foldrun step asks for its reply streamed (`"stream": true`, `accept: text/event-stream`:
foldrun/providers/client.py), so the peers do too: the same body a step sent (run_overhead.py takes it from the
stand-in's record of a one-step run), the same headers, POSTed through the same guarded shared client
(`net.client("model")`) to the same loopback stand-in (tests/fakes/providers.py, Anthropic's SSE wire), and the
stream read to its end. An unstreamed call answered with one JSON body costs ~0.9 ms less CPU than the same call
streamed, and a peer that saved it would not be making "the same call".

The stream is read as a plain SSE consumer would, with httpx's `stream()` and `iter_lines()`: each `data:` line
parsed as JSON and the text of the content_block_delta events joined. It does not assemble the message as the
product's AnthropicStream does (blocks, tool input, usage, stop reason, errors) — that is foldrun's work, which
the peers are measured without.
"""

from __future__ import annotations

import json

from foldrun import net
from foldrun.providers.client import ANTHROPIC_VERSION

# The headers a step's request carries (foldrun/providers/client.py; a loopback base_url needs no key).
HEADERS = {"content-type": "application/json", "accept": "text/event-stream", "anthropic-version": ANTHROPIC_VERSION}


def streamed_text(url: str, body: dict) -> str:
    """POST `body` streamed to `url` through the shared "model" client and return the reply's text."""
    parts: list[str] = []
    with net.client("model").stream(
        "POST", url, headers=HEADERS, content=json.dumps({**body, "stream": True}).encode()
    ) as reply:
        reply.raise_for_status()
        for line in reply.iter_lines():
            if line.startswith("data:"):
                event = json.loads(line[5:])
                if event.get("type") == "content_block_delta":
                    parts.append(event["delta"].get("text", ""))
    return "".join(parts)
