"""The demo desk shipped with the package: `manage.py seed_demo` writes it."""

from pathlib import Path

RANK_DESK = Path(__file__).resolve().parent / "rank-desk"
