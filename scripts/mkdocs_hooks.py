"""MkDocs hook: the CLI reference from foldrun's argparse parser and the REST API reference from the OpenAPI
schema drf-spectacular builds, generated on every `mkdocs build` so neither page can drift from the code."""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parent.parent


def _django() -> None:
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.dev")
    os.environ.setdefault("FOLDRUN_DATA_DIR", tempfile.mkdtemp(prefix="foldrun-docs."))
    import django

    django.setup()


def _subcommands(parser: argparse.ArgumentParser) -> list[tuple[str, argparse.ArgumentParser]]:
    for action in parser._actions:  # argparse keeps subparsers only here
        if isinstance(action, argparse._SubParsersAction):
            return list(action.choices.items())
    return []


def _cli_section(prog: str, parser: argparse.ArgumentParser, depth: int) -> list[str]:
    lines = [f"{'#' * depth} `{prog}`", "", "```text", parser.format_help().rstrip(), "```", ""]
    for name, sub in _subcommands(parser):
        lines += _cli_section(f"{prog} {name}", sub, min(depth + 1, 4))
    return lines


def cli_markdown() -> str:
    from foldrun.cli.main import build_parser

    parser = build_parser()
    os.environ["COLUMNS"] = "100"
    lines = [
        "# The CLI",
        "",
        "Every command of `foldrun`, as `--help` prints it (written from the parser at build time).",
        "",
    ]
    lines += ["```text", parser.format_help().rstrip(), "```", ""]
    for name, sub in _subcommands(parser):
        lines += _cli_section(f"foldrun {name}", sub, 2)
    return "\n".join(lines) + "\n"


def _type(schema: dict[str, Any]) -> str:
    if "$ref" in schema:
        return f"`{schema['$ref'].rsplit('/', 1)[-1]}`"
    text = schema.get("type", "object")
    if schema.get("type") == "array":
        text = f"array of {_type(schema.get('items', {}))}"
    facts = [f"one of {', '.join(map(str, schema['enum']))}"] if "enum" in schema else []
    facts += [f"≥ {schema['minimum']}"] if "minimum" in schema else []
    facts += [f"≤ {schema['maximum']}"] if "maximum" in schema else []
    return text + (f" ({'; '.join(facts)})" if facts else "")


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def api_markdown() -> str:
    from drf_spectacular.generators import SchemaGenerator

    # drf-spectacular prints its own findings about views to stderr; /api/schema/ and its tests own those.
    with contextlib.redirect_stderr(io.StringIO()):
        schema = SchemaGenerator().get_schema(request=None, public=True)
    lines = [
        "# The REST API",
        "",
        "Every operation of the OpenAPI schema a running server answers at "
        "`/api/schema/` (written from it at build time). Errors are JSON `{code, message, details}`; "
        "send a token as `Authorization: Bearer …` (`foldrun login`, or Settings → Tokens).",
        "",
    ]
    for path, item in sorted(schema["paths"].items()):
        for method, op in item.items():
            if method not in {"get", "post", "put", "patch", "delete"}:
                continue
            lines += [f"## {method.upper()} `{path}`", ""]
            if op.get("description") or op.get("summary"):
                lines += [_cell(op.get("summary") or op.get("description")), ""]
            params = op.get("parameters", [])
            if params:
                lines += ["| parameter | in | required | type | meaning |", "|---|---|---|---|---|"]
                for p in params:
                    lines.append(
                        f"| `{p['name']}` | {p['in']} | {'yes' if p.get('required') else 'no'} | "
                        f"{_cell(_type(p.get('schema', {})))} | {_cell(p.get('description', ''))} |"
                    )
                lines.append("")
            body = op.get("requestBody", {}).get("content", {})
            if body:
                kind, media = next(iter(body.items()))
                lines += [f"Request body ({kind}): {_type(media.get('schema', {}))}", ""]
            lines += ["| status | answer |", "|---|---|"]
            for status, answer in op.get("responses", {}).items():
                content = answer.get("content", {})
                shape = "; ".join(f"{k}: {_type(v.get('schema', {}))}" for k, v in content.items()) or "no body"
                lines.append(f"| {status} | {_cell(answer.get('description', ''))} {_cell(shape)} |")
            lines.append("")
    return "\n".join(lines) + "\n"


def on_files(files: Files, config: Any) -> Files:
    _django()
    files.append(File.generated(config, "reference/cli.md", content=cli_markdown()))
    files.append(File.generated(config, "reference/api.md", content=api_markdown()))
    return files
