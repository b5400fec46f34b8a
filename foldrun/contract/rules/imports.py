"""spec/tools.md: `foldrun check` warns when a program imports a package
nothing declares (runtime: packages / npm, requirements.txt, package.json)."""

from __future__ import annotations

import posixpath

from ..check import rule
from ..desk import TOOL
from ..findings import Finding
from ..model import tool_of
from ..paths import BINARY_MARKER
from ..programs import STDLIB, import_name, language_of, node_imports, python_imports, normalise_distribution


def _programs(desk, tool):
    """(file, first line offset, text, language) for each program of a script tool."""
    language = language_of(tool.interpreter)
    if tool.program_path is None:
        if tool.program is not None and language:
            yield tool.path, tool.program_line - 1, tool.program, language
        return
    if tool.folder is None:
        if language and tool.program is not None:
            yield tool.program_path, 0, tool.program, language
        return
    for path in desk.files_under(tool.scope, tool.folder):
        extension = posixpath.splitext(path)[1].lower()
        kind = "python" if extension == ".py" else "node" if extension in (".js", ".mjs", ".cjs", ".ts") else None
        text = desk.text(tool.scope, path)
        if kind and text and text != BINARY_MARKER:
            yield path, 0, text, kind


def _local_modules(desk, tool) -> set[str]:
    if tool.folder is None:
        return set()
    local = set()
    for path in desk.files_under(tool.scope, tool.folder):
        relative = path[len(tool.folder) + 1 :]
        top = relative.split("/", 1)[0]
        local.add(top.removesuffix(".py") if "/" not in relative else top)
    return local


@rule("imports.undeclared")
def undeclared(desk, context):
    for document in desk.of_kind(TOOL):
        if document.parsed is None:
            continue
        tool = tool_of(desk, document)
        if tool.transport != "script":
            continue
        declared_py = {name for package in tool.packages for name in import_name(package)}
        declared_npm = {
            package.split("@", 1)[0] if not package.startswith("@") else "@" + package[1:].split("@", 1)[0]
            for package in tool.npm
        }
        local = _local_modules(desk, tool)
        for path, offset, text, language in _programs(desk, tool):
            if language == "python":
                reported = set()
                for line, module in python_imports(text):
                    if module in STDLIB or module in declared_py or module in local or module in reported:
                        continue
                    if normalise_distribution(module).replace("-", "_") in {
                        normalise_distribution(p).replace("-", "_") for p in tool.packages
                    }:
                        continue
                    reported.add(module)
                    where = f"runtime: packages: in {tool.path}" + (
                        f" or to {tool.folder}/requirements.txt" if tool.folder else ""
                    )
                    yield Finding(
                        path,
                        line + offset,
                        "warning",
                        f"imports {module}, which nothing declares; add it to {where}, or the program fails on its first platform call.",
                        "imports.undeclared",
                    )
            else:
                reported = set()
                for line, package in node_imports(text):
                    if package in declared_npm or package in reported:
                        continue
                    reported.add(package)
                    where = f"runtime: npm: in {tool.path}" + (
                        f" or to dependencies in {tool.folder}/package.json" if tool.folder else ""
                    )
                    yield Finding(
                        path,
                        line + offset,
                        "warning",
                        f"requires {package}, which nothing declares; add it to {where}, or the program fails on its first platform call.",
                        "imports.undeclared",
                    )
