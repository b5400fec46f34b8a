"""Every desk file the documentation shows is checked the way `foldrun check` checks a folder, so the docs
cannot drift from what the contract accepts.

A page marks a whole-file example with an HTML comment on the line before its fence (invisible on GitHub and
in the built site):

    <!-- desk: my-desk/flows/morning-brief.md -->   one file of the desk `my-desk` on this page
    <!-- init: flows/hello.md -->                   byte for byte what `foldrun init my-desk` writes

Every desk starts as `foldrun init NAME` writes it (so an example may name the `assistant` agent and lean on
the provider block); the files of one desk on one page are then written over it in order; when a later block shows a path again (the
tutorial grows a file), the desk as it stood is checked first, then the file replaced, and the last state is
checked too. A check finds nothing at all — no error and no warning."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from foldrun.cli.cmd_desk import scaffold_files
from foldrun.cli.desk_folder import local_desk
from foldrun.contract import check

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
WRITING = DOCS / "writing"
MARKED = re.compile(
    r"^<!-- (?P<kind>desk|init): (?P<where>\S+) -->\n(?P<fence>`{3,}|~{3,})[^\n]*\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.M | re.S,
)
FENCE = re.compile(r"^(?P<fence>`{3,}|~{3,})(?P<lang>[^\n`]*)\n.*?^(?P=fence)[ \t]*$", re.M | re.S)


def _pages() -> list[Path]:
    return sorted(DOCS.rglob("*.md"))


def _desks(page: Path) -> dict[str, list[tuple[str, str]]]:
    desks: dict[str, list[tuple[str, str]]] = {}
    for match in MARKED.finditer(page.read_text()):
        if match.group("kind") == "desk":
            desk, _, path = match.group("where").partition("/")
            desks.setdefault(desk, []).append((path, match.group("body")))
    return desks


def _problems(folder: Path) -> list[str]:
    return [finding.format() for finding in check(local_desk(folder), mode="check")]


def _cases() -> list:
    return [
        pytest.param(page, desk, files, id=f"{page.relative_to(DOCS)}:{desk}")
        for page in _pages()
        for desk, files in _desks(page).items()
    ]


@pytest.mark.parametrize(("page", "desk", "files"), _cases())
def test_each_desk_a_page_shows_checks_with_no_problem_at_every_stage(page, desk, files, tmp_path):
    folder = tmp_path / desk
    for path, body in scaffold_files(desk).items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_text(body, encoding="utf-8")
    written: set[str] = set()
    for path, body in files:
        if path in written:
            assert _problems(folder) == [], f"{page.name}: {desk} before {path} is shown again"
        target = folder / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
        written.add(path)
    assert _problems(folder) == [], f"{page.name}: {desk} as the page leaves it"


def test_the_pages_that_teach_the_file_kinds_mark_every_file_they_show():
    """A markdown or YAML block on a writing page is a desk file and carries its mark, so none goes unchecked."""
    unmarked = []
    for page in sorted(WRITING.glob("*.md")):
        text = page.read_text()
        marked = {m.start("fence") for m in MARKED.finditer(text)}
        for block in FENCE.finditer(text):
            if block.group("lang").strip() in ("markdown", "md", "yaml") and block.start() not in marked:
                unmarked.append(f"{page.name} line {text.count(chr(10), 0, block.start()) + 1}")
    assert unmarked == []
    shown = {page.name: sum(len(files) for files in _desks(page).values()) for page in WRITING.glob("*.md")}
    assert set(shown) >= {"first-desk.md", "agents.md", "flows.md", "tools.md", "skills.md", "knowledge.md"}
    assert all(count >= 2 for count in shown.values()), shown


def test_the_file_formats_page_shows_what_init_writes_byte_for_byte():
    text = (DOCS / "formats.md").read_text()
    shown = {m.group("where"): m.group("body") for m in MARKED.finditer(text) if m.group("kind") == "init"}
    assert "--8<--" not in text  # GitHub shows a snippet marker as it is, not the file
    assert shown == scaffold_files("my-desk")
