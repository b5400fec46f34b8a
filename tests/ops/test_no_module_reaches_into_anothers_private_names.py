"""Issue 30 item 1: no module of the product imports another module's `_name`, nor reaches one through a module
it imported (`deliveries._record(...)`).

A leading underscore says "this module's own business": it may change shape without telling anyone. A split
made to keep files short, whose halves import each other's private helpers, hides one module behind two names;
what is shared gets a public name and a docstring instead. This walks the syntax tree of every module of the
product's packages and names each reach by file:line, so a new one cannot land silently. Importing a public name
under a private alias (`from . import tools as _tools`) is fine: what is imported is public.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("foldrun", "accounts", "library", "vault", "browsing", "runs", "notify")


def _private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _product_module(node: ast.ImportFrom) -> bool:
    return node.level > 0 or (node.module or "").split(".")[0] in PACKAGES


def reaches(path: Path) -> list[str]:
    """Each place `path` imports or touches another product module's private name, as `file:line name`."""
    tree = ast.parse(path.read_text(), filename=str(path))
    where = path.relative_to(ROOT)
    found: list[str] = []
    modules: set[str] = set()  # local names bound to a product module: `from . import deliveries`, `import runs.x as y`
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and _product_module(node):
            for alias in node.names:
                if _private(alias.name):
                    found.append(f"{where}:{node.lineno} {alias.name}")
                elif alias.name[:1].islower():
                    modules.add(alias.asname or alias.name)  # may be a module; attribute use below decides
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in PACKAGES:
                    modules.add(alias.asname or alias.name.split(".")[0])
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and node.value.id in modules
            and node.value.id not in ("self", "cls")
        ):
            found.append(f"{where}:{node.lineno} {node.value.id}.{node.attr}")
    return found


def product_files() -> list[Path]:
    return sorted(
        path for package in PACKAGES for path in (ROOT / package).rglob("*.py") if "migrations" not in path.parts
    )


def test_no_module_of_the_product_reaches_into_another_modules_private_names():
    found = [reach for path in product_files() for reach in reaches(path)]
    assert not found, (
        "these reach into another module's private names; give what is shared a public name:\n" + "\n".join(found)
    )


def test_the_walk_finds_a_private_import_and_a_private_attribute(tmp_path, monkeypatch):
    """The walk itself can fail: a planted module with both kinds of reach is named twice, a public alias never."""
    package = tmp_path / "runs"
    package.mkdir()
    planted = package / "planted.py"
    planted.write_text(
        "from .chain import _here, enqueue_step\nfrom . import tools as _tools\n"
        "from . import deliveries\n\n\ndef go():\n    return deliveries._record(1), _tools\n"
    )
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    assert reaches(planted) == ["runs/planted.py:1 _here", "runs/planted.py:7 deliveries._record"]
