"""The embedded default: one laptop, SQLite, the filesystem broker."""

from .base import *  # noqa: F401,F403
from .base import DATA_DIR, env_bool

DEBUG = env_bool("DJANGO_DEBUG", True)
FOLDRUN_ALLOW_PRIVATE_URLS = env_bool("FOLDRUN_ALLOW_PRIVATE_URLS", True)
DATA_DIR.mkdir(parents=True, exist_ok=True)
(DATA_DIR / "static").mkdir(exist_ok=True)  # WhiteNoise warns about a missing STATIC_ROOT
