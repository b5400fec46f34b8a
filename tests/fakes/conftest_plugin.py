"""Fixtures for the loopback stand-ins. Use them from a test module or a
conftest with `from tests.fakes.conftest_plugin import fake_provider  # noqa: F401`."""

from __future__ import annotations

import pytest

from tests.fakes.providers import FakeProvider


@pytest.fixture
def fake_provider():
    with FakeProvider() as fake:
        yield fake


@pytest.fixture
def fake_oauth():
    from tests.fakes.oauth import FakeOAuth

    with FakeOAuth() as fake:
        yield fake


@pytest.fixture
def echo_server():
    from tests.fakes.echo import EchoServer

    with EchoServer() as echo:
        yield echo
