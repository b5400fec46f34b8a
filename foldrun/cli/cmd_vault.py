"""Secrets and OAuth connections: `foldrun secrets …` and `foldrun connect …`.

A value is read from a hidden prompt (on a terminal) or from stdin (piped),
never from the command line, where it would land in shell history and in
every process listing. Nothing secret is ever printed.
"""

from __future__ import annotations

import getpass
import os
import re
import sys
from contextlib import contextmanager
from typing import Any

from .client import ApiFailure, CliError, quote_path
from .loader import laptop
from .output import short_time
from .workspace import missing_workspace

NAME_RE = re.compile(r"^[A-Z][A-Z0-9_]{0,63}$")
NAME_SENTENCE = (
    "A secret's name is UPPER_SNAKE_CASE — capital letters, digits and underscores, starting with a "
    "letter, at most 64 characters (like OPENAI_API_KEY)."
)
CONNECT_TIMEOUT = 300.0


def register(subparsers, common) -> None:
    p = subparsers.add_parser("secrets", parents=[common], help="the vault: list, set and delete secrets")
    p.add_argument("--to", metavar="WS", help="a workspace's vault (default: the account vault)")
    p.add_argument("--local", action="store_true", help="the laptop vault, for `foldrun run --local`")
    p.set_defaults(func=cmd_list)
    sub = p.add_subparsers(dest="secrets_command", metavar="<action>")

    ls = sub.add_parser("list", parents=[common], help="names, scope, who and when — never values")
    _where(ls)
    ls.set_defaults(func=cmd_list)

    st = sub.add_parser(
        "set",
        parents=[common],
        help="set a secret; the value is read from a hidden prompt or stdin, never the command line",
    )
    st.add_argument("name", metavar="NAME")
    _where(st)
    st.add_argument(
        "--host",
        action="append",
        dest="hosts",
        metavar="HOST",
        help="a host the egress proxy may send it to (repeat for more)",
    )
    st.add_argument(
        "--oauth",
        action="store_true",
        help="the value is an OAuth2 refresh recipe, as JSON: token_url, client_id, client_secret, refresh_token",
    )
    # `secrets set NAME <value>`: argparse would refuse the extra word by echoing it ("unrecognized arguments:
    # <value>") onto the terminal and into CI logs; main() swallows it for this command and cmd_set refuses with a
    # sentence that does not repeat it.
    st.set_defaults(func=cmd_set, value_on_argv=False, swallows_extra_words=True)

    rm = sub.add_parser("delete", parents=[common], help="delete a secret")
    rm.add_argument("name", metavar="NAME")
    _where(rm)
    rm.set_defaults(func=cmd_delete)

    c = subparsers.add_parser(
        "connect",
        parents=[common],
        help="connect an OAuth2 account: consent in the browser, store an auto-refreshing credential",
    )
    c.add_argument("name", metavar="NAME")
    c.add_argument(
        "--provider",
        required=True,
        help="an OAuth preset (google, github, linkedin, microsoft, slack, atlassian, hubspot, notion) or custom",
    )
    _where(c)
    c.add_argument("--client-id", help="the OAuth app's client id (default: $FOLDRUN_OAUTH_CLIENT_ID)")
    c.add_argument("--scopes", help="one space-separated string, as OAuth defines them (default: the preset's example)")
    c.add_argument("--auth-url", help="the consent URL (custom providers, or to override the preset)")
    c.add_argument("--token-url", help="the token endpoint (custom providers, or to override the preset)")
    c.add_argument("--no-browser", action="store_true", help="print the consent address instead of opening it")
    c.set_defaults(func=cmd_connect)


def _where(parser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--to", metavar="WS", default=argparse_suppress(), help="a workspace's vault")
    group.add_argument("--local", action="store_true", default=argparse_suppress(), help="the laptop vault")


def argparse_suppress():
    import argparse

    return argparse.SUPPRESS


def _check_name(name: str) -> str:
    if not NAME_RE.match(name):
        raise CliError(NAME_SENTENCE)
    return name


def _path(args, name: str | None = None) -> str:
    base = f"/api/workspaces/{quote_path(args.to)}/secrets" if getattr(args, "to", None) else "/api/secrets"
    return base + (f"/{name}" if name else "")


def _where_words(args) -> str:
    if getattr(args, "local", False):
        return "the laptop vault"
    return f"workspace {args.to}" if getattr(args, "to", None) else "the account vault"


def held_names(ctx, args) -> list[str]:
    """The secrets the vault a command names holds itself (a workspace's listing shows the account's too)."""
    if getattr(args, "local", False):
        return sorted(str(row["name"]) for row in _local(ctx).list())
    rows = ctx.api.get(_path(args)).get("results", [])
    return sorted(str(r["name"]) for r in rows if (r.get("workspace") or None) == (getattr(args, "to", None) or None))


def secret_not_found(ctx, args, name: str) -> CliError:
    """The failure that names a secret the vault does not hold, with the ones it does."""
    held, where = held_names(ctx, args), _where_words(args)
    there = f"it holds {', '.join(held)}" if held else "it holds none yet"
    return CliError(
        f"There is no secret {name} in {where}; {there}.",
        code="not_found",
        details={"what": "secret", "name": name, "where": where, "choices": held},
    )


@contextmanager
def naming_what_is_missing(ctx, args, name: str | None = None):
    """The server's bare "Not found." said as what was missing: the workspace --to named (with those the token
    sees), else the secret (with the names the vault holds)."""
    try:
        yield
    except ApiFailure as exc:
        if exc.status != 404:
            raise
        missing = missing_workspace(ctx, args.to) if getattr(args, "to", None) else None
        if missing is not None:
            raise missing from None
        if name is None:
            raise
        raise secret_not_found(ctx, args, name) from None


def _local(ctx):
    return laptop(ctx).LocalVault(ctx.config_dir)


def _read_secret(prompt: str, *, allow_empty: bool = False) -> str:
    """A hidden prompt on a terminal; otherwise everything on stdin (one
    trailing newline dropped). Never an argument."""
    if sys.stdin.isatty():
        value = getpass.getpass(prompt, stream=sys.stderr)
    else:
        value = sys.stdin.read()
        if value.endswith("\r\n"):
            value = value[:-2]
        elif value.endswith("\n"):
            value = value[:-1]
    if not value and not allow_empty:
        raise CliError("No value was given; type it at the prompt or pipe it on stdin (never as an argument).")
    return value


# list ------------------------------------------------------------------------
def cmd_list(args, ctx) -> int:
    if getattr(args, "local", False):
        rows = _local(ctx).list()
    else:
        with naming_what_is_missing(ctx, args):
            rows = ctx.api.get(_path(args)).get("results", [])
    for row in rows:
        if row.get("workspace"):
            row["scope"] = f"workspace {row['workspace']}"
        if row.get("overridden"):
            row["scope"] += " (overridden)"
    ctx.out.table(
        rows,
        [
            ("name", "NAME"),
            ("scope", "SCOPE"),
            ("kind", "KIND"),
            ("updated_by", "BY"),
            ("updated_at", "UPDATED", short_time),
        ],
        empty=f"No secrets in {_where_words(args)}.",
    )
    return 0


# set / delete ----------------------------------------------------------------
ARGV_VALUE_SENTENCE = (
    "foldrun secrets set takes no value on the command line, where it would land in shell "
    "history and process listings; nothing was stored and it is not repeated here. Type it at "
    "the prompt or pipe it on stdin (and treat a value already typed there as exposed)."
)


def cmd_set(args, ctx) -> int:
    if getattr(args, "value_on_argv", False):
        raise CliError(ARGV_VALUE_SENTENCE, exit_code=2)  # a usage error, as argparse's would be
    name = _check_name(args.name)
    value = _read_secret(f"{'OAuth recipe (JSON)' if args.oauth else 'Value'} for {name} (hidden): ")
    recipe = None
    if args.oauth:
        import json

        try:
            recipe = json.loads(value)
        except ValueError:
            raise CliError(
                "--oauth: the value must be a JSON object with token_url, client_id, client_secret and refresh_token."
            ) from None
        if not isinstance(recipe, dict):
            raise CliError(
                "--oauth: the value must be a JSON object with token_url, client_id, client_secret and refresh_token."
            )
    if getattr(args, "local", False):
        if recipe is not None:
            _local(ctx).set_oauth(name, recipe)
        else:
            _local(ctx).set(name, value)
        data: dict[str, Any] = {"name": name, "scope": "local"}
    else:
        body: dict[str, Any] = {"oauth": recipe} if recipe is not None else {"value": value}
        if args.hosts:
            body["hosts"] = args.hosts
        with naming_what_is_missing(ctx, args):
            data = ctx.api.put(_path(args, name), body)
    ctx.out.result(data, f"Set {name} in {_where_words(args)}.")
    return 0


def cmd_delete(args, ctx) -> int:
    name = _check_name(args.name)
    if getattr(args, "local", False):
        if not _local(ctx).delete(name):
            raise secret_not_found(ctx, args, name)
    else:
        with naming_what_is_missing(ctx, args, name):
            ctx.api.delete(_path(args, name))
    ctx.out.result({"name": name, "deleted": True}, f"Deleted {name} from {_where_words(args)}.")
    return 0


# connect ---------------------------------------------------------------------
def _open(url: str, ctx, no_browser: bool) -> None:
    ctx.out.note(f"Open this address to give consent:\n  {url}")
    if no_browser:
        return
    # Only connect opens a browser: webbrowser (and subprocess beneath it) would cost every `foldrun` call.
    import shlex
    import subprocess
    import webbrowser

    command = os.environ.get("BROWSER")
    if command:
        parts = shlex.split(command)
        parts = [p.replace("%s", url) for p in parts] if any("%s" in p for p in parts) else parts + [url]
        subprocess.Popen(parts, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return
    try:
        webbrowser.open(url)
    except webbrowser.Error:
        pass


def cmd_connect(args, ctx) -> int:
    # Only connect listens for a redirect: its own imports, not paid by every `foldrun` call.
    import secrets as pysecrets
    import threading

    local = laptop(ctx)
    oauth = local.oauth
    name = _check_name(args.name)
    preset = oauth.OAUTH_PRESETS.get(args.provider)
    if preset is None and args.provider != "custom":
        raise CliError(
            f"Unknown OAuth provider '{args.provider}'; the presets are "
            f"{', '.join(sorted(oauth.OAUTH_PRESETS))}, or custom with --auth-url and --token-url."
        )
    auth_url = args.auth_url or (preset.auth_url if preset else None)
    token_url = args.token_url or (preset.token_url if preset else None)
    if not auth_url or not token_url:
        raise CliError("A custom provider needs --auth-url and --token-url.")
    client_id = args.client_id or os.environ.get("FOLDRUN_OAUTH_CLIENT_ID")
    if not client_id:
        raise CliError(
            "Give the OAuth app's --client-id (register http://localhost:8642/callback as its redirect URL)."
        )
    client_secret = _read_secret(
        f"Client secret for {args.provider} (hidden; empty for a public client): ", allow_empty=True
    )
    scopes = args.scopes if args.scopes is not None else (preset.scopes if preset else "")
    if not getattr(args, "local", False):
        ctx.api  # fail before the browser opens when not signed in
    port = int(os.environ.get("FOLDRUN_CONNECT_PORT") or oauth.CLI_PORT)
    redirect_uri = f"http://localhost:{port}/callback"
    verifier, challenge = oauth.pkce_pair() if (preset.pkce if preset else True) else (None, None)
    state = pysecrets.token_urlsafe(24)
    try:
        server, handler = local.redirect_catcher(port)
    except OSError:
        raise CliError(f"Port {port} is busy; close whatever listens on localhost:{port} and try again.") from None
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
    thread.start()
    try:
        _open(
            oauth.consent_url(
                auth_url,
                client_id=client_id,
                redirect_uri=redirect_uri,
                scopes=scopes,
                state=state,
                challenge=challenge,
                extra=preset.extra if preset else None,
            ),
            ctx,
            args.no_browser,
        )
        timeout = float(os.environ.get("FOLDRUN_CONNECT_TIMEOUT") or CONNECT_TIMEOUT)
        if not handler.done.wait(timeout):
            raise CliError(f"No answer from the consent screen within {int(timeout)}s; nothing was stored.")
    finally:
        server.shutdown()
        server.server_close()
    answer_params = handler.result
    if answer_params.get("state") != state:
        raise CliError("The redirect carried the wrong state (another tab or an old link?); nothing was stored.")
    if answer_params.get("error"):
        raise CliError(f"The provider did not grant access ({answer_params['error']}); nothing was stored.")
    # None: foldrun.net's "oauth" role, as the server's exchange goes.
    try:
        answer = oauth.exchange_code(
            None,
            name=name,
            token_url=token_url,
            code=answer_params.get("code", ""),
            redirect_uri=redirect_uri,
            client_id=client_id,
            client_secret=client_secret or None,
            verifier=verifier,
        )
    except oauth.OAuthError as exc:
        raise CliError(exc.message[0].upper() + exc.message[1:] + "; nothing was stored.") from None
    recipe = oauth.recipe_from_answer(
        answer, token_url=token_url, client_id=client_id, client_secret=client_secret or None
    )
    if getattr(args, "local", False):
        _local(ctx).set_oauth(name, recipe)
    else:
        ctx.api.put(_path(args, name), {"oauth": recipe})
    where = _where_words(args)
    data = {
        "name": name,
        "where": where,
        "refreshable": bool(answer.refresh_token),
        "expires_at": answer.expires_at.isoformat() if answer.expires_at else None,
    }
    ctx.out.result(data, oauth.stored_sentence(name, where, answer))
    return 0
