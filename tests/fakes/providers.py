"""A loopback stand-in for a model provider, speaking the real wires.

One server answers all three: Anthropic `POST /v1/messages` (JSON or SSE),
OpenAI `POST /v1/chat/completions` (JSON or `chat.completion.chunk` SSE) and
`POST /v1/responses` (JSON or Responses events). Replies are scripted in
Anthropic terms and rendered for whichever wire the request arrived on, with
knobs for the cases that differ per wire (finish reasons, how tool-call
arguments are chunked, usage after the finish). Every request is recorded.

    with FakeProvider() as fake:
        fake.reply_text("GOOD all fine")
        fake.reply_tool_use("lookup", {"q": "x"})
        fake.reply_status(429, headers={"retry-after": "30"})
        fake.base_url          # http://127.0.0.1:PORT   (anthropic presets' convention)
        fake.openai_base_url   # http://127.0.0.1:PORT/v1
        fake.requests[0].body  # the parsed JSON body
"""

from __future__ import annotations

import json
import queue
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.fakes.loopback import LoopbackServer, QuietHandler
from tests.fakes.prompt_cache import PromptCache


@dataclass
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: Any
    raw: bytes
    peer: tuple = ()  # the client's (address, port): which connection the request came on


@dataclass
class Reply:
    """One scripted answer. `blocks` are Anthropic content blocks (text,
    tool_use); `stop_reason` is Anthropic's word and is mapped per wire
    unless `finish_reason` (Chat Completions) or `incomplete_reason`
    (Responses) overrides it."""

    blocks: list[dict] = field(default_factory=list)
    stop_reason: str = "end_turn"
    usage: tuple[int, int] = (12, 7)
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    error_body: Any = None
    raw: bytes | None = None
    raw_content_type: str = "text/event-stream"
    delay: float = 0.0
    finish_reason: str | None = None
    matched_stop: str | None = None
    incomplete_reason: str | None = None
    refusal: str | None = None
    args_mode: str = "pieces"  # pieces | with_name | at_end
    usage_after_finish: bool = True
    error_after: int | None = None  # break the stream with an error after this many events
    model: str | None = None
    echo_tool_result: bool = False  # answer with the text of the request's last tool result
    chunks: list[bytes] | None = None  # an SSE body sent as these HTTP chunks, each exactly as given
    cut: bool = False  # with chunks: close the connection after them, the body unfinished
    content_encoding: str | None = None  # with chunks: the header sent (the chunks are already so encoded)
    hold: float = 0.0  # with chunks: seconds to wait after them before the body's end
    cache_read: int = 0  # prompt tokens read from the provider's cache (Anthropic's cache_read_input_tokens)
    cache_write: int = 0  # prompt tokens written to it (cache_creation_input_tokens; Anthropic's wire only)


def last_tool_result(body: dict) -> str:
    """The last tool result in a request, whichever wire it came on."""
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "tool":
            return str(message.get("content") or "")
        content = message.get("content")
        if isinstance(content, list):
            for part in reversed(content):
                if isinstance(part, dict) and part.get("type") == "tool_result":
                    inner = part.get("content")
                    return inner if isinstance(inner, str) else "".join(p.get("text", "") for p in inner or [])
    for item in reversed(body.get("input") or []):
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            return str(item.get("output") or "")
    return ""


class FakeProvider(LoopbackServer):
    def __init__(self) -> None:
        self.replies: "queue.Queue[Reply]" = queue.Queue()
        self.requests: list[Recorded] = []
        self._lock = threading.Lock()
        # Set to a PromptCache (tests/fakes/prompt_cache.py) to answer Anthropic requests with the usage its
        # cache would report: input, cache-read and cache-write tokens counted from the request itself.
        self.prompt_cache: PromptCache | None = None
        # Set to a function of the request body returning a Reply when many steps share one stand-in at once
        # and a queue of scripted replies cannot say which step gets which.
        self.responder: Any = None
        fake = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:
                fake._record(self, b"")
                self._send_json(200, {"object": "list", "data": []})

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length) if length else b""
                fake._record(self, raw)
                try:
                    if fake.responder is not None:  # a reply made from the request itself
                        reply = fake.responder(json.loads(raw) if raw else {})
                    else:
                        reply = fake.replies.get_nowait()
                except queue.Empty:
                    reply = Reply(
                        status=500,
                        error_body={
                            "type": "error",
                            "error": {"type": "api_error", "message": "fake provider: no scripted reply left"},
                        },
                    )
                if reply.delay:
                    time.sleep(reply.delay)
                try:
                    body = json.loads(raw) if raw else {}
                except ValueError:
                    body = {}
                fake._answer(self, reply, body)

            def _send_json(self, status: int, payload: Any, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

        super().__init__(Handler)  # start() / stop(), or `with`
        self.base_url = self.url
        self.openai_base_url = self.base_url + "/v1"

    # ------------------------------------------------------------ scripting

    def reply(self, reply: Reply) -> Reply:
        self.replies.put(reply)
        return reply

    def reply_text(self, text: str, *, stop_reason: str = "end_turn", **kw: Any) -> Reply:
        return self.reply(Reply(blocks=[{"type": "text", "text": text}], stop_reason=stop_reason, **kw))

    def reply_tool_use(
        self, name: str, input: dict, *, id: str | None = None, text: str | None = None, **kw: Any
    ) -> Reply:
        blocks = [{"type": "text", "text": text}] if text else []
        blocks.append({"type": "tool_use", "id": id or f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": input})
        kw.setdefault("stop_reason", "tool_use")
        return self.reply(Reply(blocks=blocks, **kw))

    def reply_cut_tool_use(self, name: str, streamed: str, *, stop_reason: str = "max_tokens", **kw: Any) -> Reply:
        """A tool call whose streamed arguments stop part-way (`streamed` is all that is sent, e.g.
        `{"path": "know`), as when the model runs out of tokens mid-call; the stream itself ends properly."""
        block = {
            "type": "tool_use",
            "id": f"toolu_{uuid.uuid4().hex[:20]}",
            "name": name,
            "input": {},
            "raw_input": streamed,
        }
        return self.reply(Reply(blocks=[block], stop_reason=stop_reason, **kw))

    def reply_tool_uses(self, calls: list[tuple[str, dict]], **kw: Any) -> Reply:
        """Parallel tool calls in one reply."""
        blocks = [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": n, "input": i} for n, i in calls]
        kw.setdefault("stop_reason", "tool_use")
        return self.reply(Reply(blocks=blocks, **kw))

    def reply_echo_tool_result(self, **kw: Any) -> Reply:
        """A text reply repeating the last tool result the request carried."""
        return self.reply(Reply(echo_tool_result=True, **kw))

    def reply_status(
        self, status: int, *, headers: dict | None = None, body: Any = None, message: str = "refused"
    ) -> Reply:
        # body None: the error shape of whichever wire the request arrives on.
        return self.reply(
            Reply(
                status=status,
                headers=dict(headers or {}),
                error_body=body,
                refusal=None if body is not None else message,
            )
        )

    def reply_chunks(
        self, chunks: list[bytes], *, cut: bool = False, content_encoding: str | None = None, hold: float = 0.0
    ) -> Reply:
        """An SSE answer in exactly these chunks (a boundary anywhere: mid-line, mid-character, between CR
        and LF); `cut` closes the connection after them without the body's last chunk, as a dropped stream;
        `hold` waits that long before ending the body (a server that lingers after its last event)."""
        return self.reply(Reply(chunks=list(chunks), cut=cut, content_encoding=content_encoding, hold=hold))

    def reply_raw(self, raw: bytes | str, *, content_type: str = "text/event-stream", status: int = 200) -> Reply:
        data = raw.encode() if isinstance(raw, str) else raw
        return self.reply(Reply(raw=data, raw_content_type=content_type, status=status))

    # ------------------------------------------------------------ record

    def _record(self, handler: BaseHTTPRequestHandler, raw: bytes) -> None:
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        with self._lock:
            self.requests.append(
                Recorded(
                    handler.command,
                    handler.path,
                    {k.lower(): v for k, v in handler.headers.items()},
                    body,
                    raw,
                    tuple(handler.client_address),
                )
            )

    @property
    def last(self) -> Recorded:
        return self.requests[-1]

    # ------------------------------------------------------------ answer

    def _answer(self, h: BaseHTTPRequestHandler, reply: Reply, body: dict) -> None:
        if reply.chunks is not None:
            h.send_response(reply.status)
            h.send_header("content-type", "text/event-stream")
            h.send_header("transfer-encoding", "chunked")
            if reply.content_encoding:
                h.send_header("content-encoding", reply.content_encoding)
            h.end_headers()
            for piece in reply.chunks:  # each its own HTTP chunk, so the client reads it as its own piece
                h.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
                h.wfile.flush()
            if reply.hold:
                time.sleep(reply.hold)
            if reply.cut:
                h.close_connection = True
            else:
                h.wfile.write(b"0\r\n\r\n")
            return
        if reply.raw is not None:
            h.send_response(reply.status)
            h.send_header("content-type", reply.raw_content_type)
            h.send_header("content-length", str(len(reply.raw)))
            h.end_headers()
            h.wfile.write(reply.raw)
            return
        if reply.status >= 400:
            body_out = reply.error_body
            if body_out is None:
                body_out = error_body(h.path, reply.status, reply.refusal or "refused")
            h._send_json(reply.status, body_out, reply.headers)  # type: ignore[attr-defined]
            return
        if reply.echo_tool_result:
            reply = Reply(
                **{
                    **reply.__dict__,
                    "echo_tool_result": False,
                    "blocks": [{"type": "text", "text": last_tool_result(body)}],
                }
            )
        cap = next(
            (
                body[k]
                for k in ("max_tokens", "max_completion_tokens", "max_output_tokens")
                if isinstance(body, dict) and isinstance(body.get(k), int)
            ),
            None,
        )
        if cap is not None and reply.usage[1] > cap:
            # As a provider does: never more output than max_tokens, and the reply says it stopped there.
            reply = Reply(**{**reply.__dict__, "usage": (reply.usage[0], cap), "stop_reason": "max_tokens"})
        path = h.path.split("?", 1)[0]
        stream = bool(body.get("stream"))
        model = reply.model or body.get("model") or "fake-model"
        if path.endswith("/chat/completions"):
            events = chat_events(reply, model) if stream else None
            payload = None if stream else chat_json(reply, model)
            sse_named = False
        elif path.endswith("/responses"):
            events = responses_events(reply, model) if stream else None
            payload = None if stream else responses_json(reply, model)
            sse_named = True
        else:
            if self.prompt_cache is not None:
                used = self.prompt_cache.use(body)
                reply = Reply(
                    **{
                        **reply.__dict__,
                        "usage": (used.input, reply.usage[1]),
                        "cache_read": used.cache_read,
                        "cache_write": used.cache_write,
                    }
                )
            events = anthropic_events(reply, model) if stream else None
            payload = None if stream else anthropic_json(reply, model)
            sse_named = True
        if payload is not None:
            h._send_json(200, payload, reply.headers)  # type: ignore[attr-defined]
            return
        h.send_response(200)
        h.send_header("content-type", "text/event-stream")
        h.send_header("cache-control", "no-cache")
        # As the vendors' APIs stream over HTTP/1.1: chunked, on a connection kept for the next request.
        h.send_header("transfer-encoding", "chunked")
        for key, value in reply.headers.items():
            h.send_header(key, value)
        h.end_headers()

        def send(frame: str) -> None:
            data = frame.encode()
            h.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
            h.wfile.flush()

        for count, (name, data) in enumerate(events):
            if reply.error_after is not None and count == reply.error_after:
                err = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
                if path.endswith("/chat/completions"):
                    frame = f"data: {json.dumps({'error': {'message': 'Overloaded', 'type': 'server_error'}})}\n\n"
                elif path.endswith("/responses"):
                    frame = (
                        "event: error\ndata: "
                        + json.dumps(
                            {
                                "type": "error",
                                "code": "server_error",
                                "message": "Overloaded",
                                "param": None,
                                "sequence_number": count,
                            }
                        )
                        + "\n\n"
                    )
                else:
                    frame = f"event: error\ndata: {json.dumps(err)}\n\n"
                send(frame)
                break
            text = data if isinstance(data, str) else json.dumps(data)
            send((f"event: {name}\n" if sse_named and name else "") + f"data: {text}\n\n")
        h.wfile.write(b"0\r\n\r\n")  # the last chunk: the answer ends here, the connection stays


# ---------------------------------------------------------------- errors


def _arguments(block: dict) -> str:
    """A tool call's arguments as streamed: the block's `raw_input` when scripted (a cut call), else its JSON."""
    return block["raw_input"] if "raw_input" in block else json.dumps(block["input"])


_ANTHROPIC_ERRORS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}
_OPENAI_ERRORS = {
    400: "invalid_request_error",
    401: "invalid_request_error",
    403: "invalid_request_error",
    404: "invalid_request_error",
    429: "requests",
    500: "server_error",
}


def error_body(path: str, status: int, message: str) -> dict:
    """An error as each provider documents it."""
    if path.split("?", 1)[0].endswith(("/chat/completions", "/responses")):
        return {
            "error": {
                "message": message,
                "type": _OPENAI_ERRORS.get(status, "server_error"),
                "param": None,
                "code": None,
            }
        }
    return {"type": "error", "error": {"type": _ANTHROPIC_ERRORS.get(status, "api_error"), "message": message}}


# ---------------------------------------------------------------- Anthropic


def _usage(reply: Reply) -> dict:
    return {
        "input_tokens": reply.usage[0],
        "cache_creation_input_tokens": reply.cache_write,
        "cache_read_input_tokens": reply.cache_read,
        "output_tokens": reply.usage[1],
    }


def anthropic_json(reply: Reply, model: str) -> dict:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": reply.blocks,
        "stop_reason": reply.stop_reason,
        "stop_sequence": reply.matched_stop,
        "usage": _usage(reply),
    }


def anthropic_events(reply: Reply, model: str) -> list[tuple[str, Any]]:
    """Shaped after Anthropic's streaming documentation example."""
    events: list[tuple[str, Any]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": f"msg_{uuid.uuid4().hex[:24]}",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": model,
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {**_usage(reply), "output_tokens": 1},
                },
            },
        )
    ]
    events.append(("ping", {"type": "ping"}))
    for index, block in enumerate(reply.blocks):
        if block["type"] == "text":
            events.append(
                (
                    "content_block_start",
                    {"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                )
            )
            text = block["text"]
            for start in range(0, len(text), 7):
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "text_delta", "text": text[start : start + 7]},
                        },
                    )
                )
        elif block["type"] == "web_search_tool_result":  # a server tool's result arrives whole in its start event
            events.append(
                ("content_block_start", {"type": "content_block_start", "index": index, "content_block": block})
            )
        else:  # tool_use, or a server tool's own use (server_tool_use), streamed alike
            events.append(
                (
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": index,
                        "content_block": {"type": block["type"], "id": block["id"], "name": block["name"], "input": {}},
                    },
                )
            )
            raw = _arguments(block)
            events.append(
                (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": ""},
                    },
                )
            )
            for start in range(0, len(raw), 5):
                events.append(
                    (
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": raw[start : start + 5]},
                        },
                    )
                )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.stop_reason, "stop_sequence": reply.matched_stop},
                "usage": {"output_tokens": reply.usage[1]},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


# ---------------------------------------------------------------- Chat Completions

_FINISH = {
    "end_turn": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "refusal": "content_filter",
}


def _finish(reply: Reply) -> str:
    return reply.finish_reason or _FINISH.get(reply.stop_reason, "stop")


def _chat_usage(reply: Reply) -> dict:
    # OpenAI counts cached tokens inside prompt_tokens and says how many in prompt_tokens_details.
    prompt = reply.usage[0] + reply.cache_read
    return {
        "prompt_tokens": prompt,
        "completion_tokens": reply.usage[1],
        "total_tokens": prompt + reply.usage[1],
        "prompt_tokens_details": {"cached_tokens": reply.cache_read, "audio_tokens": 0},
    }


def chat_json(reply: Reply, model: str) -> dict:
    text = "".join(b["text"] for b in reply.blocks if b["type"] == "text") or None
    calls = [
        {"id": b["id"], "type": "function", "function": {"name": b["name"], "arguments": json.dumps(b["input"])}}
        for b in reply.blocks
        if b["type"] == "tool_use"
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text, "refusal": reply.refusal, "annotations": []}
    if calls:
        message["tool_calls"] = calls
    choice: dict[str, Any] = {"index": 0, "message": message, "logprobs": None, "finish_reason": _finish(reply)}
    if reply.matched_stop is not None:
        choice["stop_reason"] = reply.matched_stop
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": _chat_usage(reply),
        "system_fingerprint": "fp_fake",
    }


def chat_events(reply: Reply, model: str) -> list[tuple[None, Any]]:
    """Shaped after OpenAI's chat.completion.chunk streaming examples."""
    ident, created = f"chatcmpl-{uuid.uuid4().hex[:24]}", int(time.time())

    def chunk(delta: dict, finish: str | None = None, **extra: Any) -> tuple[None, dict]:
        choice: dict[str, Any] = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish, **extra}
        return (
            None,
            {
                "id": ident,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "system_fingerprint": "fp_fake",
                "choices": [choice],
            },
        )

    events = [chunk({"role": "assistant", "content": "", "refusal": None})]
    for block in reply.blocks:
        if block["type"] == "text":
            for start in range(0, len(block["text"]), 7):
                events.append(chunk({"content": block["text"][start : start + 7]}))
    if reply.refusal:
        events.append(chunk({"refusal": reply.refusal}))
    calls = [b for b in reply.blocks if b["type"] == "tool_use"]
    for index, call in enumerate(calls):
        raw = _arguments(call)
        head = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": call["name"], "arguments": ""},
        }
        if reply.args_mode == "with_name":
            head["function"]["arguments"] = raw
            events.append(chunk({"tool_calls": [head]}))
        else:
            events.append(chunk({"tool_calls": [head]}))
            if reply.args_mode == "pieces":
                for start in range(0, len(raw), 4):
                    events.append(
                        chunk({"tool_calls": [{"index": index, "function": {"arguments": raw[start : start + 4]}}]})
                    )
    if reply.args_mode == "at_end":
        for index, call in enumerate(calls):
            events.append(chunk({"tool_calls": [{"index": index, "function": {"arguments": _arguments(call)}}]}))
    extra = {"stop_reason": reply.matched_stop} if reply.matched_stop is not None else {}
    last = chunk({}, _finish(reply), **extra)
    if reply.usage_after_finish:
        events.append(last)
        events.append(
            (
                None,
                {
                    "id": ident,
                    "object": "chat.completion.chunk",
                    "created": created,
                    "model": model,
                    "system_fingerprint": "fp_fake",
                    "choices": [],
                    "usage": _chat_usage(reply),
                },
            )
        )
    else:
        last[1]["usage"] = _chat_usage(reply)
        events.append(last)
    events.append((None, "[DONE]"))
    return events


# ---------------------------------------------------------------- Responses


def _responses_output(reply: Reply) -> list[dict]:
    output: list[dict] = []
    texts = [b for b in reply.blocks if b["type"] == "text"]
    if texts or reply.refusal:
        content: list[dict] = [{"type": "output_text", "text": b["text"], "annotations": []} for b in texts]
        if reply.refusal:
            content.append({"type": "refusal", "refusal": reply.refusal})
        output.append(
            {
                "type": "message",
                "id": f"msg_{uuid.uuid4().hex[:20]}",
                "status": "completed",
                "role": "assistant",
                "content": content,
            }
        )
    for block in reply.blocks:
        if block["type"] == "tool_use":
            output.append(
                {
                    "type": "function_call",
                    "id": f"fc_{uuid.uuid4().hex[:20]}",
                    "call_id": block["id"],
                    "name": block["name"],
                    "arguments": _arguments(block),
                    "status": "completed",
                }
            )
    return output


def responses_json(reply: Reply, model: str, output: list[dict] | None = None) -> dict:
    reason = reply.incomplete_reason or ("max_output_tokens" if reply.stop_reason == "max_tokens" else None)
    return {
        "id": f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response",
        "created_at": int(time.time()),
        "status": "incomplete" if reason else "completed",
        "error": None,
        "incomplete_details": {"reason": reason} if reason else None,
        "instructions": None,
        "max_output_tokens": None,
        "model": model,
        "output": _responses_output(reply) if output is None else output,
        "parallel_tool_calls": True,
        "previous_response_id": None,
        "reasoning": {"effort": None, "summary": None},
        "store": False,
        "temperature": 1.0,
        "text": {"format": {"type": "text"}},
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "truncation": "disabled",
        "usage": {
            "input_tokens": reply.usage[0] + reply.cache_read,
            "input_tokens_details": {"cached_tokens": reply.cache_read},
            "output_tokens": reply.usage[1],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": sum(reply.usage) + reply.cache_read,
        },
        "user": None,
        "metadata": {},
    }


def responses_events(reply: Reply, model: str) -> list[tuple[str, Any]]:
    """Shaped after OpenAI's Responses streaming events reference."""
    final = responses_json(reply, model)
    start = {**final, "status": "in_progress", "output": [], "usage": None, "incomplete_details": None}
    seq = iter(range(10_000))
    events: list[tuple[str, Any]] = []

    def emit(kind: str, **data: Any) -> None:
        events.append((kind, {"type": kind, "sequence_number": next(seq), **data}))

    emit("response.created", response=start)
    emit("response.in_progress", response=start)
    for index, item in enumerate(final["output"]):
        if item["type"] == "message":
            emit(
                "response.output_item.added", output_index=index, item={**item, "status": "in_progress", "content": []}
            )
            for part_index, part in enumerate(item["content"]):
                if part["type"] == "output_text":
                    emit(
                        "response.content_part.added",
                        item_id=item["id"],
                        output_index=index,
                        content_index=part_index,
                        part={"type": "output_text", "text": "", "annotations": []},
                    )
                    for s in range(0, len(part["text"]), 7):
                        emit(
                            "response.output_text.delta",
                            item_id=item["id"],
                            output_index=index,
                            content_index=part_index,
                            delta=part["text"][s : s + 7],
                            logprobs=[],
                        )
                    emit(
                        "response.output_text.done",
                        item_id=item["id"],
                        output_index=index,
                        content_index=part_index,
                        text=part["text"],
                        logprobs=[],
                    )
                else:
                    emit(
                        "response.content_part.added",
                        item_id=item["id"],
                        output_index=index,
                        content_index=part_index,
                        part={"type": "refusal", "refusal": ""},
                    )
                    emit(
                        "response.refusal.delta",
                        item_id=item["id"],
                        output_index=index,
                        content_index=part_index,
                        delta=part["refusal"],
                    )
                    emit(
                        "response.refusal.done",
                        item_id=item["id"],
                        output_index=index,
                        content_index=part_index,
                        refusal=part["refusal"],
                    )
                emit(
                    "response.content_part.done",
                    item_id=item["id"],
                    output_index=index,
                    content_index=part_index,
                    part=part,
                )
        else:
            emit(
                "response.output_item.added",
                output_index=index,
                item={**item, "arguments": "", "status": "in_progress"},
            )
            raw = item["arguments"]
            for s in range(0, len(raw), 4):
                emit(
                    "response.function_call_arguments.delta",
                    item_id=item["id"],
                    output_index=index,
                    delta=raw[s : s + 4],
                )
            emit("response.function_call_arguments.done", item_id=item["id"], output_index=index, arguments=raw)
        emit("response.output_item.done", output_index=index, item=item)
    emit("response.incomplete" if final["status"] == "incomplete" else "response.completed", response=final)
    return events
