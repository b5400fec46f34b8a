"""`foldrun` is a console script of this repository, installed into its .venv by the bootstrap. (Issue 2, item 8.)"""

from __future__ import annotations

from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]


def test_the_cli_is_a_console_script_of_this_repository():
    assert 'foldrun = "foldrun.cli.main:main"' in (ROOT / "pyproject.toml").read_text()
    assert (ROOT / ".venv/bin/foldrun").exists()
