"""Tables, progress and colour: for people on a terminal, silent in a pipe."""

from __future__ import annotations

import io
import json
import sys

from foldrun.cli import cmd_desk_history
from foldrun.cli.output import Output, table_lines


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_table_aligns_its_columns_and_leaves_the_last_unpadded():
    rows = [{"name": "rank-desk", "id": "ws_1", "note": "weekly"}, {"name": "x", "id": "ws_22", "note": None}]
    assert table_lines(rows, [("name", "NAME"), ("id", "ID"), ("note", "NOTE")]) == [
        "NAME       ID     NOTE",
        "rank-desk  ws_1   weekly",
        "x          ws_22  -",
    ]


def test_progress_appears_only_on_a_terminal():
    piped, terminal = io.StringIO(), Terminal()
    Output(stderr=piped).progress("Reading 1/2", force=True)
    shown = Output(stderr=terminal)
    shown.progress("Reading 1/2", force=True)
    shown.progress("Reading 2/2", force=True)
    shown.line("done")
    assert piped.getvalue() == ""
    assert terminal.getvalue() == "\r\x1b[2KReading 1/2\r\x1b[2KReading 2/2\r\x1b[2K"


def test_a_diff_is_coloured_only_on_a_terminal():
    class Ctx:
        def __init__(self, out):
            self.out = out

    lines = ["--- a/x.md", "+++ b/x.md", "@@ -1 +1 @@", "-old", "+new", " same"]
    plain = list(cmd_desk_history._colour_diff(Ctx(Output(stdout=io.StringIO())), lines))
    coloured = list(cmd_desk_history._colour_diff(Ctx(Output(stdout=Terminal())), lines))
    assert plain == lines
    assert coloured == [
        "\x1b[1m--- a/x.md\x1b[0m",
        "\x1b[1m+++ b/x.md\x1b[0m",
        "\x1b[36m@@ -1 +1 @@\x1b[0m",
        "\x1b[31m-old\x1b[0m",
        "\x1b[32m+new\x1b[0m",
        " same",
    ]


def test_a_push_on_a_terminal_shows_reading_then_uploading_on_one_line(cli, monkeypatch, canned_server, tmp_path):
    answer = {"revision": {"number": 4}, "changed": [{"path": "AGENTS.md", "action": "modified"}], "warnings": []}
    server = canned_server({"/api/workspaces/rank-desk/push": (201, "application/json", json.dumps(answer).encode())})
    (tmp_path / "AGENTS.md").write_text("---\n---\nHi.\n")
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    result = cli("push", tmp_path, "--to", "rank-desk")
    assert result.out.splitlines() == [
        "Pushed 1 file to rank-desk: revision 4.",
        "",
        "CHANGE    PATH",
        "modified  AGENTS.md",
    ]
    assert terminal.getvalue() == (
        "\r\x1b[2KReading files: 1/1 (12 B)"
        "\r\x1b[2KUploading 1 file (12 B) to rank-desk in one atomic request…"
        "\r\x1b[2K"
    )


def test_a_push_in_a_pipe_prints_no_progress(cli, monkeypatch, canned_server, tmp_path):
    answer = {"revision": {"number": 4}, "changed": [], "warnings": []}
    server = canned_server({"/api/workspaces/rank-desk/push": (201, "application/json", json.dumps(answer).encode())})
    (tmp_path / "AGENTS.md").write_text("---\n---\nHi.\n")
    monkeypatch.setenv("FOLDRUN_URL", server.url)
    monkeypatch.setenv("FOLDRUN_TOKEN", "frt_x")
    result = cli("push", tmp_path, "--to", "rank-desk")
    assert (result.code, result.err) == (0, "")
