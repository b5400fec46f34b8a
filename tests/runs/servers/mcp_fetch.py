"""A tiny MCP server over stdio for the tests: `fetch` (GET a URL the way an ordinary client does, honouring
HTTP_PROXY) and `proxy` (what HTTP_PROXY it was started with)."""

import os
import urllib.error
import urllib.request

from mcp.server.mcpserver import MCPServer

server = MCPServer("fetcher")


@server.tool()
def fetch(url: str) -> str:
    """GET `url` and say what came back."""
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            return "reached " + answer.read().decode()
    except urllib.error.HTTPError as err:
        return f"HTTP {err.code} {err.read().decode()}"
    except Exception as exc:  # noqa: BLE001 - the test reads what went wrong
        return f"error {exc}"


@server.tool()
def proxy() -> str:
    """The HTTP_PROXY this server was started with."""
    return os.environ.get("HTTP_PROXY", "none")


if __name__ == "__main__":
    server.run("stdio")
