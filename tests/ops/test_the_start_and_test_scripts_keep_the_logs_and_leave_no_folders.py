"""What the start and test scripts leave behind: `./scripts/start` on a port another program holds says so in
one line, with a free port to set instead, and starts nothing; `./scripts/test` removes the data folder it
made for itself — and only that one. (That start appends to var/log/worker.log rather than truncating it is
proven by scripts/smoke-start, which starts the whole thing: CI runs it.)"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_start_on_a_taken_port_says_so_once_and_starts_nothing(tmp_path):
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        env = dict(os.environ, PORT=str(port), FOLDRUN_DATA_DIR=str(tmp_path / "data"))
        done = subprocess.run(["./scripts/start"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (1, "")
    said = done.stderr.splitlines()
    assert len(said) == 1, done.stderr
    match = re.fullmatch(rf"port {port} is taken — set PORT=(\d+) \(free now\): PORT=(\d+) \./scripts/start", said[0])
    assert match and match.group(1) == match.group(2) and int(match.group(1)) > port, said
    assert not (tmp_path / "data" / "start.pid").exists()  # nothing started: no bootstrap, no migrate, no worker


def test_the_readme_names_port():
    readme = (ROOT / "README.md").read_text()
    assert "| `PORT` | `8000` |" in readme


def _run_scripts_test(tmp_path: Path, data_dir: str | None) -> str:
    """./scripts/test on one small test file that writes down the data folder it was given."""
    seen = tmp_path / "seen.txt"
    probe = tmp_path / "test_probe.py"
    probe.write_text(
        textwrap.dedent(f"""
        import os
        from pathlib import Path

        def test_writes_down_its_data_folder():
            folder = Path(os.environ["FOLDRUN_DATA_DIR"])
            assert folder.is_dir()
            Path({str(seen)!r}).write_text(str(folder))
    """)
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in ("FOLDRUN_DATA_DIR", "PYTEST_XDIST_WORKER", "PYTEST_ADDOPTS", "PYTEST_CURRENT_TEST", "FOLDRUN_TESTS")
    }
    if data_dir is not None:
        env["FOLDRUN_DATA_DIR"] = data_dir
    done = subprocess.run(
        [
            "./scripts/test",
            "-n",
            "0",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-c",
            os.devnull,
            str(probe),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    return seen.read_text()


def test_scripts_test_removes_the_temporary_data_folder_it_made(tmp_path):
    made = _run_scripts_test(tmp_path, None)
    assert re.fullmatch(r"/tmp/foldrun-test\.\w{6}", made)
    assert not Path(made).exists()


def test_scripts_test_leaves_a_data_folder_it_was_given(tmp_path):
    given = tmp_path / "given"
    given.mkdir()
    (given / "kept.txt").write_text("mine")
    assert _run_scripts_test(tmp_path, str(given)) == str(given)
    assert (given / "kept.txt").read_text() == "mine"
