from django.conf import settings


def test_the_platform_sends_as_the_spec_says():
    assert settings.DEFAULT_FROM_EMAIL == "foldrun <hello@foldrun.io>"
