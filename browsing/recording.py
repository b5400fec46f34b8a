"""A recorded session's video: the keeper's screencast frames, encoded by the one WebM encoder the browse tool's
`video` uses too (foldrun/web/browse/webm.py)."""

from foldrun.web.browse.webm import MAX_SIDE, encode

__all__ = ["MAX_SIDE", "encode"]
