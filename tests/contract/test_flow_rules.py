"""Flows: step lines, options and their values, frontmatter keys, named agents."""

from .support import lines

AGENTS = {"agents/writer.md": "---\ntools: [read]\n---\n", "agents/reader.md": "---\ntools: [read]\n---\n"}


def flow(body: str, front: str = "") -> dict[str, str]:
    return {**AGENTS, "flows/f.md": f"---\n{front}---\n{body}"}


def test_an_unknown_step_option_is_refused_with_the_options_that_work():
    assert lines(flow("1. [[writer]] — Write.\n   colour: blue\n")) == [
        "flows/f.md:4: error: step 1 ([[writer]]) has an option colour: that foldrun does not read; the options are each, max, verify, retry, on-fail, limits, wait and ask."
    ]


def test_a_misspelt_step_option_gets_the_closest_one():
    assert lines(flow("1. [[writer]] — Write.\n   verifi: file x\n")) == [
        "flows/f.md:4: error: step 1 ([[writer]]) has an option verifi: that foldrun does not read; the options are each, max, verify, retry, on-fail, limits, wait and ask; did you mean verify:?"
    ]


def test_bad_option_values_are_refused_one_sentence_each():
    body = (
        "1. [[writer]] — Write.\n   each: words\n   max: 0\n   retry: twice\n   on-fail: shrug\n"
        "2. [[reader]] — Read.\n   verify: exists out.txt\n   wait: signed-off\n   ask:\n   limits: web.search\n"
        "3. [[reader]] — Read.\n   verify: reply ([a-z\n"
    )
    assert lines(flow(body)) == [
        "flows/f.md:4: error: step 1 ([[writer]]) has each: words; it must be lines or json.",
        "flows/f.md:5: error: step 1 ([[writer]]) has max: 0; it must be a whole number, 1 or more.",
        "flows/f.md:6: error: step 1 ([[writer]]) has retry: twice; it must be a whole number, 0 or more.",
        "flows/f.md:7: error: step 1 ([[writer]]) has on-fail: shrug; it must be stop or continue.",
        "flows/f.md:9: error: step 2 ([[reader]]) has verify: exists out.txt; write verify: file <path>, verify: reply <regex> or verify: grows <path>.",
        "flows/f.md:10: error: step 2 ([[reader]]) has wait: signed-off; write wait: event <name>, the name in letters, digits, '-' and '_' (such as wait: event signed-off).",
        "flows/f.md:11: error: step 2 ([[reader]]) has ask: with no question; write ask: <the question for a person>.",
        "flows/f.md:12: error: step 2 ([[reader]]) has limits: that is not a mapping; write limits: {web.search: 10}.",
        "flows/f.md:14: error: step 3 ([[reader]]) has verify: reply with a regular expression that does not compile (unterminated character set at position 1).",
    ]


def test_an_event_name_with_a_slash_is_refused():
    assert lines(flow("1. [[writer]] — Write.\n   wait: event a/b\n")) == [
        "flows/f.md:4: error: step 1 ([[writer]]) has wait: event a/b; write wait: event <name>, the name in letters, digits, '-' and '_' (such as wait: event signed-off)."
    ]


def test_a_numbered_line_without_an_agent_is_not_a_step():
    assert lines(flow("1. [[writer]] — Write.\n2. Then read it.\n")) == [
        "flows/f.md:4: error: line 2. is not a step; write 2. [[agent]] — the task."
    ]


def test_a_step_numbered_out_of_order_is_a_warning():
    assert lines(flow("1. [[writer]] — Write.\n3. [[reader]] — Read.\n")) == [
        "flows/f.md:4: warning: step 2 ([[reader]]) is numbered 3; {{steps.N.output}} counts steps in order from 1, so this one is 2."
    ]


def test_a_flow_without_steps_is_refused():
    assert lines(flow("Nothing to do.\n")) == [
        "flows/f.md:3: error: has no steps; list them in the body as 1. [[agent]] — the task."
    ]


def test_an_agent_that_does_not_exist_is_named_with_the_closest_names():
    assert lines(flow("1. [[wrtier]] — Write.\n2. [[publisher]] — Publish.\n")) == [
        "flows/f.md:3: error: step 1 names [[wrtier]], which is not an agent in this workspace; did you mean [[writer]]?",
        "flows/f.md:4: error: step 2 names [[publisher]], which is not an agent in this workspace; add agents/publisher/agent.md or fix the name.",
    ]


def test_an_invalid_cron_schedule_is_refused_saying_why():
    assert lines(flow("1. [[writer]] — Write.\n", 'schedule: "0 7 * * MOX"\n')) == [
        'flows/f.md:2: error: schedule: "0 7 * * MOX" is not a cron expression (the day of week field \'MOX\' has a value outside 0-7); write five fields — minute, hour, day of month, month, day of week — such as "0 7 * * MON".'
    ]


def test_durations_and_frontmatter_values_are_checked():
    front = "timezone: Mars/Olympus\nsla: 2 hours\napprove_within: 3x\ndisable_after: 0\nbudget: lots\napprovers: {a: b}\ninputs: [topic]\nwebhook: yes\n"
    assert lines(flow("1. [[writer]] — Write.\n", front)) == [
        "flows/f.md:2: error: timezone: Mars/Olympus is not a time zone foldrun knows; use an IANA name such as Australia/Sydney.",
        "flows/f.md:3: error: sla: 2 hours is not a duration; write a whole number and a unit: 30m, 2h, 2d or 1w.",
        "flows/f.md:4: error: approve_within: 3x is not a duration; write a whole number and a unit: 30m, 2h, 2d or 1w.",
        "flows/f.md:5: error: disable_after: 0 must be a whole number, 1 or more (failed runs in a row before the flow stops firing).",
        "flows/f.md:6: error: budget: lots is not an amount; write the run's cap in USD, such as budget: 5.00.",
        "flows/f.md:7: error: approvers: must be a list of addresses, such as approvers: [owner@example.com].",
        "flows/f.md:8: error: inputs: must be a mapping of names to default values, such as inputs: {topic: building inspections}.",
        "flows/f.md:9: error: webhook: must be a mapping, such as webhook: {signature: hmac, secret: INBOUND_KEY}.",
    ]


def test_prose_and_continuation_lines_are_not_options():
    assert (
        lines(flow("Intro: the flow.\n\n1. [[writer]] — Write.\n   Note: be brief.\n   and kind.\n\nAfter: the end.\n"))
        == []
    )


def test_max_without_each_is_a_warning():
    assert lines(flow("1. [[writer]] — Write.\n   max: 5\n")) == [
        "flows/f.md:4: warning: step 1 ([[writer]]) has max: without each:; max: caps an each: fan-out, so add each: lines or each: json, or drop max:."
    ]


def test_a_verify_path_must_stay_inside_the_step():
    assert lines(
        flow(
            "1. [[writer]] — Write.\n   verify: grows ../ledger.csv\n2. [[reader]] — Read.\n   verify: file /etc/passwd\n"
        )
    ) == [
        "flows/f.md:4: error: step 1 ([[writer]]) has verify: grows ../ledger.csv; the path must stay inside the step's folder (no leading / and no ..).",
        "flows/f.md:6: error: step 2 ([[reader]]) has verify: file /etc/passwd; the path must stay inside the step's folder (no leading / and no ..).",
    ]


def test_a_step_reads_only_earlier_steps_outputs():
    body = (
        "1. [[writer]] — Start from {{steps.1.output}}.\n2. [[reader]] — Read {{steps.1.output}} and {{ steps.3.output }}.\n"
        "3. [[reader]] — Compare {{steps.2.output}} with {{steps.4.output}}.\n"
    )
    assert lines(flow(body)) == [
        "flows/f.md:3: error: step 1 ([[writer]]) reads {{steps.1.output}}, but the first step has no earlier step to read.",
        "flows/f.md:4: error: step 2 ([[reader]]) reads {{steps.3.output}}, which is not an earlier step; it can read the output of step 1.",
        "flows/f.md:5: error: step 3 ([[reader]]) reads {{steps.4.output}}, which is not an earlier step; it can read the output of steps 1 to 2.",
    ]
