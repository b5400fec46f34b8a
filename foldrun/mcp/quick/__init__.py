"""The quick tools' parts: open a page (`load`), read it (`read`), the tools' work on it (`work`, `crawl`), and
their input schemas (`schemas`). The tools themselves are declared in foldrun/mcp/tools/quick.py."""
