"""On a terminal, `foldrun secrets set` asks with a hidden prompt: what is typed is not echoed."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time

from vault.local import LocalVault

TYPED = "typed-planted-2468"


def test_the_value_typed_at_the_prompt_is_not_echoed(tmp_path):
    master, slave = pty.openpty()
    env = {**os.environ, "FOLDRUN_HOME": str(tmp_path)}
    process = subprocess.Popen(
        [sys.executable, "-m", "foldrun.cli.main", "secrets", "set", "PTY_KEY", "--local"],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env=env,
        close_fds=True,
    )
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + 30
    while b"(hidden)" not in seen and time.monotonic() < deadline:
        seen += os.read(master, 1024)
    os.write(master, (TYPED + "\n").encode())
    process.wait(timeout=30)
    try:
        while True:
            chunk = os.read(master, 1024)
            if not chunk:
                break
            seen += chunk
    except OSError:  # the other end closed
        pass
    os.close(master)
    text = seen.decode(errors="replace")
    assert "Value for PTY_KEY (hidden): " in text
    assert "Set PTY_KEY in the laptop vault." in text
    assert TYPED not in text
    assert LocalVault(tmp_path).get("PTY_KEY") == TYPED
