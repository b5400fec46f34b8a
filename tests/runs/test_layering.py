"""Issue 9 item 4 for the runs app: no import circles between actions, the lifecycle package, tasks, host and triggers;
actions never import tasks (they enqueue by task name after commit); no first-party import inside a function."""

from __future__ import annotations

import ast
from pathlib import Path

RUNS = Path(__file__).resolve().parents[2] / "runs"
FIRST_PARTY = ("runs", "foldrun", "accounts", "library", "notify", "vault", ".")
CORE = ["actions", "lifecycle", "tasks", "host", "triggers", "desks", "trace_log", "budget"]
# The AppConfig is Django's registry loader (tests/ops/test_no_import_inside_a_function.py says why).
REGISTRY_LOADERS = {"apps.py"}


def _imports(path: Path) -> tuple[set[str], list[str]]:
    """(runs modules imported at module level, first-party imports made inside functions)."""
    tree = ast.parse(path.read_text())
    top: set[str] = set()
    inside: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        names = (
            [a.name for a in node.names] if isinstance(node, ast.Import) else ["." * node.level + (node.module or "")]
        )
        first_party = [n for n in names if n.startswith(FIRST_PARTY)]
        if node.col_offset > 0 and first_party:
            inside.extend(f"{path.name}:{node.lineno} {n}" for n in first_party)
        for name in names:
            if node.col_offset == 0 and (name.startswith(".") or name.startswith("runs.")):
                module = name.lstrip(".").removeprefix("runs.").split(".")[0]
                if isinstance(node, ast.ImportFrom) and not module:  # from . import lifecycle
                    top.update(a.name for a in node.names)
                else:
                    top.add(module)
    return top, inside


def _module_file(name: str) -> Path:
    package = RUNS / name / "__init__.py"
    return package if package.exists() else RUNS / f"{name}.py"


def test_actions_never_import_tasks_and_the_core_modules_import_in_one_direction():
    graph = {name: _imports(_module_file(name))[0] & set(CORE) for name in CORE if _module_file(name).exists()}
    assert "tasks" not in graph["actions"]
    seen: list[str] = []

    def visit(node: str, path: list[str]) -> None:
        assert node not in path, f"import circle: {' → '.join(path + [node])}"
        for nxt in graph.get(node, ()):
            visit(nxt, path + [node])
        seen.append(node)

    for name in graph:
        visit(name, [])


def test_no_first_party_import_inside_a_function_in_runs():
    found = []
    for path in sorted(RUNS.rglob("*.py")):
        if path.name not in REGISTRY_LOADERS:
            found.extend(_imports(path)[1])
    assert found == []
