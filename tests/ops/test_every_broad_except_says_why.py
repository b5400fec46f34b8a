"""Issue 30 item 6: each `except Exception` either names what it catches or says in a comment why it cannot.

A handler that catches everything also catches the programming mistake nobody
meant to forgive; where the guarded code can raise only a few known errors the
handler names them, and where it truly can raise anything (a user's tool, a
dying browser, a worker that must record the failure and go on) the `except`
line carries a comment saying why. This walks the syntax tree of every module
of the product's packages and names by file:line each handler that catches
Exception or BaseException (alone or in a tuple), or is a bare `except:`, with
no comment on its `except` line — so a new one cannot land silently.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("foldrun", "accounts", "library", "vault", "browsing", "runs", "notify")
BROAD = {"Exception", "BaseException"}
# A linter's pragma alone (`# noqa: BLE001`) silences a warning but says nothing about why; what is left of the
# comment once it is taken out must have a word in it.
PRAGMA = re.compile(r"noqa(:\s*[A-Z]+[0-9]+(\s*,\s*[A-Z]+[0-9]+)*)?|type:\s*ignore(\[[^]]*\])?|pragma:[^#]*")


def _says_something(comment: str) -> bool:
    return re.search(r"[A-Za-z]{2,}", PRAGMA.sub("", comment.lstrip("#"))) is not None


def _is_broad(kind: ast.expr | None) -> bool:
    """True for a bare `except:`, `except Exception`, `except builtins.BaseException`, or a tuple holding one."""
    if kind is None:
        return True
    if isinstance(kind, ast.Tuple):
        return any(_is_broad(element) for element in kind.elts)
    if isinstance(kind, ast.Name):
        return kind.id in BROAD
    if isinstance(kind, ast.Attribute):
        return kind.attr in BROAD
    return False


def broad_handlers_without_a_reason(path: Path) -> list[str]:
    """`file:line` for each broad handler of `path` with no reason in a comment on its `except` line(s)."""
    source = path.read_text(encoding="utf-8")
    commented = {
        token.start[0]
        for token in tokenize.generate_tokens(io.StringIO(source).readline)
        if token.type == tokenize.COMMENT and _says_something(token.string)
    }
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    found = []
    for node in ast.walk(ast.parse(source, filename=str(path))):
        if isinstance(node, ast.ExceptHandler) and _is_broad(node.type):
            # The `except` line, or the lines of a tuple spread over several up to its colon.
            last = node.type.end_lineno if node.type is not None else node.lineno
            if not commented & set(range(node.lineno, (last or node.lineno) + 1)):
                found.append(f"{shown}:{node.lineno}")
    return sorted(found, key=lambda line: int(line.rsplit(":", 1)[1]))


def product_modules() -> list[Path]:
    return sorted(p for package in PACKAGES for p in (ROOT / package).rglob("*.py") if "migrations" not in p.parts)


def test_the_walk_names_each_broad_handler_without_a_comment_by_file_and_line(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "try:\n    pass\nexcept Exception:\n    pass\n"  # 3: flagged
        "try:\n    pass\nexcept:\n    pass\n"  # 7: flagged
        "try:\n    pass\nexcept (ValueError, BaseException) as e:\n    pass\n"  # 11: flagged
        "try:\n    pass\nexcept Exception:  # a tool may raise anything\n    pass\n"  # 15: has its reason
        "try:\n    pass\nexcept (OSError, ValueError):\n    pass\n"  # 19: named, not broad
        "try:\n    pass\nexcept builtins.Exception:\n    pass\n"  # 23: flagged
        "try:\n    pass\nexcept (OSError,\n        Exception):  # why\n    pass\n"  # 27: reason on its colon line
        "try:\n    pass\nexcept Exception:\n    pass  # a comment below is not on the except line\n"  # 32: flagged
        "try:\n    pass\nexcept Exception:  # noqa: BLE001\n    pass\n"  # 36: a pragma is no reason
        "try:\n    pass\nexcept Exception:  # noqa: BLE001 - closing is best effort\n    pass\n",  # 40: reason
        encoding="utf-8",
    )
    assert broad_handlers_without_a_reason(sample) == [
        "sample.py:3",
        "sample.py:7",
        "sample.py:11",
        "sample.py:23",
        "sample.py:32",
        "sample.py:36",
    ]


def test_every_broad_except_in_the_product_names_what_it_catches_or_says_why_it_cannot():
    found = [line for path in product_modules() for line in broad_handlers_without_a_reason(path)]
    assert found == [], (
        "handlers catching everything with no reason on their `except` line (name the errors "
        "the guarded code raises, or say in a comment on that line why it must be broad):\n" + "\n".join(found)
    )


def test_every_app_module_is_walked():
    walked = {str(p.relative_to(ROOT)) for p in product_modules()}
    assert {
        "runs/lifecycle/execute.py",
        "browsing/chromium.py",
        "foldrun/web/fetch.py",
        "notify/receivers.py",
    } <= walked
    assert not any("migrations" in name for name in walked)
