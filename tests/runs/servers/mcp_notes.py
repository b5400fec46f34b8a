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


def serve_http(port: int, token: str) -> None:
    """The same server over streamable HTTP; every request must carry `Authorization: Bearer <token>`."""
    import uvicorn
    from starlette.responses import PlainTextResponse

    app = server.streamable_http_app()

    async def guarded(scope, receive, send):
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await PlainTextResponse("no", status_code=401)(scope, receive, send)
                return
        await app(scope, receive, send)

    uvicorn.run(guarded, host="127.0.0.1", port=port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    import sys

    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        serve_http(int(sys.argv[2]), sys.argv[3])
    else:
        server.run("stdio")
