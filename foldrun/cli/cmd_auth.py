"""Signing in and out: version, login, logout, whoami, tokens."""

from __future__ import annotations

import getpass
import os
import sys

import foldrun

from . import config as config_module
from .client import ApiFailure, CliError
from .output import short_time


def register(subparsers, common) -> None:
    p = subparsers.add_parser("version", parents=[common], help="the CLI's version, and the server's when signed in")
    p.set_defaults(func=cmd_version)

    p = subparsers.add_parser("login", parents=[common], help="sign in to a foldrun server and keep a token")
    p.add_argument("--url", help="the server, e.g. https://foldrun.example.com (default: $FOLDRUN_URL or the last one)")
    p.add_argument("--token-name", help="a name for the token, shown by `foldrun tokens` (default: cli@<this host>)")
    p.add_argument(
        "--token-stdin",
        action="store_true",
        help="store an existing token read from stdin instead of asking for a password",
    )
    p.set_defaults(func=cmd_login)

    p = subparsers.add_parser("logout", parents=[common], help="revoke and forget the stored token")
    p.set_defaults(func=cmd_logout)

    p = subparsers.add_parser("whoami", parents=[common], help="who the stored token signs in as")
    p.set_defaults(func=cmd_whoami)

    p = subparsers.add_parser("tokens", parents=[common], help="list your API tokens")
    p.set_defaults(func=cmd_tokens)
    sub = p.add_subparsers(dest="tokens_command", metavar="<action>")
    revoke = sub.add_parser("revoke", parents=[common], help="revoke a token by id (tok_…)")
    revoke.add_argument("token_id", metavar="TOKEN_ID")
    revoke.set_defaults(func=cmd_tokens_revoke)


# version ---------------------------------------------------------------
def cmd_version(args, ctx) -> int:
    data: dict = {"client": foldrun.__version__}
    lines = [f"foldrun {foldrun.__version__}"]
    code = 0
    if ctx.config.url:
        try:
            with ctx.client(ctx.config.url) as client:
                server = client.get("/api/version")
        except ApiFailure as exc:
            data["server_error"] = exc.message
            ctx.out.note(f"server: {exc.message}")
            code = 1
        else:
            server = server if isinstance(server, dict) else {}
            data["server"] = server
            text = f"server {server.get('version', '?')} at {ctx.config.url}"
            if server.get("api") is not None:
                text += f" (api {server['api']})"
            lines.append(text)
            browsers = server.get("browser_versions") or server.get("browsers")
            if isinstance(browsers, dict) and browsers:
                lines.append("browsers: " + ", ".join(f"{k} {v}" for k, v in sorted(browsers.items())))
            elif isinstance(browsers, list) and browsers:
                lines.append("browsers: " + ", ".join(str(b) for b in browsers))
    ctx.out.result(data, lines)
    return code


# login / logout ----------------------------------------------------------
def _prompt(text: str) -> str:
    """Ask on stderr, read a line from stdin (so stdout stays clean). Piped
    answers get no prompt: nobody is there to read it."""
    if _isatty(sys.stdin):
        sys.stderr.write(text)
        sys.stderr.flush()
    answer = sys.stdin.readline()
    if not answer:
        raise CliError("No answer on stdin; sign in from a terminal, or use --token-stdin.")
    return answer.strip()


def _isatty(stream) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _login_url(args, ctx) -> str:
    if args.url:
        return config_module.normalise_url(args.url)
    if ctx.config.url:
        return ctx.config.url
    if not _isatty(sys.stdin):  # stdin may be carrying the token; never take a URL from it by surprise
        raise CliError("Name the server with --url URL (or set $FOLDRUN_URL).")
    answer = _prompt("foldrun server URL: ")
    if not answer:
        raise CliError("A server URL is needed; pass --url.")
    return config_module.normalise_url(answer)


def cmd_login(args, ctx) -> int:
    url = _login_url(args, ctx)
    if args.token_stdin:
        token = sys.stdin.readline().strip()
        if not token:
            raise CliError("No token on stdin.")
        token_id = None
    else:
        email = _prompt("Email: ")
        password = getpass.getpass("Password: ")
        if not email or not password:
            raise CliError("An email and a password are needed to sign in.")
        name = args.token_name or f"cli@{os.uname().nodename or 'laptop'}"
        with ctx.client(url) as client:
            answer = client.post("/api/auth/token", {"email": email, "password": password, "name": name})
        if not isinstance(answer, dict) or not str(answer.get("token", "")).startswith("frt_"):
            raise CliError(f"{url} did not hand back a token; is it a foldrun server?")
        token, token_id = answer["token"], answer.get("id")
    # Ask who the token is before keeping it: a wrong paste fails here, not later.
    with ctx.client(url, token) as client:
        me = client.get("/api/me")
    stored = config_module.read_file(ctx.config_dir)
    stored.update({"url": url, "token": token})
    if token_id:
        stored["token_id"] = token_id
    else:
        stored.pop("token_id", None)
    path = config_module.write_file(stored, ctx.config_dir)
    who = _who(me)
    ctx.out.result({"url": url, "token_id": token_id, "me": me, "config": str(path)}, f"Signed in to {url} as {who}.")
    if os.environ.get("FOLDRUN_TOKEN") or os.environ.get("FOLDRUN_URL"):
        ctx.out.note("Note: $FOLDRUN_URL or $FOLDRUN_TOKEN is set and overrides the stored sign-in.")
    return 0


def cmd_logout(args, ctx) -> int:
    stored = config_module.read_file(ctx.config_dir)
    url = stored.get("url") or ctx.config.url
    if not stored.get("token"):
        ctx.out.result({"signed_out": False}, "You were not signed in.")
        return 0
    revoked = False
    if stored.get("token_id") and url:
        # Revoke it on the server too, so a copy of the file is worth nothing.
        try:
            with ctx.client(config_module.normalise_url(url), stored["token"]) as client:
                client.delete(f"/api/tokens/{stored['token_id']}")
            revoked = True
        except ApiFailure as exc:
            ctx.out.note(f"The token could not be revoked on the server ({exc.message}); it was forgotten here.")
    stored.pop("token", None)
    stored.pop("token_id", None)
    config_module.write_file(stored, ctx.config_dir)
    where = f" of {url}" if url else ""
    ctx.out.result({"signed_out": True, "revoked": revoked}, f"Signed out{where}.")
    if os.environ.get("FOLDRUN_TOKEN"):
        ctx.out.note("Note: $FOLDRUN_TOKEN is still set, so commands still sign in with it.")
    return 0


def _who(me) -> str:
    if not isinstance(me, dict):
        return "?"
    account = me.get("account") or {}
    text = str(me.get("email") or "?")
    if account.get("name"):
        text += f" in {account['name']}"
        if account.get("role"):
            text += f" ({account['role']})"
    return text


def cmd_whoami(args, ctx) -> int:
    me = ctx.api.get("/api/me")
    ctx.out.result(me, f"{_who(me)} at {ctx.config.url}")
    return 0


# tokens ------------------------------------------------------------------
TOKEN_COLUMNS = [
    ("id", "ID"),
    ("name", "NAME"),
    ("hint", "STARTS", lambda v: f"{v}…" if v else "-"),
    ("state", "STATE"),
    ("created_at", "CREATED", short_time),
    ("last_used_at", "LAST USED", short_time),
    ("expires_at", "EXPIRES", short_time),
]


def cmd_tokens(args, ctx) -> int:
    tokens = ctx.api.list("/api/tokens")
    ctx.out.table(tokens, TOKEN_COLUMNS, empty="No tokens.")
    return 0


def cmd_tokens_revoke(args, ctx) -> int:
    token_id = args.token_id
    if not token_id.startswith("tok_"):
        raise CliError(f"{token_id!r} is not a token id; ids look like tok_… (see `foldrun tokens`).")
    ctx.api.delete(f"/api/tokens/{token_id}")
    if ctx.config.token_source == "file" and config_module.read_file(ctx.config_dir).get("token_id") == token_id:
        ctx.out.note("That was the token this CLI signs in with; run `foldrun login` to sign in again.")
    ctx.out.result({"revoked": token_id}, f"Revoked {token_id}.")
    return 0
