"""Issue 9, item 4, for notify and library: no import circles. Notify's
actions queue tasks by name and never import the tasks module; library's
services no longer import its actions; and no first-party import hides
inside a function (Django's AppConfig.ready, a registry loader, excepted)."""

from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
FIRST_PARTY = {"accounts", "foldrun", "library", "notify", "runs", "vault"}


def _modules(app: str) -> list[Path]:
    # library's actions are a package of their own (library/actions/).
    return sorted(p for pattern in ("*.py", "actions/*.py") for p in (REPO / app).glob(pattern))


def _imports(tree: ast.AST) -> list[tuple[ast.AST, str, int]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            name = "." * node.level + (node.module or "")
            found.append((node, name, node.level))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                found.append((node, alias.name, 0))
    return found


def _inside_functions(path: Path) -> list[str]:
    tree = ast.parse(path.read_text())
    hidden = []
    for func in ast.walk(tree):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node, name, level in _imports(func):
            if level or name.split(".")[0] in FIRST_PARTY:
                hidden.append(f"{path.relative_to(REPO)}:{node.lineno} imports {name} inside {func.name}()")
    return hidden


def test_no_first_party_import_hides_inside_a_function_in_notify_or_library():
    hidden = [
        line
        for app in ("notify", "library")
        for p in _modules(app)
        if p.name != "apps.py"
        for line in _inside_functions(p)
    ]
    assert hidden == []


def test_nothing_in_notify_imports_its_tasks_module():
    offenders = []
    for path in _modules("notify"):
        if path.name == "tasks.py":
            continue
        for node, name, _level in _imports(ast.parse(path.read_text())):
            names = [a.name for a in getattr(node, "names", [])]
            if name in (".tasks", "notify.tasks") or (name in (".", "notify") and "tasks" in names):
                offenders.append(f"{path.name}:{node.lineno}")
    assert offenders == []


def test_library_services_do_not_import_library_actions():
    tree = ast.parse((REPO / "library" / "services.py").read_text())
    assert [
        name for _n, name, _l in _imports(tree) if name.split(".")[:2] in (["", "actions"], ["library", "actions"])
    ] == []
