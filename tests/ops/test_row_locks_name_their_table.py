"""A row lock taken together with a join names the table it locks.

PostgreSQL refuses `SELECT … FOR UPDATE` over a LEFT OUTER JOIN ("FOR UPDATE cannot be applied to the nullable
side of an outer join"); SQLite has no row locks and never says so. A queryset that both `select_related()`s and
`select_for_update()`s therefore works on the embedded default and fails on PostgreSQL the first time a nullable
foreign key is followed — as finishing a browser task once did, only in CI's PostgreSQL pass. This walks every
product module's syntax tree and names each such chain without `of=` by file:line.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("foldrun", "accounts", "library", "vault", "browsing", "runs", "notify")


def _chain(node: ast.AST) -> list[ast.Call]:
    """The method calls of one queryset chain, outermost first (`a.b().c().d()` → d, c, b)."""
    calls: list[ast.Call] = []
    while isinstance(node, (ast.Call, ast.Attribute)):
        if isinstance(node, ast.Call):
            calls.append(node)
            node = node.func
        else:
            node = node.value
    return calls


def _name(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else ""


def unnamed_locks_over_joins(path: Path) -> list[str]:
    found: list[str] = []
    tree = ast.parse(path.read_text(), filename=str(path))
    seen: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call) or id(node) in seen:
            continue
        calls = _chain(node)
        seen.update(id(c) for c in calls)
        names = [_name(c) for c in calls]
        locks = [c for c in calls if _name(c) == "select_for_update"]
        if "select_related" in names and any(not any(k.arg == "of" for k in c.keywords) for c in locks):
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    return found


def test_the_walk_finds_a_lock_over_a_join_without_of(tmp_path):
    sample = ROOT / "tests" / "ops" / "_lock_sample.py"
    try:
        sample.write_text(
            "def f(Task):\n"
            "    Task.objects.select_for_update().filter(pk=1).select_related('run').first()\n"
            "    Task.objects.select_for_update(of=('self',)).select_related('run').first()\n"
            "    Task.objects.select_for_update().filter(pk=1).first()\n"
        )
        assert unnamed_locks_over_joins(sample) == ["tests/ops/_lock_sample.py:2"]
    finally:
        sample.unlink()


def test_no_product_row_lock_over_a_join_leaves_out_of():
    found = [
        hit
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        for hit in unnamed_locks_over_joins(path)
    ]
    assert found == [], "select_for_update() with select_related() needs of=('self', …) on PostgreSQL: " + ", ".join(
        found
    )
