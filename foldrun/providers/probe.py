"""`foldrun probe MODEL`: can this model drive an agent through this endpoint?

A real tool loop: the model is asked to call a tool, the tool's answer (a
word it cannot guess) goes back as a tool_result, and the model must say it.
The probe reports the stop reason the model ended on, how many requests it
took and what they cost. Used by the server (keys from the vault) and on a
laptop (`--local`, keys from the laptop vault).
"""

from __future__ import annotations

import secrets as pysecrets
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from foldrun.providers.client import ModelClient
from foldrun.providers.cost import response_cost

PROBE_TOOL = {
    "name": "get_code",
    "description": "Returns today's code word. Call it when asked for the code word.",
    "input_schema": {"type": "object", "properties": {"reason": {"type": "string", "description": "why you need it"}}},
}
PROBE_SYSTEM = (
    "You are checking that tools work. When asked for the code word, call the get_code tool, then "
    "reply with the code word it returned and nothing else."
)
MAX_REQUESTS = 4


@dataclass
class ProbeResult:
    model: str | None
    stop_reason: str | None = None
    requests: int = 0
    tool_called: bool = False
    read_back: bool = False
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal = Decimal("0")
    reply: str = ""
    lines: list[str] = field(default_factory=list)

    @property
    def closed(self) -> bool:
        return self.tool_called and self.read_back

    def as_dict(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "stop_reason": self.stop_reason,
            "requests": self.requests,
            "tool_called": self.tool_called,
            "read_back": self.read_back,
            "closed": self.closed,
            "usage": {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens},
            "cost": f"{self.cost:.4f}",
            "reply": self.reply[:500],
            "lines": list(self.lines),
        }


def _cost(response: dict, provider: dict) -> Decimal:
    return response_cost(response, provider)


def run_probe(client: ModelClient, *, provider: dict | None = None, max_tokens: int = 1024) -> ProbeResult:
    """Drive the loop. Refusals and provider errors propagate to the caller,
    which says why (the refusal line, or the error's sentence)."""
    code = "PROBE-" + pysecrets.token_hex(3).upper()
    result = ProbeResult(model=client.supply.model)
    messages: list[dict] = [{"role": "user", "content": "What is today's code word? Use the tool."}]
    while result.requests < MAX_REQUESTS:
        response = client.create(PROBE_SYSTEM, messages, [PROBE_TOOL], max_tokens)
        result.requests += 1
        result.stop_reason = response["stop_reason"]
        result.model = response.get("model") or result.model
        result.input_tokens += int(response["usage"].get("input_tokens") or 0)
        result.output_tokens += int(response["usage"].get("output_tokens") or 0)
        result.cost += _cost(response, provider or {"model": client.supply.model})
        calls = [b for b in response["content"] if b.get("type") == "tool_use"]
        text = "".join(b.get("text", "") for b in response["content"] if b.get("type") == "text")
        if response["stop_reason"] != "tool_use" or not calls:
            result.reply = text.strip()
            result.read_back = result.tool_called and code in text
            break
        result.tool_called = True
        messages.append({"role": "assistant", "content": response["content"]})
        messages.append(
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call["id"],
                        "content": code if call.get("name") == "get_code" else f"unknown tool {call.get('name')}",
                    }
                    for call in calls
                ],
            }
        )
    return result


STOP_MEANINGS = {
    "max_tokens": "the reply was cut off at the output limit — a run would stop the same way",
    "refusal": "the model refused — a run would stop the same way",
    "model_context_window_exceeded": "the context window is full — a run would stop the same way",
}


def format_probe(result: ProbeResult, *, endpoint: str) -> list[str]:
    """What the terminal prints. A healthy probe ends on end_turn."""
    lines = [
        f"model: {result.model} at {endpoint}",
        f"tool call made: {'yes' if result.tool_called else 'no'}; result read back: {'yes' if result.read_back else 'no'}",
        f"stop reason: {result.stop_reason}",
        f"requests: {result.requests}",
        f"cost: ${result.cost:.4f}",
    ]
    if result.stop_reason in STOP_MEANINGS:
        lines.append(STOP_MEANINGS[result.stop_reason])
    return lines
