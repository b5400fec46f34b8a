"""foldrun: AI agents kept as plain markdown files, run on a schedule."""
__version__ = "0.1.0"
