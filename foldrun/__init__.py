"""foldrun: AI agents kept as plain markdown files, run on a schedule.

Nothing is imported here: the `foldrun` CLI imports this package on every call, and it must answer
`--version` without Celery or Django. The Celery app is made the current one when Django starts
(accounts' AppConfig.ready) and by `celery -A foldrun`, which imports foldrun.celery itself.
"""

__version__ = "0.1.0"
