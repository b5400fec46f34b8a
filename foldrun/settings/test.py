"""Tests: the same database and broker the environment names (PostgreSQL and
Redis in CI, SQLite and the filesystem broker by default)."""
from .base import *  # noqa: F401,F403
from .base import DATA_DIR

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
ACCOUNT_EMAIL_VERIFICATION = "none"
# Loopback stand-ins for providers, receivers and search APIs live on 127.0.0.1.
FOLDRUN_ALLOW_PRIVATE_URLS = True
FOLDRUN_VAULT_KEYS = ["dGVzdC1rZXktZm9yLWZvbGRydW4tdGVzdHMtMzJieXQ="]
DATA_DIR.mkdir(parents=True, exist_ok=True)
