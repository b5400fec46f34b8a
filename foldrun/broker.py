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
