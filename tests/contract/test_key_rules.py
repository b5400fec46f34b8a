"""A near miss of a key foldrun reads is a warning; other keys are left alone."""

from .support import lines


def test_a_near_miss_of_a_known_key_is_a_warning_with_the_key_meant():
    files = {
        "agents/a.md": "---\ntool: [read]\nmcpservers: {}\nfavourite_colour: blue\n---\n",
        "flows/f.md": "---\nschedual: '0 7 * * MON'\ndisable-after: 3\n---\n1. [[a]] — go\n",
        "tools/t.md": "---\ntransport: http\nbase: https://x.example\nmethod: [GET]\n---\n",
    }
    assert lines(files, code="keys.near_miss") == [
        "agents/a.md:2: warning: tool: is not a key foldrun reads in an agent; did you mean tools:?",
        "agents/a.md:3: warning: mcpservers: is not a key foldrun reads in an agent; did you mean mcpServers:?",
        "flows/f.md:2: warning: schedual: is not a key foldrun reads in a flow; did you mean schedule:?",
        "flows/f.md:3: warning: disable-after: is not a key foldrun reads in a flow; did you mean disable_after:?",
        "tools/t.md:4: warning: method: is not a key foldrun reads in a tool; did you mean methods:?",
    ]


def test_a_near_miss_beside_the_real_key_is_left_alone():
    assert lines({"agents/a.md": "---\ntools: [read]\ntool_notes: fine\n---\n"}, code="keys.near_miss") == []
