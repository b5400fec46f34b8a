"""Fixtures the engine tests share: the loopback model server."""

from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
