"""Issue 35 item 2: the CLI answers at once — the parser and the commands that talk to a server import
neither Django nor Celery (nor the engine or the MCP SDK); only a command that works on this machine
loads the engine. How long it takes is the bench's to say (tests/bench/cli_bench.py), never a test's.

Each command runs as a fresh process, as a person runs it, and `-X importtime` lists every module it
imported.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = ("django", "celery", "kombu", "rest_framework", "mcp", "foldrun.engine", "foldrun.providers")


def imported_by(
    *argv: str, tmp_path, extra_env: dict[str, str] | None = None
) -> tuple[set[str], subprocess.CompletedProcess]:
    env = {**os.environ, "FOLDRUN_HOME": str(tmp_path / "home")}
    env.pop("FOLDRUN_URL", None)
    env.pop("FOLDRUN_TOKEN", None)
    env.update(extra_env or {})
    done = subprocess.run(
        [
            sys.executable,
            "-X",
            "importtime",
            "-c",
            "import sys; from foldrun.cli.main import main; sys.exit(main())",
            *argv,
        ],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    modules = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if line.startswith("import time:")}
    return modules, done


def heavy_in(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_the_walk_sees_a_heavy_import_when_there_is_one(tmp_path):
    # The same listing, for a command that runs the engine here: it must show the engine, or the checks
    # below could pass by reading nothing.
    (tmp_path / "desk").mkdir()
    modules, _ = imported_by("run", "hello", "--local", "--path", str(tmp_path / "desk"), tmp_path=tmp_path)
    assert {"foldrun.engine", "foldrun.engine.step"} <= modules


@pytest.mark.parametrize("argv", [("--version",), ("--help",), ("runs", "--help")])
def test_version_and_help_import_neither_django_nor_celery(argv, tmp_path):
    modules, done = imported_by(*argv, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "foldrun.cli.main" in modules
    assert heavy_in(modules) == []
    # Nor YAML and the file contract, nor httpx: nothing here reads a desk or talks to a server.
    assert {"foldrun.contract", "yaml", "httpx"} & modules == set()


def test_version_says_the_version(tmp_path):
    _, done = imported_by("--version", tmp_path=tmp_path)
    assert done.stdout.startswith("foldrun 0.")


def test_a_command_that_talks_to_a_server_imports_httpx_but_neither_django_nor_celery(tmp_path):
    # Nothing listens on port 9 of this machine: the command fails with its sentence, after its imports.
    modules, done = imported_by(
        "runs",
        "--to",
        "my-desk",
        tmp_path=tmp_path,
        extra_env={"FOLDRUN_URL": "http://127.0.0.1:9", "FOLDRUN_TOKEN": "fr_test"},
    )
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1].startswith("Could not reach http://127.0.0.1:9")
    assert "httpx" in modules
    assert heavy_in(modules) == []


def test_check_of_a_desk_imports_the_contract_but_neither_django_nor_celery(tmp_path):
    _, made = imported_by("init", "desk", tmp_path=tmp_path)
    assert made.returncode == 0, made.stderr[-2000:]
    modules, done = imported_by("check", "desk", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "foldrun.contract" in modules
    assert [m for m in heavy_in(modules) if m.split(".")[0] in {"django", "celery", "kombu", "mcp"}] == []


def test_version_answers_before_any_command_is_loaded_and_says_what_the_parser_says(cli, tmp_path):
    modules, done = imported_by("--version", tmp_path=tmp_path)
    assert not any(m.startswith("foldrun.cli.cmd_") for m in modules)
    assert cli("--version").out == done.stdout == cli("--json", "--version").out
