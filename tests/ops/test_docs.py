"""docs/: `mkdocs build --strict` succeeds, the CLI page is written from the parser (every command on it), the
API page from the OpenAPI schema, and operating.md names every environment variable foldrun reads."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from foldrun.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]


def _commands() -> list[str]:
    for action in build_parser()._actions:
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices)
    return []


def test_the_docs_build_strictly_with_the_cli_and_api_pages_written_from_the_code(tmp_path):
    site = tmp_path / "site"
    env = dict(
        os.environ,
        NO_MKDOCS_2_WARNING="1",
        FOLDRUN_DATA_DIR=str(tmp_path / "data"),
        DJANGO_SETTINGS_MODULE="foldrun.settings.dev",
    )
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cli = (site / "reference/cli/index.html").read_text()
    assert _commands() and all(f"foldrun {name}" in cli for name in _commands())
    api = (site / "reference/api/index.html").read_text()
    assert "/api/health" in api and "/api/workspaces/{ws}/runs" in api
    formats = (site / "formats/index.html").read_text()
    assert "flows/hello.md" in formats and "--8&lt;--" not in formats  # the init templates themselves


def test_operating_names_every_environment_variable_foldrun_reads():
    read: set[str] = set()
    for path in (ROOT / "foldrun").rglob("*.py"):
        read |= set(re.findall(r'env_(?:str|bool|int|list|url)\(\s*"([A-Z0-9_]+)"', path.read_text()))
        read |= set(re.findall(r'_env_int\(\s*"([A-Z0-9_]+)"', path.read_text()))
    operating = (ROOT / "docs/operating.md").read_text()
    assert len(read) > 25
    assert sorted(name for name in read if f"`{name}`" not in operating) == []
