"""The README gives exactly two commands — one installs and starts everything on the embedded default and
prints the URL and the demo sign-in, one runs the whole suite — and `.ci/run` runs that suite on the
embedded default (the tests marked `embedded`, issue 30 item 6) and again, whole, on PostgreSQL and Redis.
(Issue 2, item 8.)"""

from __future__ import annotations

import os
import re
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]


def shell_blocks(markdown: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```(?:sh|bash|shell)?\n(.*?)```", markdown, flags=re.S)]


def test_the_readme_gives_exactly_two_commands_start_and_test():
    readme = (ROOT / "README.md").read_text()
    fresh_machine = readme.split("\n## Two commands\n", 1)[1].split("\n## ", 1)[0]
    blocks = shell_blocks(fresh_machine)
    assert blocks == ["./scripts/start", "./scripts/test"]
    assert all(os.access(ROOT / b.removeprefix("./"), os.X_OK) for b in blocks)


def test_start_installs_migrates_seeds_the_demo_starts_web_worker_and_beat_and_prints_the_sign_in():
    start = (ROOT / "scripts/start").read_text()
    for step in [
        "./scripts/bootstrap",
        "manage.py migrate",
        "manage.py seed_demo",
        "celery -A foldrun worker",
        "celery -A foldrun beat",
        "manage.py collectstatic",
        "gunicorn foldrun.asgi:application",
        "uvicorn_worker.UvicornWorker",
        "sign in as demo@foldrun.dev",
    ]:
        assert step in start, step
    assert "CELERY_BROKER_URL" not in start  # the embedded default: the filesystem broker


def test_the_test_command_runs_every_test_with_pytest():
    text = (ROOT / "scripts/test").read_text()
    assert "./scripts/bootstrap" in text
    # the whole suite, in parallel processes, with the caller's arguments last (so `-n 0` runs it in one)
    assert re.search(r"python -m pytest -n \S+ --dist loadfile \"\$@\"", text)


def test_ci_runs_the_readmes_test_command_then_again_on_postgresql_and_redis():
    lines = [
        line.strip()
        for line in (ROOT / ".ci/run").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert os.access(ROOT / ".ci/run", os.X_OK)
    # each pass notes its failure and CI goes on to the next, failing at the end if any did
    runs = [i for i, line in enumerate(lines) if re.search(r"\./scripts/test \|\| failed\+=\(", line)]
    assert len(runs) == 2
    first, second = lines[runs[0]], " ".join(lines[runs[0] + 1 : runs[1] + 1])
    assert first.startswith(
        "FOLDRUN_TESTS=embedded ./scripts/test ||"
    )  # the embedded default: the tests that exercise it
    assert lines[-3:] == ["if (( ${#failed[@]} )); then", 'echo "=== failed: ${failed[*]} ===" >&2', "exit 1"] or lines[
        -4:-1
    ] == ["if (( ${#failed[@]} )); then", 'echo "=== failed: ${failed[*]} ===" >&2', "exit 1"]
    assert "FOLDRUN_TESTS" not in second  # PostgreSQL and Redis: the whole suite
    assert re.search(r'DATABASE_URL="?postgres(ql)?://[^ ]*@127\.0\.0\.1', second)
    assert re.search(r'CELERY_BROKER_URL="?redis://127\.0\.0\.1', second)
    assert any(line.startswith("./scripts/smoke-start ") for line in lines)


def test_ci_lints_and_checks_the_format_before_any_test_runs():
    lines = [line.strip() for line in (ROOT / ".ci/run").read_text().splitlines() if not line.startswith("#")]
    first_test = next(i for i, line in enumerate(lines) if "./scripts/test" in line)
    assert lines.index(".venv/bin/ruff check --quiet .") < first_test
    assert lines.index(".venv/bin/ruff format --check --quiet .") < first_test
