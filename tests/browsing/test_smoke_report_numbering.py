"""How a smoke test's report numbers its steps: from 1 in the text and the HTML report, a step inside a loop as
its loop's number and its own (`Step 3.2`), and `index` from 0 over every step in structuredContent."""

from __future__ import annotations

from browsing.models import BrowserSession, SkillRun
from browsing.reports import report_text, smoke_report, with_links


def ended_smoke(account, links: list[dict]) -> SkillRun:
    session = BrowserSession.objects.create(account=account, status="closed")
    return SkillRun.objects.create(
        account=account,
        session=session,
        skill="smoke-uat",
        status="failed",
        inputs={"url": "https://shop.example/", "expectText": "Pricing"},
        state={
            "load": {"ok": True, "ms": 310},
            "a11y": {"ok": True, "ran": True, "ms": 90},
            "links": links,
            "final": {"checks": {"expectText": {"ok": True, "error": None}}, "finalUrl": "https://shop.example/"},
        },
    )


def link(url: str, status: int) -> dict:
    ok = status < 400
    return {"url": url, "ok": ok, "status": status, "ms": 12, "error": None if ok else f"{url} answered HTTP {status}"}


def test_the_start_pages_links_are_a_loop_numbered_3_1_3_2_and_index_counts_every_step_from_0(account):
    run = ended_smoke(account, [link("https://shop.example/pricing", 200), link("https://shop.example/old", 404)])
    report = smoke_report(run, run.state, [], run.session)
    numbered = [(s["index"], s["path"], s["kind"]) for s in report["steps"]]
    assert numbered[:5] == [
        (0, "1", "load"),
        (1, "2", "a11y"),
        (2, "3", "links"),
        (3, "3.1", "link"),
        (4, "3.2", "link"),
    ]
    assert numbered[5] == (5, "4", "console")  # the loop ends; the next step is the loop's number and one
    assert [s["index"] for s in report["steps"]] == list(range(len(report["steps"])))


def test_the_text_names_the_failed_step_inside_the_loop_not_the_loop(account):
    run = ended_smoke(account, [link("https://shop.example/pricing", 200), link("https://shop.example/old", 404)])
    report = with_links(smoke_report(run, run.state, [], run.session), account.public_id)
    text = report_text(report).splitlines()
    assert report["verdict"] == "fail"
    assert (
        "Step 3.2 (check link https://shop.example/old) failed: https://shop.example/old answered HTTP 404." in text[0]
    )
    assert text[1] == "Failed steps:"
    assert "- Step 3 (check the start page's links): 1 of 2 links are broken" in text
    assert "- Step 8 (check every link worked): 1 of 2 links are broken" in text
    assert "- Step 3.2 (check link https://shop.example/old): https://shop.example/old answered HTTP 404" in text


def test_a_page_with_no_links_to_check_has_no_loop_and_numbers_straight_on(account):
    run = ended_smoke(account, [])
    report = smoke_report(run, run.state, [], run.session)
    assert [s["path"] for s in report["steps"]][:4] == ["1", "2", "3", "4"]
    assert report["steps"][2]["kind"] == "links" and report["steps"][2]["status"] == "skipped"
    assert (report["steps"][-1]["label"], report["steps"][-1]["status"]) == ("check every link worked", "skipped")


def test_the_link_verdict_is_the_last_step_after_the_console_and_the_expectations(account):
    run = ended_smoke(account, [link("https://shop.example/pricing", 200), link("https://shop.example/old", 404)])
    report = smoke_report(run, run.state, [], run.session)
    order = [(s["path"], s["kind"], s.get("condition")) for s in report["steps"]]
    # The spec's order: load, accessibility, the start page's links, the steps, the console, expectText,
    # expectUrl, expectNoText, and last whether every link worked (strictLinks).
    assert order == [
        ("1", "load", None),
        ("2", "a11y", None),
        ("3", "links", None),
        ("3.1", "link", None),
        ("3.2", "link", None),
        ("4", "console", None),
        ("5", "assert", "expectText"),
        ("6", "assert", "expectUrl"),
        ("7", "assert", "expectNoText"),
        ("8", "linkverdict", None),
    ]
    last = report["steps"][-1]
    assert (last["label"], last["status"], last["error"]) == (
        "check every link worked",
        "failed",
        "1 of 2 links are broken",
    )


def test_with_strict_links_false_the_last_step_passes_and_the_broken_link_is_a_finding(account):
    run = ended_smoke(account, [link("https://shop.example/pricing", 200), link("https://shop.example/old", 404)])
    run.inputs = {**run.inputs, "strictLinks": False}
    report = smoke_report(run, run.state, [], run.session)
    assert report["verdict"] == "pass"
    assert (report["steps"][-1]["label"], report["steps"][-1]["status"]) == ("check every link worked", "passed")
    assert "1 broken link found; strictLinks is false, so they do not fail the test." in report["notes"]
