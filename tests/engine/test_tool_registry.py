"""Tools are registered modules: built-ins are declarations, transports register their plans, and no
tool or web module reaches into the step."""

import ast
from pathlib import Path

from foldrun.contract.model import BUILTIN_GROUPS as CONTRACT_GROUPS
from foldrun.engine.tools import registry
from foldrun.engine.tools.builtin import BUILTIN_GROUPS

ROOT = Path(__file__).resolve().parents[2] / "foldrun"


def _imports(path: Path) -> set[str]:
    """Every module a file imports, relative imports made absolute."""
    package = ".".join(path.relative_to(ROOT.parent).with_suffix("").parts[:-1])
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found |= {f"{module}.{a.name}" for a in node.names}
    return found


def test_no_tool_or_web_module_imports_the_step():
    files = sorted((ROOT / "engine" / "tools").rglob("*.py")) + sorted((ROOT / "web").rglob("*.py"))
    offenders = [str(f.relative_to(ROOT)) for f in files if "foldrun.engine.step" in _imports(f)]
    assert files and offenders == []


def test_the_builtin_groups_are_the_contracts_and_derive_from_the_declarations():
    assert BUILTIN_GROUPS == registry.builtin_groups()
    assert set(BUILTIN_GROUPS) == set(CONTRACT_GROUPS)


def test_each_grant_offers_the_tools_declared_for_it():
    names = lambda granted: [t.name for t in registry.builtin_tools(granted)]  # noqa: E731
    assert names(set()) == ["Write", "Edit"]
    assert names({"read"}) == ["Read", "Glob", "Grep", "Write", "Edit"]
    assert set(names(set(BUILTIN_GROUPS))) == {b.name for b in registry.builtins()}
    acting = {b.name for b in registry.builtins() if b.acts}
    assert acting == set()  # built-ins change only the sandbox; memory/state writes are kept at step end


def test_every_transport_and_the_gallery_web_tool_is_registered():
    assert sorted(registry.transport_names()) == ["http", "mcp", "script"]
    assert registry.gallery_tool("web") is not None
    assert registry.gallery_tool("nonesuch") is None
