"""No module of the runs app imports another module's `_private` name (issue 30 item 1): what modules share is
public — a real name with a docstring — or it is not shared. Read from every module's imports, the lifecycle
package's included."""
from __future__ import annotations

import ast
from pathlib import Path

RUNS = Path(__file__).resolve().parents[2] / "runs"


def private_imports(path: Path, root: Path = RUNS) -> list[str]:
    """`file:line module.name` for each `from x import _name` in the module at `path`."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            found.extend(f"{path.relative_to(root)}:{node.lineno} {node.module or '.'}.{alias.name}"
                         for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__"))
    return found


def test_no_module_of_runs_imports_another_modules_private_name():
    assert [line for path in sorted(RUNS.rglob("*.py")) for line in private_imports(path)] == []


def test_a_private_name_imported_is_named_with_its_file_and_line(tmp_path):
    module = tmp_path / "advance.py"
    module.write_text("from __future__ import annotations\n\nfrom .chain import Chain, _take\n")
    assert private_imports(module, tmp_path) == ["advance.py:3 chain._take"]
