"""Writers of one scope never collide: each gets the next number."""

from __future__ import annotations

import threading

from django.db import connection

from library.models import Changeset

from .conftest import files, push


def test_simultaneous_pushes_get_consecutive_numbers_and_none_fails(transactional_db, alice_api, workspace):
    answers: list[int] = []
    start = threading.Barrier(4)

    def one(i: int) -> None:
        try:
            start.wait()
            response = push(alice_api, "workspaces/rank-desk", files=files(**{f"notes/n{i}.md": f"note {i}\n"}))
            answers.append(response.status_code)
        finally:
            connection.close()

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert answers == [201, 201, 201, 201]
    assert sorted(Changeset.objects.filter(workspace=workspace).values_list("number", flat=True)) == [1, 2, 3, 4]
