"""The embedded broker: kombu's filesystem transport, with messages that appear whole.

kombu's filesystem transport writes a message straight into the queue folder
(open, lock, write), and a worker takes a file by moving it away without
looking at the lock. A worker polling while a message is being written can
take the still-empty file; the JSON decode then fails and the worker stops
("Unrecoverable error: JSONDecodeError"). The faster the polling the likelier
(at kombu's default of once a second it was rare; at 20 ms it happens in a
few hundred messages). Here a message is written under a name no queue
matches and renamed into place — a rename is atomic, so a worker sees the
whole file or none of it.

Selected by `CELERY_BROKER_TRANSPORT` when `CELERY_BROKER_URL` is `filesystem://`.
"""

from __future__ import annotations

import json
import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        """Put `payload` onto `queue`: written aside, then renamed into the queue folder in one step."""
        name = "{}_{}.{}.msg".format(int(round(monotonic() * 1000)), uuid.uuid4(), queue)
        final = os.path.join(self.data_folder_out, name)
        # A leading dot: `_get` matches the text after the first dot against "<queue>.msg", which this is not.
        aside = os.path.join(self.data_folder_out, f".writing-{uuid.uuid4().hex}")
        try:
            with open(aside, "wb", buffering=0) as handle:
                handle.write(str_to_bytes(dumps(payload)))
            os.rename(aside, final)
        except OSError as exc:
            try:
                os.unlink(aside)
            except OSError:
                pass
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel


def waiting_task_args(task_name: str) -> set[str] | None:
    """The `argsrepr` of every `task_name` message still waiting in the default queue, or None when this
    broker cannot be looked into (then the caller assumes nothing about what waits).

    The recovery sweep uses it to tell a queued step whose message a dead worker took with it (not in the
    queue, so it is sent again) from one that is simply waiting behind others (left alone: sending it again
    would only add to the backlog). Reads the embedded broker's queue folder or the Redis list.
    """
    from django.conf import settings

    url = str(settings.CELERY_BROKER_URL or "")
    queue = settings.CELERY_TASK_DEFAULT_QUEUE
    try:
        if url.startswith("filesystem"):
            folder = settings.CELERY_BROKER_TRANSPORT_OPTIONS["data_folder_in"]
            raw = []
            for name in os.listdir(folder):
                if name.endswith(f".{queue}.msg"):
                    try:
                        with open(os.path.join(folder, name), "rb") as handle:
                            raw.append(handle.read())
                    except OSError:
                        continue  # taken by a worker while we looked
        elif url.startswith(("redis://", "rediss://")):
            import redis

            client = redis.Redis.from_url(url)
            try:
                raw = client.lrange(queue, 0, -1)
            finally:
                client.close()
        else:
            return None
    except Exception:  # noqa: BLE001 - a broker we cannot read is one we assume nothing about
        return None
    found: set[str] = set()
    for item in raw:
        try:
            headers = json.loads(item).get("headers") or {}
        except ValueError:
            continue
        if headers.get("task") == task_name:
            found.add(str(headers.get("argsrepr")))
    return found
