"""A streamed answer read straight from its bytes (foldrun.providers.sse.iter_byte_events), on both paths a
model call takes: the shared foldrun.net client's pool without httpx's client layer (GuardedTransport.plain),
and a caller's own client through httpx. A chunk may end anywhere; the events read are the same."""

from __future__ import annotations

import gzip
import json
import time
import zlib

import httpx
import pytest

from foldrun import net
from foldrun.providers.client import ModelClient, ProviderError, Supply
from foldrun.providers.sse import iter_byte_events

ASK = [{"role": "user", "content": "Say it."}]
TEXT = "héllo — ✓ 𝄞 done"  # two-, three- and four-byte characters


def anthropic_wire(text: str, line_end: str = "\n") -> bytes:
    """A whole Anthropic Messages stream (as documented) saying `text`, with `line_end` ending every line."""
    events = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "content": [],
                    "model": "m",
                    "stop_reason": None,
                    "usage": {"input_tokens": 3, "output_tokens": 1},
                },
            },
        ),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 5}},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    frames = [f": a comment{line_end}"]
    frames += [
        f"event: {name}{line_end}data: {json.dumps(data, ensure_ascii=False)}{line_end}{line_end}"
        for name, data in events
    ]
    return "".join(frames).encode()


def split_at(data: bytes, *cuts: int) -> list[bytes]:
    edges = [0, *sorted(cuts), len(data)]
    return [data[a:b] for a, b in zip(edges, edges[1:])]


@pytest.fixture(params=["plain", "httpx"])
def model(request, fake_provider):
    """A ModelClient on the shared client (the pool straight: plain), or on a client of its own over the
    same guarded transport (httpx's stream)."""
    s = Supply(name=None, format="anthropic", base_url=fake_provider.base_url, model="m", key="k")
    if request.param == "plain":
        client = ModelClient(s)
        assert client._transport is not None
        return client
    own = httpx.Client(transport=net.transport("model"), timeout=30.0)
    request.addfinalizer(own.close)
    client = ModelClient(s, http=own)
    assert client._transport is None
    return client


# ------------------------------------------------------------ the parser alone, every boundary


@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"])
def test_every_boundary_in_a_stream_reads_the_same_events(line_end):
    wire = anthropic_wire(TEXT, line_end) + f"data: one{line_end}data: two{line_end}{line_end}".encode()
    whole = list(iter_byte_events([wire]))
    assert [name for name, _ in whole][:2] == ["message_start", "content_block_start"]
    assert json.loads(whole[2][1])["delta"]["text"] == TEXT
    assert whole[-1] == (None, "one\ntwo")
    for cut in range(1, len(wire)):
        assert list(iter_byte_events(split_at(wire, cut))) == whole, cut
    assert list(iter_byte_events([wire[i : i + 1] for i in range(len(wire))])) == whole


def test_a_line_ends_only_at_cr_or_lf_so_a_raw_line_separator_in_json_stays():
    data = json.dumps({"type": "x", "text": "a\u2028b\u2029c\x85d\x0ce"}, ensure_ascii=False)
    assert list(iter_byte_events([f"data: {data}\n\n".encode()])) == [(None, data)]


def test_a_trailing_event_without_its_blank_line_is_still_read():
    assert list(iter_byte_events([b"event: a\ndata: {}\n\ndata: [DONE]"])) == [("a", "{}"), (None, "[DONE]")]
    assert list(iter_byte_events([b"data: 1\r\n\r"])) == [(None, "1")]


# ------------------------------------------------------------ through the client, on the wire


def test_a_boundary_inside_a_line_and_inside_a_character_reads_the_whole_text(fake_provider, model):
    wire = anthropic_wire(TEXT)
    inside_char = wire.index("é".encode()) + 1  # between é's two bytes
    inside_clef = wire.index("𝄞".encode()) + 2  # in the middle of a four-byte character
    inside_line = wire.index(b"content_block_delta") + 4
    fake_provider.reply_chunks(split_at(wire, inside_line, inside_char, inside_clef))
    reply = model.create(None, ASK, [], 10)
    assert reply["content"] == [{"type": "text", "text": TEXT}]
    assert reply["usage"] == {"input_tokens": 3, "output_tokens": 5}
    assert reply["stop_reason"] == "end_turn"


def test_crlf_line_ends_split_between_cr_and_lf_read_the_same(fake_provider, model):
    wire = anthropic_wire(TEXT, "\r\n")
    cuts = [i + 1 for i in range(len(wire)) if wire[i : i + 2] == b"\r\n"][::3]  # between CR and LF, many times
    fake_provider.reply_chunks(split_at(wire, *cuts))
    assert model.create(None, ASK, [], 10)["content"] == [{"type": "text", "text": TEXT}]


def test_a_stream_cut_mid_event_is_a_provider_error_not_a_partial_reply(fake_provider, model):
    wire = anthropic_wire(TEXT)
    middle = wire.index(b"content_block_delta") + 40
    fake_provider.reply_chunks([wire[:middle]], cut=True)
    with pytest.raises(ProviderError, match="failed mid-answer") as info:
        model.create(None, ASK, [], 10)
    assert info.value.verdict == "provider-error"


def test_a_stream_that_ends_mid_json_or_before_its_stop_says_so(fake_provider, model):
    wire = anthropic_wire(TEXT)
    fake_provider.reply_chunks([wire[: wire.index(b"content_block_delta") + 40]])  # ended properly, mid-JSON
    with pytest.raises(ProviderError, match="an event was not JSON"):
        model.create(None, ASK, [], 10)
    fake_provider.reply_chunks([wire[: wire.index(b"event: message_stop")]])
    with pytest.raises(ProviderError, match="ended before the reply was complete"):
        model.create(None, ASK, [], 10)


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_content_encoded_stream_is_decoded_as_it_arrives(fake_provider, model, coding):
    wire = anthropic_wire(TEXT)
    packed = gzip.compress(wire) if coding == "gzip" else zlib.compress(wire)
    fake_provider.reply_chunks(split_at(packed, 5, len(packed) // 2, len(packed) - 3), content_encoding=coding)
    assert model.create(None, ASK, [], 10)["content"] == [{"type": "text", "text": TEXT}]
    assert "gzip" in fake_provider.last.headers["accept-encoding"]


def test_an_error_event_and_an_http_error_with_a_body_read_as_before(fake_provider, model):
    fake_provider.reply_text("partial answer here", error_after=3)
    with pytest.raises(ProviderError, match="stream broke off with an error: Overloaded"):
        model.create(None, ASK, [], 10)
    fake_provider.reply_status(529, message="overloaded right now")
    with pytest.raises(ProviderError, match="HTTP 529: overloaded right now") as info:
        model.create(None, ASK, [], 10)
    assert info.value.status == 529


def test_the_request_sent_is_the_same_on_both_paths(fake_provider, model):
    fake_provider.reply_text("ok")
    model.create("Be brief.", ASK, [], 10)
    sent = fake_provider.last
    assert sent.body["stream"] is True and sent.body["messages"] == ASK
    assert sent.headers["content-type"] == "application/json"
    assert sent.headers["accept"] == "text/event-stream"
    assert sent.headers["x-api-key"] == "k" and sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.headers["user-agent"].startswith("python-httpx/")
    assert int(sent.headers["content-length"]) == len(sent.raw)


def test_a_chat_completions_stream_leaves_its_connection_for_the_next_call(fake_provider):
    # [DONE] is the last event; the body's end after it is read, so the kept-alive connection is reused.
    client = ModelClient(
        Supply(
            name=None, format="openai", base_url=fake_provider.openai_base_url, model="m", key="k", key_header="bearer"
        )
    )
    for _ in range(3):
        fake_provider.reply_text("GOOD")
        assert client.create(None, ASK, [], 10)["content"] == [{"type": "text", "text": "GOOD"}]
    assert len({r.peer for r in fake_provider.requests}) == 1


def test_a_raw_line_separator_inside_a_streamed_string_reaches_the_reply(fake_provider, model):
    # U+2028 is valid unescaped in JSON (JSON.stringify leaves it so); it is no SSE line end
    text = "one\u2028two\u2029three\x85four"
    fake_provider.reply_chunks(split_at(anthropic_wire(text), 100))
    assert model.create(None, ASK, [], 10)["content"] == [{"type": "text", "text": text}]


def test_a_server_that_lingers_after_done_costs_at_most_half_a_second(fake_provider):
    client = ModelClient(
        Supply(
            name=None, format="openai", base_url=fake_provider.openai_base_url, model="m", key="k", key_header="bearer"
        )
    )
    chunk = {
        "id": "c1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [{"index": 0, "delta": {"role": "assistant", "content": "GOOD"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 2, "completion_tokens": 1, "total_tokens": 3},
    }
    fake_provider.reply_chunks([f"data: {json.dumps(chunk)}\n\n".encode(), b"data: [DONE]\n\n"], hold=3.0)
    started = time.monotonic()
    reply = client.create(None, ASK, [], 10)
    assert time.monotonic() - started < 2.0
    assert reply["content"] == [{"type": "text", "text": "GOOD"}]
    assert reply["usage"] == {"input_tokens": 2, "output_tokens": 1}


@pytest.mark.parametrize("fmt", ["anthropic", "openai", "responses"])
def test_every_wire_streams_its_reply_and_its_error_event_on_the_pools_path(fake_provider, fmt):
    base = fake_provider.base_url if fmt == "anthropic" else fake_provider.openai_base_url
    client = ModelClient(
        Supply(
            name=None,
            format=fmt,
            base_url=base,
            model="m",
            key="k",
            key_header="x-api-key" if fmt == "anthropic" else "bearer",
        )
    )
    assert client._transport is not None
    fake_provider.reply_tool_use("lookup", {"q": "désk ✓"}, text="Looking — ✓", usage=(30, 9))
    reply = client.create(None, ASK, [{"name": "lookup", "input_schema": {"type": "object"}}], 100)
    assert [b["type"] for b in reply["content"]] == ["text", "tool_use"]
    assert reply["content"][0]["text"] == "Looking — ✓" and reply["content"][1]["input"] == {"q": "désk ✓"}
    assert reply["usage"]["input_tokens"] == 30 and reply["usage"]["output_tokens"] == 9
    fake_provider.reply_text("partial answer here", error_after=4)
    with pytest.raises(ProviderError, match="Overloaded"):
        client.create(None, ASK, [], 10)
