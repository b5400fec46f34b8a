"""Tool files: transport and the fields of each, requirements.txt as the spec reads it."""

from .support import lines


def test_a_tool_with_no_transport_that_cannot_be_told_is_refused():
    assert lines({"tools/t.md": "---\ndescription: Something.\n---\n"}) == [
        "tools/t.md:2: error: has no transport:; write transport: http (with base:), transport: script (with run: or a fenced code block) or transport: mcp (with command: or url:)."
    ]


def test_an_unknown_transport_is_refused():
    assert lines({"tools/t.md": "---\ntransport: grpc\n---\n"}) == [
        "tools/t.md:2: error: transport: grpc is not one foldrun knows; it must be http, script or mcp."
    ]


def test_http_fields_are_checked():
    tool = "---\ntransport: http\nbase: ftp://x.example\nmethods: [GET, FETCH]\nrate: fast\ntimeout: -1\nopenapi: specs/api.yaml\noperations: 3\n---\n"
    assert lines({"tools/t.md": tool}) == [
        "tools/t.md:3: error: base: ftp://x.example is not an http(s) URL.",
        "tools/t.md:4: error: methods: FETCH is not an HTTP method; use GET, POST, PUT, PATCH, DELETE, HEAD, OPTIONS.",
        "tools/t.md:5: error: rate: fast is not a rate; write calls per second or minute, such as 5/s or 100/m.",
        "tools/t.md:6: error: timeout: -1 must be a number of seconds above zero.",
        "tools/t.md:7: error: openapi: specs/api.yaml is neither a URL nor a file in this desk.",
        "tools/t.md:8: error: operations: must be a list of operationIds or METHOD /path entries.",
    ]


def test_an_http_tool_without_a_base_is_refused():
    assert lines({"tools/t.md": "---\ntransport: http\n---\n"}) == [
        "tools/t.md:2: error: is an http tool with no base:; give the URL every call is relative to, such as base: https://api.example.com/v1."
    ]


def test_a_script_tools_program_must_exist_beside_it():
    files = {"tools/t/tool.md": "---\ntransport: script\nrun: sned.py\n---\n", "tools/t/send.py": "print(1)\n"}
    assert lines(files) == [
        "tools/t/tool.md:3: error: run: sned.py is not a file beside tool.md (tools/t/sned.py does not exist); did you mean send.py?"
    ]


def test_a_script_tool_without_a_program_is_refused():
    assert lines({"tools/t.md": "---\ntransport: script\nargs: {q: the query}\n---\nNo code here.\n"}) == [
        "tools/t.md:2: error: is a script tool with no program; give run: <file beside it> or put the program in a fenced code block in the body."
    ]


def test_a_run_that_leaves_the_folder_is_refused():
    assert lines({"tools/t/tool.md": "---\ntransport: script\nrun: ../../x.py\n---\n"}) == [
        "tools/t/tool.md:3: error: run: ../../x.py leaves the tool's folder; name a program beside tool.md."
    ]


def test_script_fields_of_the_wrong_shape_are_refused():
    tool = "---\ntransport: script\nrun: r.py\nargs: [q]\ntest_mode: always\nruntime: [pandas]\n---\n"
    assert lines({"tools/t/tool.md": tool, "tools/t/r.py": "print(1)\n"}) == [
        "tools/t/tool.md:4: error: args: must be a mapping of each argument to what it means.",
        "tools/t/tool.md:5: error: test_mode: always is not a setting; the one value is allow.",
        "tools/t/tool.md:6: error: runtime: must be a mapping, such as runtime: {packages: [pandas]}.",
    ]


def test_an_mcp_tool_needs_a_command_or_a_url():
    assert lines({"tools/m.md": "---\ntransport: mcp\n---\n"}) == [
        "tools/m.md:2: error: this mcp tool has neither command: nor url:; give command: (with args: and env:) for a local process or url: (with headers:) for a remote endpoint."
    ]


def test_requirements_options_are_not_applied_and_markers_and_urls_are_refused():
    files = {
        "tools/t/tool.md": "---\ntransport: script\nrun: r.py\n---\n",
        "tools/t/r.py": "import httpx\n",
        "tools/t/requirements.txt": (
            "# pinned by pip-compile\n--index-url https://pypi.example.com/simple\nhttpx==0.28.1 \\\n    --hash=sha256:aaa \\\n    --hash=sha256:bbb\n"
            "-e ./local\nrich; python_version < '3.11'\nkit @ https://example.com/kit.whl\n"
        ),
    }
    assert lines(files) == [
        "tools/t/requirements.txt:2: warning: --index-url (an index URL) is not applied; foldrun installs the requirement lines themselves and the build log names what it skipped.",
        "tools/t/requirements.txt:3: warning: --hash (pins are installed without hash checking) is not applied; foldrun installs the requirement lines themselves and the build log names what it skipped.",
        "tools/t/requirements.txt:6: warning: -e (an editable install) is not applied; foldrun installs the requirement lines themselves and the build log names what it skipped.",
        "tools/t/requirements.txt:7: warning: this line has an environment marker and is refused; nothing is installed from it — pin the package as name==version instead.",
        "tools/t/requirements.txt:8: warning: this line installs from a URL (name @ url) and is refused; nothing is installed from it — pin the package as name==version instead.",
    ]


def test_a_package_json_that_is_not_json_is_refused():
    files = {
        "tools/t/tool.md": "---\ntransport: script\nrun: r.js\n---\n",
        "tools/t/r.js": "console.log(1)\n",
        "tools/t/package.json": "{dependencies: }",
    }
    assert lines(files) == [
        "tools/t/package.json: error: is not valid JSON (Expecting property name enclosed in double quotes at line 1); its dependencies cannot be read."
    ]


def test_an_installed_copy_of_the_gallery_web_tool_is_accepted():
    assert (
        lines({"tools/web/tool.md": "---\nname: web\ntransport: builtin\ngallery: true\ndescription: d\n---\n"}) == []
    )


def test_an_mcp_tools_bad_url_is_reported_at_the_line_of_url():
    tool = "---\ntransport: mcp\nname: notes\ndescription: Notes.\nurl: ftp://notes.example.com\n---\n"
    assert lines({"tools/notes.md": tool}) == [
        "tools/notes.md:5: error: this mcp tool has url: that is not an http(s) URL."
    ]


def test_an_agents_mcp_server_with_a_bad_url_is_reported_at_the_line_of_its_url():
    agent = "---\nname: a\nmcpServers:\n  notes:\n    headers: {X: y}\n    url: ftp://notes.example.com\n---\n"
    assert lines({"agents/a.md": agent}) == [
        "agents/a.md:6: error: mcpServers: notes has url: that is not an http(s) URL."
    ]
