"""What a step changed in its sandbox is found by stat, then content: nothing missed, nothing invented."""

from __future__ import annotations

import os

import pytest

from foldrun.engine.sandbox import materialise


@pytest.fixture
def sandbox():
    box = materialise({"memory/facts.md": "alpha", "knowledge/page.md": "given", "state/ledger.md": "one\n"}, {})
    yield box
    box.cleanup()


def test_a_same_size_rewrite_made_at_once_is_kept(sandbox):
    (sandbox.root / "memory/facts.md").write_text("omega", encoding="utf-8")
    assert sandbox.changes() == ({"memory/facts.md": "omega"}, [])


def test_a_file_touched_but_not_changed_is_no_write(sandbox):
    os.utime(sandbox.root / "memory/facts.md")
    (sandbox.root / "state/ledger.md").write_text("one\n", encoding="utf-8")
    assert sandbox.changes() == ({}, [])


def test_new_and_deleted_files_are_writes_and_a_knowledge_change_is_refused(sandbox):
    (sandbox.root / "memory/new.md").write_text("fresh", encoding="utf-8")
    (sandbox.root / "state/ledger.md").unlink()
    os.chmod(sandbox.root / "knowledge", 0o755)
    os.chmod(sandbox.root / "knowledge/page.md", 0o644)
    (sandbox.root / "knowledge/page.md").write_text("taken", encoding="utf-8")
    assert sandbox.changes() == ({"memory/new.md": "fresh", "state/ledger.md": None}, ["knowledge/page.md"])


def test_a_lazy_sandbox_nothing_used_writes_nothing_and_leaves_nothing(tmp_path):
    box = materialise({"memory/facts.md": "alpha", "knowledge/page.md": "given"}, {}, base=str(tmp_path), lazy=True)
    assert not box.made and box.changes() == ({}, []) and box.outputs() == {}
    box.cleanup()
    assert not (tmp_path / "foldrun-sandboxes").exists()  # no folder was made for it


def test_a_lazy_sandbox_is_written_on_first_use_and_then_holds_as_an_eager_one(tmp_path):
    box = materialise({"memory/facts.md": "alpha", "knowledge/page.md": "given"}, {}, base=str(tmp_path), lazy=True)
    root = box.root
    assert box.made and (root / "memory/facts.md").read_text(encoding="utf-8") == "alpha"
    assert oct((root / "knowledge/page.md").stat().st_mode & 0o777) == oct(0o444)
    (root / "memory/facts.md").write_text("omega", encoding="utf-8")
    (root / "outputs/report.md").write_text("done", encoding="utf-8")
    assert box.changes() == ({"memory/facts.md": "omega"}, [])
    assert box.outputs() == {"outputs/report.md": b"done"}
    box.cleanup()
    assert not root.exists()
