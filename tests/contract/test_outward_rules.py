"""spec/tools.md: an outward tool in a flow step needs verify: or a gate."""

from .support import AGENT_WRITER, EMAIL_TOOL, SEND_PY, lines

DESK = {"agents/writer.md": AGENT_WRITER, "tools/email/tool.md": EMAIL_TOOL, "tools/email/send.py": SEND_PY}
UNGUARDED = "flows/f.md:4: {level}: step 2 ([[writer]]) grants the outward tool email but has neither verify: nor a gate; add verify: file <path>, verify: reply <regex> or verify: grows <path>, put ! after [[writer]], or add ask: <question>."


def flow(step_two: str) -> dict[str, str]:
    return {
        **DESK,
        "agents/reader.md": "---\ntools: [read]\n---\n",
        "flows/f.md": f"---\n---\n1. [[reader]] — Read.\n{step_two}",
    }


def test_check_fails_an_outward_step_with_neither_verify_nor_a_gate_naming_the_step():
    assert lines(flow("2. [[writer]] — Send it.\n")) == [UNGUARDED.format(level="error")]


def test_deploy_only_warns_naming_the_step():
    assert lines(flow("2. [[writer]] — Send it.\n"), mode="deploy") == [UNGUARDED.format(level="warning")]


def test_a_verify_a_bang_gate_or_an_ask_each_satisfy_it():
    assert lines(flow("2. [[writer]] — Send it.\n   verify: file outputs/receipt.json\n")) == []
    assert lines(flow("2. [[writer]] ! — Send it.\n")) == []
    assert lines(flow("2. [[writer]] — Send it.\n   ask: May I send it?\n")) == []
    assert lines(flow("2. [[writer]] — Send it.\n   verify: reply ^SENT\n")) == []


def test_an_outward_tool_from_the_library_counts_too():
    files = {
        "agents/writer.md": AGENT_WRITER,
        "agents/reader.md": "---\ntools: [read]\n---\n",
        "flows/f.md": "---\n---\n1. [[reader]] — Read.\n2. [[writer]] — Send it.\n",
    }
    assert lines(files, library={"tools/email/tool.md": EMAIL_TOOL, "tools/email/send.py": SEND_PY}) == [
        UNGUARDED.format(level="error")
    ]
