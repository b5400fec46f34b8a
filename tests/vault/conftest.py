from tests.fakes.conftest_plugin import fake_provider, fake_oauth  # noqa: F401
