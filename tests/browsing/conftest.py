from __future__ import annotations

import pytest

from tests.conftest import start_worker, stop_worker
from tests.fakes.mcp_site import arena


@pytest.fixture
def site():
    with arena() as server:
        yield server


@pytest.fixture
def session_worker(transactional_db, tmp_path):
    """A real worker whose leases last 3 s, so a lost keeper shows within seconds."""
    process = start_worker(tmp_path / "worker.log", {"FOLDRUN_LEASE_SECONDS": "3"})
    yield process
    stop_worker(process)


@pytest.fixture
def guarded_worker(transactional_db, tmp_path):
    """A real worker of an install that has not opted in to private addresses (production's default)."""
    process = start_worker(tmp_path / "worker.log", {"FOLDRUN_TEST_ALLOW_PRIVATE_URLS": "0"})
    yield process
    stop_worker(process)
