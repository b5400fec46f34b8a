"""`foldrun`: the entry point. Builds the parser from every `cmd_*.py` module
in this package (see the package docstring for the convention), runs the
chosen handler, and turns every failure into one sentence on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, Callable

import foldrun
from foldrun import cli as cli_package

from . import config as config_module
from .client import ApiClient, CliError, NotSignedIn
from .output import Output

NO_SERVER = (
    "No foldrun server is configured; run `foldrun login --url URL` with the address `./scripts/start` "
    "printed (or set FOLDRUN_URL and FOLDRUN_TOKEN)."
)

Handler = Callable[[argparse.Namespace, "Context"], "int | None"]


class Context:
    """What a command handler gets besides its arguments.

    - `api`: an `ApiClient` signed in with the stored (or `$FOLDRUN_*`) URL and
      token; touching it when not signed in raises `NotSignedIn`.
    - `out`: an `Output` (tables, `--json`, notes, progress).
    - `config_dir`: `~/.foldrun/` or `$FOLDRUN_HOME`.
    - `config`: the effective `Config` (url, token, where each came from).
    """

    def __init__(self, args: argparse.Namespace, out: Output, config_dir: Path) -> None:
        self.args = args
        self.out = out
        self.config_dir = config_dir
        self.config = config_module.load(config_dir)
        self._api: ApiClient | None = None
        self._network: tuple[ModuleType, Any] | None = None  # foldrun.net and its policy before this command

    @property
    def signed_in(self) -> bool:
        return self.config.signed_in

    @property
    def api(self) -> ApiClient:
        if self._api is None:
            if not self.config.url:
                raise NotSignedIn(NO_SERVER)
            if not self.config.token:
                raise NotSignedIn(f"You are not signed in to {self.config.url}; run `foldrun login` first.")
            self._api = ApiClient(self.config.url, self.config.token)
        return self._api

    def client(self, url: str, token: str | None = None) -> ApiClient:
        """A client for another URL or token (login checks a token before storing it)."""
        return ApiClient(url, token)

    def open_network(self, net: ModuleType) -> None:
        """A command working on this machine (loader.laptop, loader.mcp_bridge) may reach the user's own
        private addresses — their ollama, their receiver, a server on 127.0.0.1 — until it ends."""
        if self._network is None:
            self._network = (net, net.configure(allow_private=True))

    def close(self) -> None:
        if self._api is not None:
            self._api.close()
        if self._network is not None:
            net, before = self._network
            net.restore(before)


class Parser(argparse.ArgumentParser):
    """argparse, with a usage mistake said in one line rather than the usage block (as a JSON error object on
    stdout when the command line asked for --json)."""

    json_errors = False

    def error(self, message: str):  # type: ignore[override]
        sentence = f"{self.prog}: {message}. See `{self.prog} --help`."
        if Parser.json_errors:
            Output().json({"error": {"code": "usage", "message": sentence}})
        else:
            sys.stderr.write(sentence + "\n")
        raise SystemExit(2)


def _json_flag(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: a subcommand's own default must not undo a --json given earlier.
    parser.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print JSON for scripts instead of tables"
    )


def command_modules() -> list[str]:
    """The names of every `foldrun.cli.cmd_*` module, in order. The package's folders are read directly:
    pkgutil.iter_modules would import inspect (and ast, dis, tokenize) on every `foldrun` call."""
    names = {
        entry.name.removesuffix(".py")
        for folder in cli_package.__path__
        for entry in os.scandir(folder)
        if entry.name.startswith("cmd_") and entry.name.endswith(".py")
    }
    return sorted(names)


def build_parser(out: Output | None = None) -> argparse.ArgumentParser:
    common = Parser(add_help=False)
    _json_flag(common)
    parser = Parser(
        prog="foldrun",
        description="Keep AI agents as plain files; check, push and run them on a foldrun server.",
    )
    parser.add_argument("-V", "--version", action="version", version=f"foldrun {foldrun.__version__}")
    _json_flag(parser)
    subparsers = parser.add_subparsers(dest="command", metavar="<command>")
    for name in command_modules():
        try:
            module = importlib.import_module(f"foldrun.cli.{name}")
            register = getattr(module, "register")
            register(subparsers, common)
        except Exception as exc:  # one broken plugin must not take the whole CLI down
            (out or Output()).note(
                f"foldrun: the commands in {name} could not be loaded ({exc or 'no reason given'}); "
                "the other commands work. Set FOLDRUN_DEBUG=1 to see where."
            )
    return parser


def fail(out: Output, exc: CliError) -> None:
    """A failure: its sentence on stderr, or under --json `{"error": {"code", "message", …}}` on stdout, where a
    script reads the answer (docs/cli.md lists the fields)."""
    if out.json_mode:
        out.json({"error": exc.as_json()})
    else:
        out.error(exc.message)


def main(argv: list[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else list(argv)
    if args_list in (["--version"], ["-V"]):  # the one answer that needs no command loaded (the parser says the same)
        print(f"foldrun {foldrun.__version__}")
        return 0
    out = Output()
    parser = build_parser(out)
    Parser.json_errors = "--json" in args_list
    try:
        args, extras = parser.parse_known_args(args_list)
        if extras and getattr(args, "swallows_extra_words", False):
            args.value_on_argv = True  # never echoed: it may be a secret's value
        elif extras:
            parser.error(f"unrecognized arguments: {' '.join(extras)}")
    except SystemExit as exc:  # argparse already printed usage and its sentence
        return int(exc.code or 0)
    out.json_mode = bool(getattr(args, "json", False))
    func: Handler | None = getattr(args, "func", None)
    if func is None:
        parser.print_help(sys.stderr)
        return 2
    ctx = Context(args, out, config_module.config_dir())
    try:
        code = func(args, ctx)
        return int(code or 0)
    except CliError as exc:
        fail(out, exc)
        return exc.exit_code
    except KeyboardInterrupt:
        fail(out, CliError("Interrupted.", code="interrupted"))
        return 130
    except BrokenPipeError:
        # `foldrun log | head`: the reader left; nothing more to say.
        try:
            sys.stdout = open(os.devnull, "w")
        except OSError:
            pass
        return 0
    except Exception as exc:  # never a traceback: one sentence, and how to see more
        if os.environ.get("FOLDRUN_DEBUG"):
            raise
        # A sentence, never a class name: the fix is to look closer, so say how.
        said = f": {exc}" if str(exc) else ""
        fail(
            out,
            CliError(
                f"foldrun failed unexpectedly{said}. Run it again with FOLDRUN_DEBUG=1 to see where, "
                "and report it with that output.",
                code="unexpected",
            ),
        )
        return 1
    finally:
        ctx.close()


if __name__ == "__main__":
    sys.exit(main())
