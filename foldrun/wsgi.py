import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "foldrun.settings.dev")
from django.conf import settings  # noqa: E402

from foldrun.databases import pool_web_connections  # noqa: E402

pool_web_connections(
    settings.DATABASES, settings.FOLDRUN_DB_POOL
)  # as foldrun.asgi does at its start (it says why); WSGI has no start to hook
application = get_wsgi_application()
