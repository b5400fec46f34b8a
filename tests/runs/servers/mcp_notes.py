"""A tiny MCP server over stdio for the tests: `add` and `whoami` (reads NOTES_TOKEN from its env)."""
import os

from mcp.server.mcpserver import MCPServer

server = MCPServer("notes")


@server.tool()
def add(a: int, b: int) -> str:
    """Add two numbers."""
    return str(a + b)


@server.tool()
def whoami() -> str:
    """Say which token the server was started with."""
    return "token " + os.environ.get("NOTES_TOKEN", "none")


if __name__ == "__main__":
    server.run("stdio")
