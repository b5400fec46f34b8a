from tests.fakes.conftest_plugin import echo_server, fake_oauth, fake_provider  # noqa: F401
