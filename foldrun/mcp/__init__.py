"""foldrun's MCP server: the account's browser, tasks, tests and skills as MCP tools at /mcp.

It sits on top, beside `foldrun/api.py`: it may import the Django apps, and nothing
imports it but `foldrun.asgi`.
"""
