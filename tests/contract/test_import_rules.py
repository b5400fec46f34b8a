"""spec/tools.md: check warns when a program imports a package nothing declares."""

from foldrun.contract.programs import import_name, node_imports, parse_requirements, python_imports

from .support import lines

TOOL = "---\ntransport: script\nrun: {run}\n{extra}---\n"


def test_a_python_import_nothing_declares_is_a_warning_naming_where_to_declare_it():
    files = {
        "tools/t/tool.md": TOOL.format(run="r.py", extra=""),
        "tools/t/r.py": "import os, json\nimport requests\nfrom bs4 import BeautifulSoup\n",
    }
    assert lines(files) == [
        "tools/t/r.py:2: warning: imports requests, which nothing declares; add it to runtime: packages: in tools/t/tool.md or to tools/t/requirements.txt, or the program fails on its first platform call.",
        "tools/t/r.py:3: warning: imports bs4, which nothing declares; add it to runtime: packages: in tools/t/tool.md or to tools/t/requirements.txt, or the program fails on its first platform call.",
    ]


def test_requirements_and_runtime_packages_declare_imports_by_their_import_names():
    files = {
        "tools/t/tool.md": TOOL.format(run="r.py", extra="runtime: {packages: [PyYAML, python-dateutil]}\n"),
        "tools/t/r.py": "import yaml\nimport dateutil.parser\nfrom bs4 import BeautifulSoup\nimport PIL.Image\nimport helpers\nfrom . import x\nimport pandas\n",
        "tools/t/helpers.py": "import sklearn\n",
        "tools/t/requirements.txt": "beautifulsoup4==4.12\nPillow>=10\nscikit-learn\npandas[excel]==2.2 \\\n  --hash=sha256:abc\n",
    }
    assert lines(files, code="imports.undeclared") == []


def test_a_fenced_program_is_checked_at_its_lines_in_the_tool_file():
    files = {
        "tools/sql.md": "---\ntransport: script\nruntime: {packages: [duckdb]}\n---\nRun SQL.\n```python\nimport duckdb\nimport polars\n```\n"
    }
    assert lines(files) == [
        "tools/sql.md:8: warning: imports polars, which nothing declares; add it to runtime: packages: in tools/sql.md, or the program fails on its first platform call."
    ]


def test_a_node_require_or_import_nothing_declares_is_a_warning():
    files = {
        "tools/n/tool.md": TOOL.format(run="index.mjs", extra="runtime: {npm: [got]}\n"),
        "tools/n/index.mjs": "import fs from 'node:fs';\nimport path from 'path';\nimport got from 'got';\nimport {x} from './x.js';\nconst kit = require('@acme/kit/sub');\nconst y = await import(\"left-pad\");\n",
        "tools/n/package.json": '{"dependencies": {"left-pad": "1.3.0"}}',
    }
    assert lines(files) == [
        "tools/n/index.mjs:5: warning: requires @acme/kit, which nothing declares; add it to runtime: npm: in tools/n/tool.md or to dependencies in tools/n/package.json, or the program fails on its first platform call."
    ]


def test_distribution_names_map_to_their_import_names():
    assert [
        import_name(n)
        for n in (
            "PyYAML",
            "beautifulsoup4",
            "Pillow",
            "scikit-learn",
            "python-dateutil",
            "Requests",
            "typing_extensions",
        )
    ] == [("yaml",), ("bs4",), ("PIL",), ("sklearn",), ("dateutil",), ("requests",), ("typing_extensions",)]


def test_requirements_join_backslash_lines_and_keep_the_first_line_number():
    found = parse_requirements("a==1 \\\n  --hash=sha256:x \\\n  --hash=sha256:y\n\nb>=2  # comment\n")
    assert (found.packages, found.names, found.options, found.refused) == (
        ["a==1", "b>=2"],
        ["a", "b"],
        [(1, "--hash (pins are installed without hash checking)")],
        [],
    )


def test_imports_are_read_with_ast_and_require_with_a_pattern():
    assert python_imports("import a.b\nfrom c.d import e\nfrom .f import g\n") == [(1, "a"), (2, "c")]
    assert node_imports("const a = require('a');\nexport { b } from '@s/b/c';\n") == [(1, "a"), (2, "@s/b")]
