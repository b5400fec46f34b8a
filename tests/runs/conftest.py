"""Fixtures the runs tests share: the loopback model server and the in-process CLI."""

from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
