"""Hyperbrowser: extract — a page read to JSON by schema or prompt, as a job polled to its end."""

from __future__ import annotations

import time

from ..errors import WebToolError
from .base import Auth, Call, adapter

POLL = 1.0


@adapter(
    "extract",
    "hyperbrowser",
    base="https://api.hyperbrowser.ai",
    auth=Auth("header", "x-api-key"),
    page="https://hyperbrowser.ai/docs/api-reference/get-extract-job-status-and-results",
    matched="2026-12-01",
)
def extract(call: Call, url: str, schema: dict | None, prompt: str | None) -> object:
    body: dict = {"urls": [url]}
    if schema:
        body["schema"] = schema
    if prompt:
        body["prompt"] = prompt
    job = str(call.json("POST", "/api/extract", json=body).get("jobId") or "")
    if not job:
        raise WebToolError("hyperbrowser did not say which extract job it started")
    deadline = time.monotonic() + max(call.tool.fetch_timeout * 6, 120.0)
    while True:
        data = call.json("GET", f"/api/extract/{job}")
        if data.get("status") == "completed":
            return data.get("data")
        if data.get("status") == "failed":
            raise WebToolError(
                f"hyperbrowser could not extract {url}: {call.hide(str(data.get('error') or 'failed'))[:300]}"
            )
        if time.monotonic() > deadline:
            raise WebToolError(f"hyperbrowser's extract of {url} had not finished in time")
        time.sleep(POLL)
