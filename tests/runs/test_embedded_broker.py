"""The embedded (filesystem) broker: polled often, and a message appears in the queue folder whole."""

from __future__ import annotations

import json
import os

from foldrun.celery import app


def test_the_embedded_broker_is_polled_every_20_ms_and_writes_messages_whole(tmp_path):
    options = {
        "data_folder_in": str(tmp_path),
        "data_folder_out": str(tmp_path),
        "control_folder": str(tmp_path / "control"),
        "polling_interval": 0.02,
    }
    with app.connection_for_write(
        url="filesystem://", transport="foldrun.broker:Transport", transport_options=options
    ) as connection:
        connection.default_channel._put("q", {"body": "x" * 100_000})
        assert connection.transport.polling_interval == 0.02
    names = os.listdir(tmp_path)
    messages = [n for n in names if n.endswith(".q.msg")]
    assert [n for n in names if n.startswith(".writing-")] == []
    assert len(messages) == 1
    assert json.loads((tmp_path / messages[0]).read_text()) == {"body": "x" * 100_000}
