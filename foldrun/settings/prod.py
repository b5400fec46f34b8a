"""Production: every secret and service named by the environment, nothing defaulted."""
from .base import *  # noqa: F401,F403
from .base import env_str, env_url, env_list

SECRET_KEY = env_str("DJANGO_SECRET_KEY")
DEBUG = False
if SECRET_KEY.startswith("dev-insecure"):
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("DJANGO_SECRET_KEY must be set to a real secret in production.")
CELERY_BROKER_URL = env_url("CELERY_BROKER_URL", None, schemes=("redis", "rediss", "amqp"))
if CELERY_BROKER_URL is None:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("CELERY_BROKER_URL is not set; production needs Redis.")
FOLDRUN_VAULT_KEYS = env_list("FOLDRUN_VAULT_KEYS")
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "anymail.backends.resend.EmailBackend")
# The platform's own Resend key (deploy/env.example); an account's own key is read from its vault instead.
ANYMAIL = {"RESEND_API_KEY": env_str("RESEND_API_KEY", "")}
