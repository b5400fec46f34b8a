"""Production: every secret and service named by the environment, nothing defaulted."""

from .base import *  # noqa: F401,F403
from .base import env_bool, env_int, env_list, env_str, env_url

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
# Behind a TLS-terminating proxy (deploy/: the proxy speaks HTTPS, gunicorn plain HTTP): a request is secure when
# the proxy says so in X-Forwarded-Proto — so the proxy must set that header itself and drop a client's own.
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
# A plain-HTTP request is redirected to HTTPS, except the probes that speak plain HTTP to the web process
# directly: the load balancer's /api/health and deploy/compose.yaml's healthcheck on /api/version
# (docs/operating.md, "HTTPS and the headers"). FOLDRUN_SSL_REDIRECT=0 leaves the redirect to the proxy.
SECURE_SSL_REDIRECT = env_bool("FOLDRUN_SSL_REDIRECT", True)
SECURE_REDIRECT_EXEMPT = [r"^api/health$", r"^api/version$"]
# HSTS: browsers keep to HTTPS for this many seconds after a visit (a year by default; start lower — an hour —
# on a new domain, since a browser that has seen it cannot be told otherwise until it runs out; 0 sends none).
SECURE_HSTS_SECONDS = env_int("FOLDRUN_HSTS_SECONDS", 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("FOLDRUN_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_bool("FOLDRUN_HSTS_PRELOAD", True)
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "anymail.backends.resend.EmailBackend")
# The platform's own Resend key (deploy/env.example); an account's own key is read from its vault instead.
ANYMAIL = {"RESEND_API_KEY": env_str("RESEND_API_KEY", "")}
