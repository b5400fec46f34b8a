"""Issue 9 item 4: no first-party import inside a function, except in a registry loader.

An import inside a function hides a dependency from the layering contracts
(.importlinter) and usually papers over a circle; this walks the syntax tree
of every module of the product's packages and names each such import by
file:line. Type-checking-only imports (`if TYPE_CHECKING:` at module level)
are not inside a function and are not flagged.

The registry loaders allowed to import late, and why:

- `<app>/apps.py` — Django's app registry: an app's modules that touch models
  can be imported only once every app is loaded, so `AppConfig.ready()` (and
  the start-up checks and post-migrate hooks an AppConfig registers) is where
  an app connects its signal receivers and page parts (foldrun/pageparts.py).

The CLI's late loading (its `cmd_*` modules by name, `foldrun.cli.laptop` when
a command works on this machine) goes through importlib in
foldrun/cli/main.py and foldrun/cli/loader.py, so it holds no import
statement to allow.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("foldrun", "accounts", "library", "vault", "browsing", "runs", "notify")
REGISTRY_LOADERS = ("apps.py",)  # an app's AppConfig module, in any of the apps


def _first_party(node: ast.Import | ast.ImportFrom) -> list[str]:
    if isinstance(node, ast.ImportFrom):
        name = "." * node.level + (node.module or "")
        return [name] if node.level or name.split(".")[0] in PACKAGES else []
    return [a.name for a in node.names if a.name.split(".")[0] in PACKAGES]


def imports_inside_functions(path: Path) -> list[str]:
    """`file:line module` for each first-party import made inside a function (or lambda) of `path`."""
    found: list[str] = []
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name

    def walk(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                found.extend(f"{shown}:{child.lineno} {name}" for name in _first_party(child))
            walk(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)), False)
    return found


def product_modules() -> list[Path]:
    return sorted(
        p
        for package in PACKAGES
        for p in (ROOT / package).rglob("*.py")
        if "migrations" not in p.parts and p.name not in REGISTRY_LOADERS
    )


def test_the_walk_finds_an_import_inside_a_function_and_names_file_and_line(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os\nfrom foldrun import net\n\n\ndef f():\n    import json\n    from . import ids\n\n\n"
        "class C:\n    def m(self):\n        from accounts.models import Account\n",
        encoding="utf-8",
    )
    assert imports_inside_functions(sample) == ["sample.py:7 .", "sample.py:12 accounts.models"]


def test_no_module_of_the_product_imports_first_party_code_inside_a_function():
    found = [line for path in product_modules() for line in imports_inside_functions(path)]
    assert found == [], (
        "first-party imports inside functions (hoist them, or break the circle that made them "
        "local):\n" + "\n".join(found)
    )


def test_every_app_module_is_walked():
    walked = {str(p.relative_to(ROOT)) for p in product_modules()}
    assert {"runs/pages.py", "accounts/pages.py", "foldrun/cli/cmd_run.py", "notify/receivers.py"} <= walked
    assert not any(name.endswith("apps.py") for name in walked)
