"""Every model's schema is in its app's migrations: a field moved into a mixin (foldrun.leases.Leased) or changed
without its migration is a failure here, not a surprise at the next deploy."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_makemigrations_finds_no_change_to_write():
    out = io.StringIO()
    try:
        call_command("makemigrations", check=True, dry_run=True, stdout=out, stderr=out)
    except SystemExit:
        pytest.fail(f"a model changed without its migration:\n{out.getvalue()}")
    assert "No changes detected" in out.getvalue()
