"""A browser pod's server has a bounded time to say where it listens: one that prints nothing, or half a line, is
a failed start within the deadline — stopped, with the pool's failed-start sentence — not a caller held forever.
The "servers" are small real programs; the deadline is the start's own `within`, kept short here."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from foldrun.web import WebToolError
from foldrun.web.browse.podstart import serve


def _program(tmp_path: Path, body: str) -> list[str]:
    """A "server" that writes its pid to a file first (so the test can see it gone), then does `body`."""
    script = tmp_path / "server.py"
    script.write_text(f"import os, sys, time\nopen(sys.argv[1], 'w').write(str(os.getpid()))\n{body}\n")
    return [sys.executable, str(script), str(tmp_path / "pid")]


def _gone(tmp_path: Path) -> bool:
    try:
        os.kill(int((tmp_path / "pid").read_text()), 0)
    except ProcessLookupError:
        return True
    return False


def test_a_server_that_never_prints_is_a_failed_start_at_the_deadline_and_is_killed(tmp_path):
    started = time.monotonic()
    with pytest.raises(WebToolError) as caught:
        serve(_program(tmp_path, "time.sleep(120)"), env=dict(os.environ), within=0.5)
    assert time.monotonic() - started < 5
    assert str(caught.value) == "browse: the browser pod did not start (its server gave no address within 0.5 s)"
    assert _gone(tmp_path)


def test_a_server_that_prints_half_a_line_and_hangs_is_a_failed_start_quoting_it(tmp_path):
    body = "sys.stdout.write('Starting the server'); sys.stdout.flush(); time.sleep(120)"
    with pytest.raises(WebToolError) as caught:
        serve(_program(tmp_path, body), env=dict(os.environ), within=0.5)
    assert str(caught.value) == (
        "browse: the browser pod did not start (its server gave no address within 0.5 s; "
        'it last said "Starting the server")'
    )
    assert _gone(tmp_path)


def test_a_server_that_exits_first_is_a_failed_start_quoting_its_last_line(tmp_path):
    body = "print('Error: the port is taken'); sys.exit(1)"
    with pytest.raises(WebToolError) as caught:
        serve(_program(tmp_path, body), env=dict(os.environ), within=10)
    assert str(caught.value) == (
        "browse: the browser pod did not start (its server stopped before it gave an "
        'address; it last said "Error: the port is taken")'
    )


def test_a_server_that_says_where_it_listens_after_other_lines_is_started_at_that_address(tmp_path):
    body = (
        "print('Version 1.63.0', flush=True); time.sleep(0.2); "
        "print('Listening on ws://127.0.0.1:45678/token', flush=True); time.sleep(120)"
    )
    process, ws = serve(_program(tmp_path, body), env=dict(os.environ), within=10)
    try:
        assert ws == "ws://127.0.0.1:45678/token"
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()
        process.stdout.close()
