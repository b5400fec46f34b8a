"""The result shapes and the argument check every tool stands on (no server needed)."""

from __future__ import annotations

import json

import pytest

from foldrun.mcp import registry
from foldrun.mcp.results import (
    RESULT_LIMIT_BYTES,
    ToolError,
    cut,
    cut_strings,
    embedded_blob,
    failure,
    image,
    media,
    ok,
    ok_json,
    reduce_if_large,
    size_bytes,
    to_call_result,
)

VIEWPORT_SCHEMA = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "minLength": 1, "maxLength": 2000},
        "mode": {"enum": ["auto", "full_auto"]},
        "viewport": {
            "type": "object",
            "properties": {"width": {"type": "integer", "minimum": 200, "maximum": 7680}},
            "additionalProperties": False,
        },
    },
    "required": ["goal"],
    "additionalProperties": False,
}


def _tool(name: str = "probe_tool") -> registry.McpTool:
    return registry.McpTool(name, "a tool for the test", VIEWPORT_SCHEMA, lambda call, args: ok("fine"))


def test_a_failure_reads_code_then_message_and_carries_the_error_object():
    result = to_call_result(failure("not_found", "No session sess_us_x in this account.", {"id": "sess_us_x"}))
    assert result.is_error is True
    assert result.content[0].text == "[not_found] No session sess_us_x in this account."
    assert result.structured_content == {
        "error": {
            "code": "not_found",
            "message": "No session sess_us_x in this account.",
            "details": {"id": "sess_us_x"},
        }
    }


def test_a_failure_without_details_has_no_details_key():
    assert failure("capacity_exceeded", "Every browser is busy.").structured == {
        "error": {"code": "capacity_exceeded", "message": "Every browser is busy."}
    }


def test_a_tool_error_keeps_its_code_message_and_details():
    error = ToolError(
        "invalid_input", "Send startUrl, not url.", {"issues": [{"path": "url", "message": "Use startUrl."}]}
    )
    assert (error.code, error.message, error.details["issues"][0]["path"]) == (
        "invalid_input",
        "Send startUrl, not url.",
        "url",
    )
    assert str(error) == "[invalid_input] Send startUrl, not url."


def test_a_long_string_is_cut_at_two_thousand_characters():
    assert cut("x" * 1999) == "x" * 1999
    assert cut("x" * 2000) == "x" * 2000
    long = cut("x" * 5000)
    assert len(long) == 2000 and long.endswith("…")


def test_strings_deep_in_a_result_are_cut_but_kept_keys_stay_whole():
    data = {"answer": "a" * 3000, "steps": [{"error": "e" * 2500}], "screenshot": "b" * 4000}
    out = cut_strings(data, keep=frozenset({"screenshot"}))
    assert len(out["answer"]) == 2000 and len(out["steps"][0]["error"]) == 2000
    assert out["screenshot"] == "b" * 4000


def test_a_long_failure_message_is_cut_too():
    assert len(failure("error", "m" * 9000).structured["error"]["message"]) == 2000


def test_a_result_over_100000_bytes_has_each_step_reduced_to_one_line():
    steps = [
        {
            "index": i,
            "path": f"{i}",
            "kind": "act",
            "label": f"step {i}",
            "ok": True,
            "ms": 5,
            "error": None,
            "detail": "d" * 400,
            "log": ["l" * 100] * 3,
        }
        for i in range(200)
    ]
    result = ok_json({"runId": "run_x", "result": {"steps": steps}})
    assert size_bytes(result) > RESULT_LIMIT_BYTES
    reduced = reduce_if_large(result)
    assert reduced.structured["result"]["steps"][7] == {
        "index": 7,
        "path": "7",
        "kind": "act",
        "label": "step 7",
        "ok": True,
        "ms": 5,
        "error": None,
    }
    assert reduced.structured["runId"] == "run_x"
    assert json.loads(reduced.content[0].text) == reduced.structured  # the JSON text follows the data
    assert size_bytes(reduced) < RESULT_LIMIT_BYTES


def test_a_result_under_the_limit_is_left_whole():
    steps = [{"index": 0, "label": "open", "detail": "kept"}]
    result = ok("Ran 1 step.", {"steps": steps})
    assert reduce_if_large(result) is result


def test_a_summary_text_is_not_rewritten_when_its_data_is_reduced():
    result = ok("Smoke test PASSED.", {"steps": [{"index": i, "detail": "d" * 1000} for i in range(150)]})
    reduced = reduce_if_large(result)
    assert reduced.content[0].text == "Smoke test PASSED."
    assert reduced.structured["steps"][0] == {"index": 0}


def test_an_image_result_has_no_structured_content():
    result = to_call_result(media(image(b"\x89PNG", "image/png")))
    assert result.structured_content is None and result.is_error is False
    assert result.content[0].type == "image" and result.content[0].mime_type == "image/png"
    assert result.content[0].data == "iVBORw=="


def test_an_embedded_pdf_is_a_resource_with_a_base64_blob():
    item = embedded_blob("webagent://quick/pdf", "application/pdf", b"%PDF-1.7")
    dumped = item.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert dumped["type"] == "resource"
    assert dumped["resource"] == {"uri": "webagent://quick/pdf", "mimeType": "application/pdf", "blob": "JVBERi0xLjc="}


def test_arguments_that_fit_the_schema_pass_through():
    assert registry.check_arguments(_tool(), {"goal": "find the price", "viewport": {"width": 800}}) == {
        "goal": "find the price",
        "viewport": {"width": 800},
    }


def test_missing_arguments_are_an_empty_object():
    tool = registry.McpTool("no_args", "d", {"type": "object", "properties": {}}, lambda c, a: ok("x"))
    assert registry.check_arguments(tool, None) == {}


def test_an_out_of_range_argument_is_invalid_input_naming_its_path():
    with pytest.raises(ToolError) as caught:
        registry.check_arguments(_tool(), {"goal": "g", "viewport": {"width": 50}})
    assert caught.value.code == "invalid_input"
    assert caught.value.details == {"issues": [{"path": "viewport.width", "message": "Must be at least 200."}]}
    assert caught.value.message == "The arguments of probe_tool are not valid: viewport.width: Must be at least 200."


def test_every_problem_is_an_issue_and_none_repeats_the_value_sent():
    secret = "hunter2-is-my-password"
    with pytest.raises(ToolError) as caught:
        registry.check_arguments(_tool(), {"url": "https://x", "mode": secret, "viewport": {"height": 3}})
    issues = caught.value.details["issues"]
    assert {"path": "goal", "message": "This argument is required."} in issues
    assert {"path": "url", "message": "This argument is not known to this tool."} in issues
    assert {"path": "viewport.height", "message": "This argument is not known to this tool."} in issues
    assert {"path": "mode", "message": "Must be one of: auto, full_auto."} in issues
    assert secret not in json.dumps(caught.value.details) and secret not in caught.value.message
    assert caught.value.message.endswith("(and 3 more)")


def test_arguments_that_are_not_an_object_are_invalid_input():
    with pytest.raises(ToolError) as caught:
        registry.check_arguments(_tool(), ["goal"])
    assert caught.value.code == "invalid_input" and caught.value.details["issues"][0]["message"] == "Must be an object."


def test_a_tool_name_registered_twice_is_refused(monkeypatch):
    monkeypatch.setattr(registry, "_FIXED", {})
    registry.register(_tool("twice"))
    with pytest.raises(ValueError, match="registered twice"):
        registry.register(_tool("twice"))


def test_a_dynamic_tool_never_shadows_a_fixed_one(monkeypatch):
    monkeypatch.setattr(registry, "_FIXED", {})
    monkeypatch.setattr(registry, "_DYNAMIC", [])
    fixed = registry.register(_tool("list_skills"))
    registry.register_dynamic(lambda call: [_tool("list_skills"), _tool("skill_smoke_uat")])
    tools = registry.tools_for(call=None)
    assert [t.name for t in tools] == ["list_skills", "skill_smoke_uat"] and tools[0] is fixed
    assert registry.find(None, "skill_smoke_uat").name == "skill_smoke_uat"
    assert registry.find(None, "skill_missing") is None


def test_a_tool_that_would_wait_past_the_specs_cap_is_refused_at_registration(monkeypatch):
    monkeypatch.setattr(registry, "_FIXED", {})
    slow = registry.McpTool("slow", "d", {"type": "object"}, lambda c, a: ok("x"), waits_seconds=121)
    with pytest.raises(ValueError, match="waits 121 s; the cap is 120 s"):
        registry.register(slow)
    assert registry.register(registry.McpTool("ok", "d", {"type": "object"}, lambda c, a: ok("x"), waits_seconds=120))


def test_a_dynamic_provider_that_fails_leaves_the_other_tools_listed(monkeypatch, caplog):
    monkeypatch.setattr(registry, "_FIXED", {})
    monkeypatch.setattr(registry, "_DYNAMIC", [])
    registry.register(_tool("list_skills"))

    def broken(call):
        raise RuntimeError("the skills table is gone")

    registry.register_dynamic(broken)
    registry.register_dynamic(lambda call: [_tool("skill_smoke_uat")])
    assert [t.name for t in registry.tools_for(None)] == ["list_skills", "skill_smoke_uat"]
    assert any("incident err_" in r.getMessage() and r.exc_info for r in caplog.records)
