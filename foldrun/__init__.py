"""foldrun: AI agents kept as plain markdown files, run on a schedule."""
__version__ = "0.1.0"

try:  # make @shared_task use our app whenever Django is configured
    from .celery import app as celery_app  # noqa: F401
except ImportError:  # pragma: no cover - the CLI runs without Celery installed
    pass
