from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from foldrun.web import WebTool
from foldrun.web.browse import BrowserPool
from tests.fakes.website import TestSite
from tests.web.fakes import FakeBrave, FakeJina, FakeSearxng, FakeTavily, Site


@pytest.fixture(scope="module")
def site():
    with Site() as server:
        yield server


@pytest.fixture
def searxng():
    with FakeSearxng() as server:
        yield server


@pytest.fixture
def brave():
    with FakeBrave() as server:
        yield server


@pytest.fixture
def tavily():
    with FakeTavily() as server:
        yield server


@pytest.fixture
def jina():
    with FakeJina() as server:
        yield server


@pytest.fixture(scope="session")
def http_client():
    with httpx.Client() as client:
        yield client


class Recorder:
    def __init__(self) -> None:
        self.events: list[dict] = []
        self.lines: list[str] = []

    def text(self) -> str:
        return repr(self.events) + "\n".join(self.lines)


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
def make_tool(tmp_path: Path, http_client, recorder):
    made: list[WebTool] = []

    def make(config: dict | None = None, **options: Any) -> WebTool:
        options.setdefault("allow_private", True)
        options.setdefault("test_mode", False)
        tool = WebTool(
            config or {},
            http=http_client,
            sandbox=options.pop("sandbox", tmp_path),
            trace=recorder.events.append,
            log=recorder.lines.append,
            **options,
        )
        made.append(tool)
        return tool

    yield make
    for tool in made:
        tool.close()


@pytest.fixture(scope="module")
def browsers():
    """One browser pool for a test module's calls (a module may keep its own in a fixture of the same name)."""
    pool = BrowserPool()
    yield pool
    pool.close()


@pytest.fixture
def browse(make_tool, browsers):
    """`browse(config, **options)`: a web tool whose browse calls run on the module's pool."""

    def make(config=None, **options):
        return make_tool(config, browsers=browsers, **options)

    return make


@pytest.fixture(scope="module")
def pages_site(request):
    """The test module's `ROUTES`, served on loopback for its browse calls."""
    with TestSite(request.module.ROUTES) as server:
        yield server
