"""The Django project has the layout DESIGN.md draws, and every requirement is pinned to one version.
(Issue 2, item 1.)"""

from __future__ import annotations

import re
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2]


def test_the_layout_of_design_md_is_there():
    for path in [
        "manage.py",
        "foldrun/settings/base.py",
        "foldrun/settings/dev.py",
        "foldrun/settings/test.py",
        "foldrun/settings/prod.py",
        "foldrun/urls.py",
        "foldrun/celery.py",
        "accounts/models.py",
        "library/models.py",
        "runs/models.py",
        "notify/models.py",
        "vault/models.py",
        "templates",
        "tests/conftest.py",
        "requirements.txt",
    ]:
        assert (ROOT / path).exists(), path


def test_every_requirement_is_pinned_to_one_version():
    lines = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()]
    requirements = [line for line in lines if line and not line.startswith("#")]
    assert requirements
    assert [line for line in requirements if not re.fullmatch(r"[A-Za-z0-9_.\-\[\]]+==[A-Za-z0-9_.]+", line)] == []
