"""The translator's CPU cost: a long streamed reply with tool calls, read as
Chat Completions chunks and as Responses events through the translator,
against the same reply as an Anthropic stream passed straight through — in
the same run, on the same machine. Target: at most 1.5×.

    .venv/bin/python tests/bench/translator_bench.py [--chunks 4000] [--repeat 7]

Prints one line per wire and exits non-zero when a ratio is over the target.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from foldrun.providers.client import AnthropicStream  # noqa: E402
from foldrun.providers.sse import iter_events  # noqa: E402
from foldrun.providers.translate import ChatStream, ResponsesStream  # noqa: E402
from tests.fakes.providers import Reply, anthropic_events, chat_events, responses_events  # noqa: E402

TARGET = 1.5


def long_reply(chunks: int) -> Reply:
    """About `chunks` text deltas (7 characters each) and three tool calls with sizeable arguments."""
    text = ("The desk ranked these pages this week, in this order. " * (chunks * 7 // 54 + 1))[: chunks * 7]
    calls = [
        {
            "type": "tool_use",
            "id": f"toolu_{i}",
            "name": "write_file",
            "input": {"path": f"outputs/part-{i}.md", "content": "line of findings\n" * 60},
        }
        for i in range(3)
    ]
    return Reply(blocks=[{"type": "text", "text": text}, *calls], stop_reason="tool_use", usage=(5000, chunks))


def sse_lines(events, named: bool) -> list[str]:
    lines: list[str] = []
    for name, data in events:
        if named and name:
            lines.append(f"event: {name}")
        lines.append("data: " + (data if isinstance(data, str) else json.dumps(data)))
        lines.append("")
    return lines


def read(lines: list[str], accumulator) -> dict:
    """What ModelClient._stream does with each event."""
    for event in iter_events(lines):
        if event.data == "[DONE]":
            break
        data = json.loads(event.data)
        if event.event and "type" not in data:
            data = {**data, "type": event.event}
        accumulator.feed(data)
    return accumulator.result()


def best_of(repeat: int, fn) -> float:
    """The least CPU time this thread spent over `repeat` runs: CPU, not wall
    clock, so other processes on a shared machine do not move the ratio."""
    times = []
    for _ in range(repeat):
        start = time.thread_time()
        fn()
        times.append(time.thread_time() - start)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    reply = long_reply(args.chunks)
    direct = sse_lines(anthropic_events(reply, "m"), named=True)
    chat = sse_lines(chat_events(reply, "m"), named=False)
    responses = sse_lines(responses_events(reply, "m"), named=True)
    expected = read(direct, AnthropicStream())
    assert read(chat, ChatStream())["content"][1:] == expected["content"][1:]
    assert read(responses, ResponsesStream())["content"][1:] == expected["content"][1:]
    base = best_of(args.repeat, lambda: read(direct, AnthropicStream()))
    worst = 0.0
    print(f"anthropic (straight through): {base * 1000:.1f} ms for {len(direct)} lines")
    for label, lines, make in (
        ("openai chat chunks", chat, ChatStream),
        ("responses events", responses, ResponsesStream),
    ):
        took = best_of(args.repeat, lambda: read(lines, make()))
        ratio = took / base
        worst = max(worst, ratio)
        print(f"{label} (translated): {took * 1000:.1f} ms for {len(lines)} lines — {ratio:.2f}× (target ≤ {TARGET}×)")
    return 0 if worst <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
