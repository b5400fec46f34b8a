"""`foldrun mcp`: the server's MCP tools for a client that only speaks stdio.

A local bridge: JSON-RPC lines on stdin go to the signed-in server's `/mcp`
(Streamable HTTP, with the stored token as `Authorization: Bearer`), and what
the server answers comes back on stdout, one message a line. Nothing else is
written to stdout; notes go to stderr. The server is the one `foldrun login`
stored (or `$FOLDRUN_URL` / `$FOLDRUN_TOKEN`); the connection goes through
foldrun.net like every connection to an address a person named. The bridge
itself is in foldrun/cli/mcp_bridge.py, loaded only when this command runs.
"""

from __future__ import annotations

import argparse
import sys

from .loader import mcp_bridge


def register(subparsers, common) -> None:
    p = subparsers.add_parser(
        "mcp", parents=[common], help="serve the server's MCP tools on stdin/stdout (for stdio-only MCP clients)"
    )
    p.set_defaults(func=cmd_mcp)


def endpoint(url: str) -> str:
    return url.rstrip("/") + "/mcp"


def cmd_mcp(args: argparse.Namespace, ctx) -> int:
    # Not signed in, a server that does not answer, a revoked token: the CLI's own sentence, before stdio is
    # touched (over the relay a client would only see "Server returned an error response").
    ctx.api.get("/api/me")
    sys.stderr.write(f"foldrun mcp: relaying stdio to {endpoint(ctx.config.url)}\n")
    mcp_bridge(ctx).serve(endpoint(ctx.config.url), ctx.config.token)
    return 0
