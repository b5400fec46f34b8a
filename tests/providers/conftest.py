from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
