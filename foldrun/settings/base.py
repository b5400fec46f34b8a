"""Settings shared by every environment. Values come from the environment."""

from __future__ import annotations

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from foldrun.contract.payload import MAX_FILE_BYTES as _CONTRACT_MAX_FILE_BYTES
from foldrun.env import env_bool, env_int, env_list, env_str, env_url

BASE_DIR = Path(__file__).resolve().parent.parent.parent
DATA_DIR = Path(env_str("FOLDRUN_DATA_DIR", str(BASE_DIR / "var")))

SECRET_KEY = env_str("DJANGO_SECRET_KEY", "dev-insecure-only-for-the-embedded-default")
DEBUG = env_bool("DJANGO_DEBUG", False)
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]", "testserver"])

# The public address people reach the dashboard on. Links that act without a
# login (approve/reject, unsubscribe) are only minted when this is set.
FOLDRUN_PUBLIC_URL = env_url("FOLDRUN_PUBLIC_URL", None, schemes=("http", "https"))
FOLDRUN_TIMEZONE = env_str("FOLDRUN_TIMEZONE", "UTC")
# The install's own search engine (a SearXNG URL): every account's default for `web action=search`
# until the account sets its own (Settings, PATCH /api/account, `foldrun account search-engine set`).
FOLDRUN_SEARXNG_URL = env_url("FOLDRUN_SEARXNG_URL", None, schemes=("http", "https"))
# Lets user-supplied URLs reach loopback/private addresses: tests and laptops only.
FOLDRUN_ALLOW_PRIVATE_URLS = env_bool("FOLDRUN_ALLOW_PRIVATE_URLS", False)
# Off: a step's programs reach public addresses only through the egress proxy even where the install opted in
# above (a model on the private network, say). It can only narrow FOLDRUN_ALLOW_PRIVATE_URLS, never widen it.
FOLDRUN_PROGRAMS_ALLOW_PRIVATE_URLS = env_bool("FOLDRUN_PROGRAMS_ALLOW_PRIVATE_URLS", True)
# The contract's own limit by default, so `foldrun check` on a laptop refuses the same files as the server.
FOLDRUN_MAX_FILE_BYTES = env_int("FOLDRUN_MAX_FILE_BYTES", _CONTRACT_MAX_FILE_BYTES, minimum=1)
FOLDRUN_WEBHOOK_DISABLE_DAYS = env_int("FOLDRUN_WEBHOOK_DISABLE_DAYS", 3, minimum=1)
# What a workspace keeps of one tool's Tool Tests (its state/ and outputs/, runs/scratch.py), in bytes.
FOLDRUN_TOOL_SCRATCH_BYTES = env_int("FOLDRUN_TOOL_SCRATCH_BYTES", 20 * 1024 * 1024, minimum=1)

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "django_celery_beat",
    "anymail",
    "allauth",
    "allauth.account",
    "django_htmx",
    # django-csp: the Content-Security-Policy header (CSPMiddleware below, CONTENT_SECURITY_POLICY), and its checks.
    "csp",
    "accounts",
    "library",
    "runs",
    "notify",
    "vault",
    "browsing",
    "foldrun.net",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Every response carries CONTENT_SECURITY_POLICY (below).
    "csp.middleware.CSPMiddleware",
    # Static files straight from the web server (gunicorn has no static handler), compressed, cached.
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "allauth.account.middleware.AccountMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

# The Content-Security-Policy every page carries, on every setting (dev and tests too, so a page that breaks under
# it breaks in the tests): scripts and styles only from this site's own files — no inline script or style, no
# eval, nothing from another origin. The pages keep their JavaScript in static/ and htmx's indicator styles in
# foldrun.css (base.html turns htmx's injected <style> off). A step's browser frame is an <img> of this site;
# `data:` is the favicon placeholder. No form-action: connecting an OAuth app posts a form that redirects to
# the provider's own site, which a browser checks against form-action too.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "media-src": ["'self'"],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

ROOT_URLCONF = "foldrun.urls"
WSGI_APPLICATION = "foldrun.wsgi.application"

# The site's templates and static files: templates/ and static/ at the checkout's root (DESIGN.md), reached
# through foldrun/site/'s links to them, which an installed wheel carries as files (pyproject.toml).
SITE_DIR = Path(__file__).resolve().parent.parent / "site"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [SITE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context.current_account",
            ],
        },
    },
]


def _database() -> dict:
    default = f"sqlite:///{DATA_DIR / 'foldrun.sqlite3'}"
    url = env_url("DATABASE_URL", default, schemes=("sqlite", "postgres", "postgresql"))
    try:
        # the web server sets 0 on its own settings at its start (foldrun.asgi says why); a worker or beat keeps one a minute.
        config = dj_database_url.parse(url, conn_max_age=env_int("FOLDRUN_DB_CONN_MAX_AGE", 60, minimum=0))
    except ValueError as exc:  # dj_database_url's ParseError and UnknownSchemeError are ValueErrors
        raise ImproperlyConfigured(f"DATABASE_URL could not be read: {exc}") from None
    if config["ENGINE"].endswith("sqlite3"):
        config["OPTIONS"] = {"timeout": 20, "transaction_mode": "IMMEDIATE"}
        config["CONN_MAX_AGE"] = 0
    else:
        # Django's stock PostgreSQL backend. A kept connection is checked at its first use in each task or
        # request, so one the server dropped (a restart) is replaced there rather than failing the work.
        config["ENGINE"] = "django.db.backends.postgresql"
        config["CONN_HEALTH_CHECKS"] = True
    return config


# The web process's connection pool (PostgreSQL only; foldrun.asgi and foldrun.wsgi apply it to their own
# settings, so a worker or beat keeps its one connection): at most FOLDRUN_DB_POOL_MAX connections per web
# process, whatever the requests in flight; a request that finds them all busy waits up to
# FOLDRUN_DB_POOL_TIMEOUT seconds for one (psycopg_pool's `timeout`) before it fails. docs/operating.md says how to
# size PostgreSQL's max_connections against it.
FOLDRUN_DB_POOL = {
    "min_size": env_int("FOLDRUN_DB_POOL_MIN", 2, minimum=0),
    "max_size": env_int("FOLDRUN_DB_POOL_MAX", 10, minimum=1),
    "timeout": env_int("FOLDRUN_DB_POOL_TIMEOUT", 30, minimum=1),
}
if FOLDRUN_DB_POOL["min_size"] > FOLDRUN_DB_POOL["max_size"]:
    raise ImproperlyConfigured("FOLDRUN_DB_POOL_MIN must not be more than FOLDRUN_DB_POOL_MAX.")


DATABASES = {"default": _database()}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    "django.contrib.auth.backends.ModelBackend",
    "allauth.account.auth_backends.AuthenticationBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

# allauth: email is the identity; no usernames shown to anyone.
ACCOUNT_LOGIN_METHODS = {"email"}
ACCOUNT_SIGNUP_FIELDS = ["email*", "password1*", "password2*"]
ACCOUNT_USER_MODEL_USERNAME_FIELD = "username"
ACCOUNT_UNIQUE_EMAIL = True
ACCOUNT_EMAIL_VERIFICATION = env_str("FOLDRUN_EMAIL_VERIFICATION", "optional")
if ACCOUNT_EMAIL_VERIFICATION not in {"none", "optional", "mandatory"}:
    raise ImproperlyConfigured("FOLDRUN_EMAIL_VERIFICATION must be one of none, optional, mandatory.")
ACCOUNT_ADAPTER = "accounts.adapter.AccountAdapter"
LOGIN_REDIRECT_URL = "/"
LOGIN_URL = "/accounts/login/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = DATA_DIR / "static"
STATICFILES_DIRS = [SITE_DIR / "static"]
# Gzip copies beside the originals at collectstatic; no manifest, so a page never fails on a file
# collectstatic has not seen (tests and `manage.py runserver` serve from the finders).
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "accounts.auth.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "foldrun.openapi.AutoSchema",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    "EXCEPTION_HANDLER": "foldrun.api.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "foldrun API",
    "DESCRIPTION": "Accounts, workspaces, library revisions and runs.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request and response shapes apart (a field a client sends is not always one it reads back).
    "COMPONENT_SPLIT_REQUEST": True,
    # A PATCH body is documented as its serializer says (RoleIn's role is required), not with every field optional.
    "COMPONENT_SPLIT_PATCH": False,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "library.serializers.openapi_file_variants",
        "browsing.serializers.openapi_devices",
    ],
    # Operation ids and tags start after /api/ or /v1/ (tokens_destroy, not api_tokens_destroy).
    "SCHEMA_PATH_PREFIX": r"/(api|v1)",
    # One name per enum wherever it appears (a member's role, an invite's, a role a request asks for).
    "ENUM_NAME_OVERRIDES": {
        "Role": "accounts.models.Role",
        "SessionEngine": "browsing.options.ENGINES",
        "RunStatus": "runs.models.RunStatus",
        "RunVerdict": "runs.models.Verdict",
        "StepStatus": "runs.models.StepStatus",
        "ApprovalState": "runs.models.ApprovalState",
        "DeliveryStatus": "notify.models.DeliveryStatus",
        "ProbeVerdict": "vault.models.Verdict",
        "RunKind": "runs.models.RunKind",
        "TraceKind": "runs.models.TraceKind",
        "ApprovalKind": "runs.models.ApprovalKind",
        "SecretKind": "vault.models.SecretKind",
        "RunTrigger": "runs.models.Trigger",
        "StartTrigger": ["api", "cli", "manual"],
        "BrowserSessionStatus": "browsing.models.SessionStatus",
        "SkillRunStatus": "browsing.models.SkillStatus",
    },
}

# Celery. The embedded default is kombu's filesystem transport: no service to
# install, and several processes (web, worker, beat) on one laptop share it.
CELERY_BROKER_URL = env_url(
    "CELERY_BROKER_URL", "filesystem://", schemes=("filesystem", "redis", "rediss", "memory", "sqla+sqlite", "amqp")
)
CELERY_BROKER_TRANSPORT_OPTIONS: dict = {}
if CELERY_BROKER_URL.startswith("filesystem"):
    _queue_dir = DATA_DIR / "broker"
    for _sub in ("queue", "processed", "control"):
        (_queue_dir / _sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_queue_dir / "queue"),
        "data_folder_out": str(_queue_dir / "queue"),
        "processed_folder": str(_queue_dir / "processed"),
        "store_processed": False,
        "control_folder": str(_queue_dir / "control"),
    }
CELERY_TASK_DEFAULT_QUEUE = env_str("FOLDRUN_QUEUE", "foldrun")
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Celery's Django fixup closes every database connection before and after each task unless this is set, so
# each task paid a new connection (and a new server process's cold catalog caches) — most of a short step's
# queue hop. foldrun.celery closes them as Django does between requests instead (CONN_MAX_AGE, errors).
CELERY_DB_REUSE_MAX = 1000
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", False)
# django-celery-beat's scheduler, which also leaves beat's heartbeat for /api/health (foldrun/beat.py).
CELERY_BEAT_SCHEDULER = "foldrun.beat:HeartbeatScheduler"
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE: dict = {}

# Leases (foldrun/leases.py): every claimed piece of work holds a lease this long, renewed by a heartbeat
# every third of it; a holder that stops renewing (its worker died) loses the work after this many seconds,
# and the recovery sweep, every FOLDRUN_SWEEP_SECONDS, acts on it.
FOLDRUN_LEASE_SECONDS = env_int("FOLDRUN_LEASE_SECONDS", 30, minimum=1)
FOLDRUN_SWEEP_SECONDS = env_int("FOLDRUN_SWEEP_SECONDS", 5, minimum=1)

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
# The platform's own sender (spec: notifications.md, Email).
DEFAULT_FROM_EMAIL = env_str("FOLDRUN_EMAIL_FROM", "foldrun <hello@foldrun.io>")

# Vault keys: comma-separated base64 AES-256 keys, newest first.
FOLDRUN_VAULT_KEYS = env_list("FOLDRUN_VAULT_KEYS", [])

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("FOLDRUN_LOG_LEVEL", "INFO")},
    "loggers": {"django.db.backends": {"level": "WARNING"}},
}

# Notifications. Resend's API root, used when an account sends notification
# mail through its own RESEND_API_KEY (tests point it at a loopback fake).
FOLDRUN_RESEND_API_URL = env_str("FOLDRUN_RESEND_API_URL", "https://api.resend.com/")
# The key approve/reject and unsubscribe links are signed with (SECRET_KEY
# when unset). Changing it kills every link already mailed.
FOLDRUN_LINK_KEY = env_str("FOLDRUN_LINK_KEY", "")

# Notify: record webhook attempts and mail lost with their worker, queue what is due (retries are times in
# the rows, sent within a sweep of their time); keep the
# delivery log 30 days.
CELERY_BEAT_SCHEDULE["notify-sweep-due-deliveries"] = {
    "task": "notify.sweep_due_deliveries",
    "schedule": float(FOLDRUN_SWEEP_SECONDS),
}
CELERY_BEAT_SCHEDULE["notify-purge-old-deliveries"] = {"task": "notify.purge_old_deliveries", "schedule": 3600.0}
# The daily key probe: every provider key the accounts' files use, asked one 1-token question.
CELERY_BEAT_SCHEDULE["vault-daily-key-probe"] = {"task": "vault.probe_all_accounts", "schedule": 86400.0}
# A probe whose worker died mid-check (its lease ran out) is started again.
CELERY_BEAT_SCHEDULE["vault-sweep-key-probes"] = {"task": "vault.sweep_key_probes", "schedule": 60.0}
# Flow schedules: every few seconds, start the runs whose cron (in the flow's timezone) is due — so a schedule
# fires within seconds of its minute; the `sla` check and the sandbox sweep run once a minute.
CELERY_BEAT_SCHEDULE["runs-fire-schedules"] = {"task": "runs.fire_schedules", "schedule": 5.0}
CELERY_BEAT_SCHEDULE["runs-chores"] = {"task": "runs.chores", "schedule": 60.0}
# The recovery sweep: steps whose lease ran out (their worker died), messages a dead worker took with it.
CELERY_BEAT_SCHEDULE["runs-sweep"] = {"task": "runs.sweep", "schedule": float(FOLDRUN_SWEEP_SECONDS)}
# ... on a queue of its own (every worker takes from it too), so a backlog of steps never delays it.
CELERY_TASK_ROUTES = ["foldrun.celery.route_task"]
# /api/health: a worker or beat not heard from for this long is reported (503). Beat asks the workers for
# a heartbeat every third of it, on the recovery queue, so a backlog of steps does not make a worker look dead.
FOLDRUN_HEALTH_STALE_SECONDS = env_int("FOLDRUN_HEALTH_STALE_SECONDS", 60, minimum=3)
# /metrics (foldrun/metrics.py): the bearer token a scraper sends (unset: the address answers 404), and the window
# the recent figures (step duration, queue wait) cover.
FOLDRUN_METRICS_TOKEN = env_str("FOLDRUN_METRICS_TOKEN", "")
FOLDRUN_METRICS_WINDOW_SECONDS = env_int("FOLDRUN_METRICS_WINDOW_SECONDS", 900, minimum=60)
CELERY_BEAT_SCHEDULE["foldrun-heartbeat"] = {
    "task": "foldrun.heartbeat",
    "schedule": float(max(1, FOLDRUN_HEALTH_STALE_SECONDS // 3)),
}
# On Redis an unacknowledged message comes back after the visibility timeout (kombu's default: one hour).
# Recovery is the sweep's job, not the broker's, so it is set longer than any step may run: a step still
# running is never handed to a second worker by the broker (and if it were, its live lease drops it).
if CELERY_BROKER_URL.startswith("redis"):
    CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] = env_int(
        "FOLDRUN_REDIS_VISIBILITY_TIMEOUT", 12 * 3600, minimum=60
    )
# Browser sessions (browsing/): how many an account may have open at once, how many the install keeps open at
# once (the browser service's slots: its worker's --concurrency, on a queue of its own, so an open browser
# never takes a slot from steps, deliveries, probes or sweeps), where their DevTools endpoints listen
# (loopback: the keeper and its callers share a machine), and how long a session may wait for the browser
# service to start its browser before it is closed.
FOLDRUN_BROWSER_MAX_SESSIONS = env_int("FOLDRUN_BROWSER_MAX_SESSIONS", 4, minimum=1)
FOLDRUN_BROWSER_CAPACITY = env_int("FOLDRUN_BROWSER_CAPACITY", 4, minimum=1)
FOLDRUN_BROWSER_CDP_HOST = env_str("FOLDRUN_BROWSER_CDP_HOST", "127.0.0.1")
FOLDRUN_SESSION_START_SECONDS = env_int("FOLDRUN_SESSION_START_SECONDS", 90, minimum=5)
# The session sweep: idle and over-long sessions closed, lost keepers' sessions closed, queued ones started.
CELERY_BEAT_SCHEDULE["browsing-sweep"] = {"task": "browsing.sweep", "schedule": float(FOLDRUN_SWEEP_SECONDS)}
# The browser service's heartbeat for /api/health, on its own queue; one that waited past the next is dropped
# (a full service's keepers keep the heartbeat fresh themselves, browsing/keeper.py).
CELERY_BEAT_SCHEDULE["browsing-heartbeat"] = {
    "task": "browsing.heartbeat",
    "schedule": float(max(1, FOLDRUN_HEALTH_STALE_SECONDS // 3)),
    "options": {"expires": float(max(1, FOLDRUN_HEALTH_STALE_SECONDS // 3))},
}
# A push, deploy or check carries a whole desk in one JSON body; the library's
# views read it with this cap instead of DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MB).
FOLDRUN_MAX_PUSH_BYTES = env_int("FOLDRUN_MAX_PUSH_BYTES", 200_000_000, minimum=1_000_000)

# Start-up refuses a log level or a Resend address it cannot use with a
# sentence naming the variable (logging's own error names nothing).
_LOG_LEVELS = ("CRITICAL", "ERROR", "WARNING", "INFO", "DEBUG")
if LOGGING["root"]["level"].upper() not in _LOG_LEVELS:
    raise ImproperlyConfigured(
        f"FOLDRUN_LOG_LEVEL={LOGGING['root']['level']!r} is not a log level; use one of {', '.join(_LOG_LEVELS)}."
    )
LOGGING["root"]["level"] = LOGGING["root"]["level"].upper()
env_url("FOLDRUN_RESEND_API_URL", None, schemes=("http", "https"))

# API bodies are JSON whose strings are text (a NUL or a lone surrogate is a 400 naming the field) — JSON only:
# the CLI and every client send it and the dashboard's forms are Django views, so the schema documents one
# request media type, and a form or multipart body is a 415 rather than a guess.
REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] = ["foldrun.parsers.TextJSONParser"]
# A NUL in a query or form parameter is a 400 naming it (PostgreSQL would answer a 500).
MIDDLEWARE.append("foldrun.middleware.RefuseNulMiddleware")

# The embedded filesystem broker is polled: kombu's default (every second) added up to a second to every queue
# hop — a one-step run took ~1 s and a 100-instance fan-out ~50 s. Every 20 ms costs a worker one listdir of
# the queue folder 50 times a second.
if CELERY_BROKER_URL.startswith("filesystem"):
    CELERY_BROKER_TRANSPORT_OPTIONS["polling_interval"] = env_int("FOLDRUN_BROKER_POLL_MS", 20, minimum=1) / 1000
# kombu's filesystem transport lets a worker take a message file still being written (and stop on the empty
# JSON); this one renames each message into place whole (see foldrun/broker.py).
if CELERY_BROKER_URL.startswith("filesystem"):
    CELERY_BROKER_TRANSPORT = "foldrun.broker:Transport"

# The MCP server (/mcp): tool calls one web process runs at once (each in a thread; a call may wait 120 s).
FOLDRUN_MCP_THREADS = env_int("FOLDRUN_MCP_THREADS", 16, minimum=1)
# ...and of those, how many one account may have running at once (more answer rate_limited at once).
FOLDRUN_MCP_CALLS_PER_ACCOUNT = env_int("FOLDRUN_MCP_CALLS_PER_ACCOUNT", 8, minimum=1)
# Where foldrun.asgi serves the MCP server (Settings shows it; the ASGI router mounts it).
FOLDRUN_MCP_PATH = "/mcp"
