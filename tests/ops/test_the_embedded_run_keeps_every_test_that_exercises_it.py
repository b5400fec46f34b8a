"""CI runs the whole suite on PostgreSQL + Redis and, on the embedded default, only the tests marked `embedded`
(FOLDRUN_TESTS=embedded ./scripts/test): every test that starts a worker, uses the broker, SQLite's locking, the
start command or a kill — and a browser's own tests (tests/web, tests/mcp, tests/browsing) only where they touch
the broker, SQLite, the start command or a kill. tests/conftest.py marks them without a hand on any file, and
fails a test that started a worker unmarked, so none drops out of the embedded run unseen. (Issue 30, item 6.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Files of each kind, and files the embedded run leaves to PostgreSQL + Redis.
EMBEDDED = {
    "tests/notify/test_e2e.py": "starts a worker and kills one",
    "tests/e2e/test_library_page.py": "a page in real Chromium on the live server",
    "tests/web/test_browse_pods.py": "a browser's own test that kills a pod's starter",
    "tests/runs/test_crash.py": "kills a worker mid-step",
    "tests/cli/test_readme_first_run.py": "the start command's steps",
    "tests/library/test_concurrency.py": "two writers at once (SQLite's locking)",
}
ELSEWHERE = [
    "tests/contract/test_agent_rules.py",
    "tests/accounts/test_basics.py",
    "tests/net/test_failures_read_as_sentences.py",  # threads, but only serving loopback stand-ins
    "tests/mcp/test_tasks_and_reports.py",
]  # a browser's own test: its worker is the one others drive


def pytest_in_a_process(*args: str, cwd: Path = ROOT, **env: str) -> subprocess.CompletedProcess:
    environment = dict(os.environ, DJANGO_SETTINGS_MODULE="foldrun.settings.test", PYTHONPATH=str(ROOT))
    environment.update(env)
    environment.pop("PYTEST_ADDOPTS", None)
    environment.pop("PYTEST_XDIST_WORKER", None)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
    )


def collected_files(output: str) -> set[str]:
    return {line.split("::")[0] for line in output.splitlines() if "::" in line}


def test_the_embedded_selection_takes_the_tests_that_exercise_the_embedded_default_and_leaves_the_rest(tmp_path):
    chosen = pytest_in_a_process(
        "--collect-only", "-q", "-m", "embedded", *EMBEDDED, *ELSEWHERE, FOLDRUN_DATA_DIR=str(tmp_path)
    )
    assert chosen.returncode == 0, chosen.stdout[-3000:] + chosen.stderr[-3000:]
    assert collected_files(chosen.stdout) == set(EMBEDDED)  # and so none of ELSEWHERE


HELPER = """
from tests.conftest import start_worker, stop_worker


def run_one(folder):
    stop_worker(start_worker(folder / "worker.log"))
"""

# The suite's own marking and guard, in a folder of their own.
CONFTEST = """
from tests.conftest import a_test_that_starts_a_worker_is_marked_embedded, pytest_collection_modifyitems  # noqa: F401
"""

# A test that starts a worker through a helper of its own: nothing in its file nor its fixtures says "worker".
HIDDEN = """
import helper


def test_hidden(transactional_db, tmp_path):
    helper.run_one(tmp_path)
"""


def test_a_test_that_starts_a_worker_unmarked_fails_saying_the_embedded_run_would_leave_it_out(tmp_path):
    folder = tmp_path / "suite"
    folder.mkdir()
    (folder / "conftest.py").write_text(CONFTEST)
    (folder / "helper.py").write_text(HELPER)
    (folder / "test_hidden.py").write_text(HIDDEN)
    done = pytest_in_a_process(
        "-q",
        "test_hidden.py",
        cwd=folder,
        FOLDRUN_DATA_DIR=str(tmp_path / "data"),
        PYTHONPATH=f"{ROOT}{os.pathsep}{folder}",
    )
    assert done.returncode == 1, done.stdout[-3000:] + done.stderr[-3000:]
    assert (
        "test_hidden.py::test_hidden started a Celery worker but is not marked `embedded`, so the embedded "
        "run (.ci/run) leaves it out"
    ) in done.stdout
