"""Files the contract cannot read, bytes where text belongs, size limits."""

from foldrun.contract import check_files, check_payload
from foldrun.contract.payload import MAX_FILE_BYTES
from foldrun.contract.paths import BINARY_MARKER

from .support import lines


def test_malformed_yaml_names_the_file_the_line_and_the_parsers_words():
    assert lines({"agents/a.md": "---\nname: a\ntools: [read\n---\n"}, code="yaml.malformed") == [
        "agents/a.md:3: error: the YAML frontmatter is malformed: while parsing a flow sequence, did not find expected ',' or ']'."
    ]


def test_a_mapping_indented_wrongly_is_reported_at_its_line():
    assert lines({"tools/t.md": "---\nname: t\n  base: x\nrun: y\n---\n"}, code="yaml.malformed") == [
        "tools/t.md:3: error: the YAML frontmatter is malformed: mapping values are not allowed in this context."
    ]


def test_a_file_without_frontmatter_is_refused():
    assert lines({"agents/a/agent.md": "Just a prompt.\n"}, code="frontmatter.missing") == [
        "agents/a/agent.md:1: error: has no frontmatter; it must start with a line of three dashes (---)."
    ]


def test_frontmatter_that_is_never_closed_is_refused():
    assert lines({"flows/f.md": "---\nname: f\n1. [[a]] — x\n"}, code="frontmatter.unclosed") == [
        "flows/f.md:1: error: frontmatter is never closed; add a line of three dashes (---) after it."
    ]


def test_agents_md_may_have_no_frontmatter():
    assert lines({"AGENTS.md": "Be precise.\n"}) == []


def test_bytes_where_markdown_or_a_program_belongs_are_refused():
    assert lines(
        {"tools/t/run.py": BINARY_MARKER, "agents/a.md": BINARY_MARKER, "storage/photo.png": BINARY_MARKER},
        code="file.binary",
    ) == [
        "agents/a.md: error: is not UTF-8 text; a markdown file or a program must be text — keep other bytes in storage/.",
        "tools/t/run.py: error: is not UTF-8 text; a markdown file or a program must be text — keep other bytes in storage/.",
    ]


def test_a_file_over_the_size_limit_is_refused():
    assert lines(
        {"knowledge/big.md": "---\ntype: T\ntitle: t\ndescription: d\n---\n" + "x" * MAX_FILE_BYTES},
        code="file.too_large",
    ) == ["knowledge/big.md: error: is 5.0 MB; a file may be at most 5.0 MB."]


def test_check_payload_refuses_a_file_over_the_limit_given():
    assert (
        check_payload("storage/a.bin", b"x" * 2048, 1024).format()
        == "storage/a.bin: error: is 2 KB; a file may be at most 1 KB."
    )


def test_check_payload_refuses_bytes_in_a_program_and_allows_them_in_storage():
    assert check_payload("tools/t/run.py", b"\xff\xfe", 1024).format() == (
        "tools/t/run.py: error: is not UTF-8 text; a markdown file or a program must be text — keep other bytes in storage/."
    )
    assert check_payload("storage/a.bin", b"\xff\xfe", 1024) is None
    assert check_payload("agents/a.md", "---\n---\né".encode(), 1024) is None


def test_check_files_reports_a_binary_program_once():
    found = check_files({"tools/t/run.py": b"\x00\xff"})
    assert [f.code for f in found] == ["file.binary"]
