"""What a tool's program needs: requirements.txt, package.json, imports.

    parse_requirements(text) -> Requirements     (read exactly as spec/tools.md says)
    parse_package_json(text) -> (npm names, problem sentence | None)
    python_imports(source) -> [(line, top-level module)]
    node_imports(source) -> [(line, package)]
    import_name(distribution) -> the module a distribution is imported as
    normalise_distribution(name) -> PEP 503 form

Pure Python; no network, no installed-package lookups, so a laptop and the
server agree on every answer.
"""

from __future__ import annotations

import ast
import json
import re
import sys
from dataclasses import dataclass, field

# PEP 508 name at the start of a requirement line.
_REQ_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?")
_OPTION_WORDS = {
    "-r": "-r (another requirements file)",
    "--requirement": "--requirement (another requirements file)",
    "-c": "-c (a constraints file)",
    "--constraint": "--constraint (a constraints file)",
    "-e": "-e (an editable install)",
    "--editable": "--editable (an editable install)",
    "-i": "-i (an index URL)",
    "--index-url": "--index-url (an index URL)",
    "--extra-index-url": "--extra-index-url (an extra index URL)",
    "-f": "-f (a find-links location)",
    "--find-links": "--find-links (a find-links location)",
    "--hash": "--hash (pins are installed without hash checking)",
    "--no-binary": "--no-binary",
    "--only-binary": "--only-binary",
    "--pre": "--pre",
    "--trusted-host": "--trusted-host",
    "--prefer-binary": "--prefer-binary",
    "--no-index": "--no-index",
}


@dataclass
class RequirementLine:
    line: int  # 1-based line in requirements.txt (the first of a joined line)
    text: str  # the logical line, backslash continuations joined


@dataclass
class Requirements:
    packages: list[str] = field(default_factory=list)  # requirement specifiers that will be installed
    names: list[str] = field(default_factory=list)  # their distribution names, as written
    options: list[tuple[int, str]] = field(default_factory=list)  # (line, what is not applied)
    refused: list[tuple[int, str]] = field(default_factory=list)  # (line, why the line is refused)


def logical_lines(text: str) -> list[RequirementLine]:
    """Join backslash continuations, drop comments and blanks."""
    result: list[RequirementLine] = []
    buffer = ""
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not buffer:
            start = number
        if raw.rstrip().endswith("\\"):
            buffer += raw.rstrip()[:-1] + " "
            continue
        buffer += raw
        line = (re.sub(r"(^|\s)#.*$", "", buffer) if "#" in buffer else buffer).strip()
        buffer = ""
        if line:
            result.append(RequirementLine(start, line))
    if buffer.strip():
        line = re.sub(r"(^|\s)#.*$", "", buffer).strip()
        if line:
            result.append(RequirementLine(start, line))
    return result


def parse_requirements(text: str) -> Requirements:
    """Requirements as foldrun installs them: options are named, not applied;
    environment markers and `name @ url` are refused."""
    found = Requirements()
    for logical in logical_lines(text):
        line = logical.text
        words = line.split()
        if line.startswith("-"):
            option = words[0].split("=", 1)[0]
            found.options.append((logical.line, _OPTION_WORDS.get(option, option)))
            continue
        if ";" in line:
            found.refused.append((logical.line, "has an environment marker"))
            continue
        if re.search(r"\s@\s|^[A-Za-z0-9._-]+(\[[^\]]*\])?@", line) or "://" in line:
            found.refused.append((logical.line, "installs from a URL (name @ url)"))
            continue
        spec_words = []
        for word in words:
            if word.startswith("--"):
                option = word.split("=", 1)[0]
                found.options.append((logical.line, _OPTION_WORDS.get(option, option)))
                continue
            spec_words.append(word)
        spec = "".join(spec_words)
        match = _REQ_NAME.match(spec)
        if not match:
            found.refused.append((logical.line, "is not a requirement foldrun can read"))
            continue
        found.packages.append(spec)
        found.names.append(match.group(1))
    # One line naming several options (a pin with two --hash) is reported once.
    found.options = list(dict.fromkeys(found.options))
    return found


def parse_package_json(text: str) -> tuple[list[str], str | None]:
    """`dependencies` names of a package.json, and a sentence when it cannot be read."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        return [], f"is not valid JSON ({exc.msg} at line {exc.lineno})"
    if not isinstance(data, dict):
        return [], "is not a JSON object"
    deps = data.get("dependencies") or {}
    if not isinstance(deps, dict):
        return [], "has dependencies that are not an object of names to versions"
    return [str(name) for name in deps], None


def normalise_distribution(name: str) -> str:
    """PEP 503: lowercase, runs of '-', '_', '.' become '-'. Extras and pins dropped."""
    match = _REQ_NAME.match(name)
    base = match.group(1) if match else name
    return re.sub(r"[-_.]+", "-", base).lower()


# Distributions whose import name is not their own name (normalised keys).
KNOWN_IMPORT_NAMES: dict[str, tuple[str, ...]] = {
    "pyyaml": ("yaml",),
    "beautifulsoup4": ("bs4",),
    "beautifulsoup": ("BeautifulSoup",),
    "pillow": ("PIL",),
    "scikit-learn": ("sklearn",),
    "scikit-image": ("skimage",),
    "python-dateutil": ("dateutil",),
    "opencv-python": ("cv2",),
    "opencv-python-headless": ("cv2",),
    "opencv-contrib-python": ("cv2",),
    "python-dotenv": ("dotenv",),
    "google-api-python-client": ("googleapiclient", "apiclient"),
    "google-auth": ("google",),
    "google-cloud-storage": ("google",),
    "google-cloud-bigquery": ("google",),
    "google-genai": ("google",),
    "google-generativeai": ("google",),
    "google-ads": ("google",),
    "protobuf": ("google",),
    "pyjwt": ("jwt",),
    "psycopg2-binary": ("psycopg2",),
    "psycopg-binary": ("psycopg",),
    "attrs": ("attr", "attrs"),
    "pymupdf": ("fitz", "pymupdf"),
    "python-docx": ("docx",),
    "python-pptx": ("pptx",),
    "pyopenssl": ("OpenSSL",),
    "pycryptodome": ("Crypto",),
    "pycryptodomex": ("Cryptodome",),
    "dnspython": ("dns",),
    "python-magic": ("magic",),
    "pyserial": ("serial",),
    "python-slugify": ("slugify",),
    "markdown": ("markdown",),
    "typing-extensions": ("typing_extensions",),
    "msgpack-python": ("msgpack",),
    "discord-py": ("discord",),
    "python-telegram-bot": ("telegram",),
    "slack-sdk": ("slack_sdk",),
    "slack-bolt": ("slack_bolt",),
    "pygithub": ("github",),
    "gitpython": ("git",),
    "ruamel-yaml": ("ruamel",),
    "lxml-html-clean": ("lxml_html_clean",),
    "duckduckgo-search": ("duckduckgo_search",),
    "tavily-python": ("tavily",),
    "google-search-results": ("serpapi",),
    "mysqlclient": ("MySQLdb",),
    "pymysql": ("pymysql",),
    "faiss-cpu": ("faiss",),
    "tree-sitter": ("tree_sitter",),
    "playwright": ("playwright",),
    "pdfminer-six": ("pdfminer",),
    "websocket-client": ("websocket",),
    "email-validator": ("email_validator",),
}


def import_name(distribution: str) -> tuple[str, ...]:
    """The top-level module names a distribution is imported as."""
    key = normalise_distribution(distribution)
    if key in KNOWN_IMPORT_NAMES:
        return KNOWN_IMPORT_NAMES[key]
    return (key.replace("-", "_"),)


STDLIB: frozenset[str] = frozenset(sys.stdlib_module_names) | {"__future__"}


_IMPORT_START = re.compile(r"^[ \t]*(?:import|from)[ \t]", re.M)


def python_imports(source: str) -> list[tuple[int, str]]:
    """(line, top-level module) for each absolute import; [] if it does not parse.

    Read with `ast`. For speed, the import lines alone are parsed first (each
    dedented, at its own line number); a file whose imports span lines or sit
    in odd places is parsed whole.
    """
    starts = list(_IMPORT_START.finditer(source))
    if not starts:
        return []
    tree = None
    if "(" not in "".join(
        source[m.start() : source.find("\n", m.start()) if source.find("\n", m.start()) != -1 else len(source)]
        for m in starts
    ):
        lines = source.split("\n")
        picked = ["pass"] * len(lines)
        for match in starts:
            number = source.count("\n", 0, match.start())
            picked[number] = lines[number].strip()
        if not any(line.rstrip().endswith("\\") for line in picked):
            try:
                tree = ast.parse("\n".join(picked))
            except (SyntaxError, ValueError):
                tree = None
    if tree is None:
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError):
            return []
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append((node.lineno, alias.name.split(".")[0]))
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                found.append((node.lineno, node.module.split(".")[0]))
    return sorted(found)


NODE_BUILTINS = frozenset(
    "assert async_hooks buffer child_process cluster console constants crypto dgram diagnostics_channel dns domain "
    "events fs http http2 https inspector module net os path perf_hooks process punycode querystring readline repl "
    "stream string_decoder sys timers tls trace_events tty url util v8 vm wasi worker_threads zlib test".split()
)
_NODE_IMPORT = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bimport\s+(?:[\w*{}\s,$]+\s+from\s+)?|\bexport\s+[\w*{}\s,$]+\s+from\s+)(['"])([^'"\n]+)\1"""
)


def node_package(specifier: str) -> str | None:
    """The npm package a require/import specifier names; None for builtins and files."""
    if specifier.startswith((".", "/")) or specifier.startswith("node:"):
        return None
    parts = specifier.split("/")
    name = "/".join(parts[:2]) if specifier.startswith("@") else parts[0]
    if name in NODE_BUILTINS:
        return None
    return name


def node_imports(source: str) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    for match in _NODE_IMPORT.finditer(source):
        package = node_package(match.group(2))
        if package:
            found.append((source.count("\n", 0, match.start()) + 1, package))
    return found


PYTHON_INTERPRETERS = {"python", "python3", "py"}
NODE_INTERPRETERS = {"node", "nodejs", "javascript", "js", "deno", "bun", "tsx", "ts-node", "typescript", "ts"}
EXTENSION_INTERPRETERS = {
    ".py": "python3",
    ".js": "node",
    ".mjs": "node",
    ".cjs": "node",
    ".ts": "node",
    ".sh": "bash",
    ".bash": "bash",
    ".rb": "ruby",
}
FENCE_INTERPRETERS = {
    "python": "python3",
    "python3": "python3",
    "py": "python3",
    "bash": "bash",
    "sh": "bash",
    "shell": "bash",
    "zsh": "bash",
    "js": "node",
    "javascript": "node",
    "node": "node",
    "mjs": "node",
    "ts": "node",
    "typescript": "node",
    "ruby": "ruby",
    "rb": "ruby",
}


def language_of(interpreter: str | None) -> str | None:
    """'python' or 'node' (the two whose imports foldrun reads), else None."""
    if not interpreter:
        return None
    word = interpreter.strip().split()[0].rsplit("/", 1)[-1]
    if word in PYTHON_INTERPRETERS or word.startswith("python"):
        return "python"
    if word in NODE_INTERPRETERS:
        return "node"
    return None
