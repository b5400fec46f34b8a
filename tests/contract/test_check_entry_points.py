"""The CLI (check_folder) and the server (check_files) print the same lines."""

from foldrun.contract import Finding, check_files, check_folder, format_findings
from foldrun.contract.check import rule_names


def _write(root, files: dict[str, bytes]) -> None:
    for path, data in files.items():
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


FILES = {
    "agents/writer.md": b"---\ntools: [raed]\n---\n",
    "flows/f.md": b"---\n---\n1. [[writer]] \xe2\x80\x94 Write.\n   colour: blue\n",
    "tools/t/run.py": b"\xff\xfe\x00",
    "storage/photo.png": b"\x89PNG\x00\xff",
}


def test_a_folder_on_a_laptop_and_the_same_files_pushed_give_identical_findings(tmp_path):
    _write(tmp_path, {**FILES, ".git/config": b"x", "node_modules/a/index.js": b"\xff"})
    assert check_folder(tmp_path) == check_files(FILES)
    assert [f.code for f in check_files(FILES)] == ["agents.tool_missing", "flow.option_unknown", "file.binary"]


def test_findings_print_one_line_each_and_a_count():
    findings = [
        Finding("a.md", 3, "error", "is wrong.", "x"),
        Finding("b.md", None, "warning", "is odd.", "y"),
        Finding("c.md", 1, "warning", "too.", "z"),
    ]
    assert (
        format_findings(findings)
        == "a.md:3: error: is wrong.\nb.md: warning: is odd.\nc.md:1: warning: too.\n1 error, 2 warnings."
    )


def test_no_findings_print_as_one_sentence():
    assert format_findings([]) == "no problems found."


def test_every_rule_has_a_topic_and_a_name():
    names = rule_names()
    assert {
        "files.unreadable",
        "names.duplicate",
        "flows.agents",
        "outward.unguarded",
        "limits.keys",
        "secrets.pasted",
        "imports.undeclared",
        "knowledge.concepts",
    } <= set(names)
    assert len(names) == len(set(names))


def test_a_file_over_the_limit_given_is_not_read_any_further():
    found = check_files({"agents/a.md": b"---\n---\n" + b"sk-ant-" + b"a1" * 40}, max_bytes=16)
    assert [f.format() for f in found] == ["agents/a.md: error: is 95 bytes; a file may be at most 16 bytes."]


def test_a_desk_read_from_a_folder_skips_what_is_never_pushed(tmp_path):
    from foldrun.contract import Desk
    from foldrun.contract.paths import BINARY_MARKER

    _write(
        tmp_path,
        {
            "agents/a.md": b"---\n---\n",
            "node_modules/x/i.js": b"1",
            ".git/HEAD": b"x",
            ".DS_Store": b"x",
            "tools/t/r.py": b"a\x00b",
        },
    )
    assert Desk.from_folder(tmp_path).files == {"agents/a.md": "---\n---\n", "tools/t/r.py": BINARY_MARKER}


def test_the_platform_context_is_each_browsers_major_from_api_versions_answer():
    from foldrun.contract import platform_from_versions

    assert platform_from_versions({"chromium": "156.0.8078.73", "chrome": "157.0.1.2", "firefox": "140.0"}) == {
        "chromium_major": 156,
        "chrome_major": 157,
    }
    assert platform_from_versions(None) == platform_from_versions({"chromium": 5}) == {}
