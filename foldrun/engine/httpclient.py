"""The process's shared client for a step's calls: foldrun.net's guarded "http_tool" role.

One per process (building one costs ~30 ms); no cookies kept between calls; every
connection checked at connect time on the address it goes to.
"""

from __future__ import annotations

import httpx

from foldrun import net


def shared_http() -> httpx.Client:
    """The guarded shared client (thread-safe)."""
    return net.client("http_tool")
