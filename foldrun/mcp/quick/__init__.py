"""The quick tools' parts: open a page (`load`), read it (`read`), the tools' work on it (`work`, `crawl`).
The tools themselves, their schemas beside their handlers, are declared in foldrun/mcp/tools/quick.py."""
