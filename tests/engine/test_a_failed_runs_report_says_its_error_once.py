"""Issue 35 item 9: a failed run's sentence is said once in `foldrun report` (server or local record) — the
headline carries it; the run's error, the step's error and an earlier try's error that only repeat it are
left out. The step is named by its agent, never by the flow line's `[[writer]]`."""

from __future__ import annotations

from foldrun.engine.localrun import report_lines

WHY = "the provider answered HTTP 400: prompt is too long"


def failed_run(**changes) -> dict:
    step = {
        "step": 2,
        "agent": "writer",
        "status": "failed",
        "attempt": 2,
        "cost_usd": "0",
        "tokens_in": 0,
        "tokens_out": 0,
        "error": WHY,
        "tries": [{"n": 1, "status": "failed", "error": WHY}, {"n": 2, "status": "failed", "error": WHY}],
    }
    run = {
        "id": "run_1",
        "name": "weekly",
        "status": "failed",
        "headline": f"step 2 (writer) failed: {WHY}",
        "error": f"step 2 (writer) failed: {WHY}",
        "steps": [step],
    }
    return run | changes


def test_a_failed_runs_report_says_the_providers_sentence_once():
    text = "\n".join(report_lines(failed_run()))
    assert text.count(WHY) == 1
    assert "step 2 (writer) failed: " + WHY in text
    assert "[[" not in text
    assert "     try 1: failed" in text.splitlines()


def test_a_step_error_the_headline_does_not_carry_is_still_said():
    lines = report_lines(failed_run(headline="The weekly post could not be written", error=""))
    assert lines[1] == "The weekly post could not be written"
    assert f"     error: {WHY}" in lines
    assert "\n".join(lines).count(WHY) == 1
