from tests.cli.conftest import cli, foldrun_home, signed_in_as  # noqa: F401
from tests.fakes.conftest_plugin import echo_server, fake_oauth, fake_provider  # noqa: F401
