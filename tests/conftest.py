"""The cast: alice owns the account, bob reads it, charlie has his own.

Every endpoint gets a test that charlie sees a 404 and bob cannot write.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from rest_framework.test import APIClient

from accounts.models import Account, ApiToken, Membership, Role, Workspace, hash_token
from foldrun.heartbeats import BROWSERS, beat_heartbeat
from foldrun.web.browse import servers


@pytest.fixture(autouse=True)
def browser_service_heard_from():
    """The browser service answers, as on a running install: a new session is refused at once when its heartbeat
    is stale (browsing.actions.check_browser_service), and most tests start no browser worker of their own. A test
    of the service being down ages the file itself (tests/browsing/test_a_session_with_the_browser_service_down…)."""
    beat_heartbeat(BROWSERS)


def _user(email: str):
    User = get_user_model()
    return User.objects.create_user(username=email.split("@")[0], email=email, password="correct horse battery")


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup, django_db_blocker):
    """The test database, with this process's browser pods stopped before it goes: a step of a test's account
    leaves its pod running, and a stopped pod writes its ledger line (accounts/pods.py) — at the process's exit
    that write would find the database gone."""
    yield
    with django_db_blocker.unblock():  # the line is written from a thread of its own, to this database
        servers.POOL.stop()


@pytest.fixture(scope="session")
def live_server(request, django_db_setup):
    """pytest-django's live server, but its requests keep no database session and it stops before the test
    database is dropped. Django's own closes a request thread's connections only when the thread's client hangs
    up; with the tests' CONN_MAX_AGE a kept-alive client (a browser, a pooled HTTP client) keeps that thread's
    PostgreSQL session open between requests, and pytest-django's server, a session fixture depending on nothing,
    was stopped only after the database's drop — which then failed, "being accessed by other users", when the
    client hung up more than the 5 s PostgreSQL's DROP DATABASE waits. As the web server does (foldrun/asgi.py),
    each request's connections are closed at its end; requesting django_db_setup stops the server before the
    drop."""
    from django.db import connections
    from django.test.testcases import LiveServerThread, QuietWSGIRequestHandler
    from pytest_django.live_server_helper import LiveServer

    class Handler(QuietWSGIRequestHandler):
        def handle_one_request(self):
            try:
                super().handle_one_request()
            finally:
                if not self.server.connections_override:  # an in-memory SQLite database shared with the tests
                    connections.close_all()

    class Thread(LiveServerThread):
        def _create_server(self, connections_override=None):
            return self.server_class(
                (self.host, self.port), Handler, allow_reuse_address=False, connections_override=connections_override
            )

    addr = request.config.getvalue("liveserver") or os.getenv("DJANGO_LIVE_TEST_SERVER_ADDRESS") or "localhost"
    server = LiveServer(addr, start=False)
    made = server.thread
    server.thread = Thread(
        made.host, made.static_handler, connections_override=made.connections_override, port=made.port
    )
    server.thread.daemon = True
    server.start()
    yield server
    server.stop()


@pytest.fixture
def account(db) -> Account:
    return Account.objects.create(name="Acme")


@pytest.fixture
def alice(account):
    user = _user("alice@example.com")
    Membership.objects.create(account=account, user=user, role=Role.OWNER)
    return user


@pytest.fixture
def bob(account):
    user = _user("bob@example.com")
    Membership.objects.create(account=account, user=user, role=Role.VIEWER)
    return user


@pytest.fixture
def charlie(db):
    user = _user("charlie@example.com")
    other = Account.objects.create(name="Other Co")
    Membership.objects.create(account=other, user=user, role=Role.OWNER)
    return user


@pytest.fixture
def workspace(account) -> Workspace:
    return Workspace.objects.create(account=account, name="rank-desk")


def client_for(user) -> APIClient:
    """An API client carrying a fresh bearer token for `user`'s first account."""
    membership = user.memberships.order_by("created_at").first()
    raw = ApiToken.mint()
    ApiToken.objects.create(
        user=user, account=membership.account, name="test", token_hash=hash_token(raw), hint=raw[:8]
    )
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


@pytest.fixture
def alice_api(alice) -> APIClient:
    return client_for(alice)


@pytest.fixture
def bob_api(bob) -> APIClient:
    return client_for(bob)


@pytest.fixture
def charlie_api(charlie) -> APIClient:
    return client_for(charlie)


WORKER_APP = "foldrun-test-worker"


def start_worker(log_path, env_extra: dict | None = None, *, concurrency: int = 2, queues: str = "both"):
    """A real Celery worker (a subprocess) on the configured broker, reading the test database, with
    `env_extra` in its environment (a shorter lease, the private-address opt-in off) and `concurrency` pool
    processes. It takes the main queue and the browser service's (`queues="both"`), or one of them as the
    start command's worker and browser service do (`"main"`, `"browsers"`). Stop it with `stop_worker`."""
    import os
    import subprocess
    import sys
    import time

    from django.db import connection

    env = dict(os.environ)
    env["FOLDRUN_TEST_DB_NAME"] = connection.settings_dict["NAME"]
    env["DJANGO_SETTINGS_MODULE"] = "foldrun.settings.test"
    env["PGAPPNAME"] = WORKER_APP  # its PostgreSQL connections carry this name, so a test can tell them from others
    env.update(env_extra or {})
    with open(log_path, "wb") as log:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "foldrun",
                "worker",
                "-l",
                "info",
                "--concurrency",
                str(concurrency),
                "--without-mingle",
                "--without-gossip",
                "--without-heartbeat",
                # its own node name: the workers of parallel test processes share a Redis, and a name two
                # workers answer to would mix their control replies
                "-n",
                f"{env['FOLDRUN_TEST_QUEUE']}-{time.monotonic_ns()}@%h",
                "-Q",
                {
                    "both": f"{env['FOLDRUN_TEST_QUEUE']},{env['FOLDRUN_TEST_QUEUE']}.browsers",
                    "main": env["FOLDRUN_TEST_QUEUE"],
                    "browsers": f"{env['FOLDRUN_TEST_QUEUE']}.browsers",
                }[queues],
            ],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    while b"ready." not in log_path.read_bytes():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError("the Celery worker did not start:\n" + log_path.read_text(errors="replace")[-3000:])
        time.sleep(0.1)
    process.log_path = log_path  # type: ignore[attr-defined]
    return process


def stop_worker(process) -> None:
    import subprocess

    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture
def celery_worker_process(transactional_db, tmp_path):
    """A real Celery worker (a subprocess) on the configured broker, reading
    the test database. Use with data committed by `transactional_db`."""
    process = start_worker(tmp_path / "worker.log")
    yield process
    stop_worker(process)


def wait_for(predicate, timeout: float = 30.0, interval: float = 0.1):
    """Poll `predicate` until it returns a truthy value; fail after `timeout`."""
    import time

    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {predicate}")
        time.sleep(interval)


REPO = Path(__file__).resolve().parents[1]


def spec_dirs() -> list[Path]:
    """Where the product spec may be, in order: FOLDRUN_SPEC_DIR when set (then only there), else
    shared/spec beside the repository (the layout of /work/main), else /work/shared/spec (that same copy,
    seen from a worktree or a clone elsewhere on this machine)."""
    if os.environ.get("FOLDRUN_SPEC_DIR"):
        return [Path(os.environ["FOLDRUN_SPEC_DIR"])]
    return [REPO.parent / "shared" / "spec", Path("/work/shared/spec")]


def spec_file(name: str) -> Path:
    """The spec's file `name` (e.g. "providers.md"), the one way a test finds the spec. A spec not found is a
    failure naming every place looked, never a skip: a test held to the spec must not pass without it."""
    looked = [folder / name for folder in spec_dirs()]
    for path in looked:
        if path.is_file():
            return path
    raise AssertionError(
        f"the spec's {name} is not at {' nor '.join(map(str, looked))} "
        "(FOLDRUN_SPEC_DIR, when set, names the spec's folder)"
    )


def wait_in_page(page, expression: str, *, timeout: float = 30_000):
    """Playwright's `page.wait_for_function`, for pages under the Content-Security-Policy: Playwright polls its
    predicate through the page's `eval`, which the policy (no 'unsafe-eval') refuses. Here the expression is part
    of the function handed to the page through DevTools, which the policy does not govern, and is polled there
    every 100 ms; True once it holds, or this fails after `timeout` milliseconds naming it."""
    import json

    return page.evaluate(
        "() => new Promise((done, fail) => { const since = Date.now(); (function poll() { let value;"
        f" try {{ value = ({expression}); }} catch (e) {{ value = undefined; }}"
        " if (value) { done(true); } else if (Date.now() - since > " + str(float(timeout)) + ")"
        f" {{ fail(new Error('timed out waiting for ' + {json.dumps(expression)})); }}"
        " else { setTimeout(poll, 100); } })(); })"
    )


# Which tests run twice. CI (.ci/run) runs the whole suite on PostgreSQL + Redis, and on the embedded default
# (SQLite + the filesystem broker) only the tests marked `embedded`: those that exercise what only the embedded
# default has — its broker, SQLite's locking, a real worker on them, the start command, a kill. No file is marked
# by hand: a test is marked here when
#   - one of its fixtures (its whole closure) is a worker (a name ending in worker, workers or worker_process:
#     celery_worker_process, session_worker…) or the live server (a page in real Chromium, or a client, beside
#     the test: two connections on one SQLite file); or
#   - its file's source starts a worker, touches the broker, SQLite or its locking, the start command or a kill
#     (WORKER_SOURCE, BACKEND_SOURCE), or runs threads on committed data (THREADS with SHARED_DATABASE) — a file
#     at a time, so a helper the test calls counts too.
# Except a browser's own tests (BROWSER_TESTS: the web tool, browser sessions and tasks, the MCP server's tools —
# real Chromium is their subject): they run on both only when their file touches the broker, SQLite, the start
# command or a kill. A worker they need is the same worker the ~250 run, delivery, probe, page and CLI tests drive
# on the embedded default; run twice, those browsers would double CI's longest half for no new path.
# And a test that is not marked but started a worker anyway (the worker's heartbeat file, written when a worker
# is ready, changed during it) fails, saying so — so a new worker test cannot drop out of the embedded run
# unseen; a browser's own test may. `pytestmark = pytest.mark.embedded` marks a file by hand where none of this
# sees it.
BROWSER_TESTS = ("web", "mcp", "browsing")  # folders under tests/
EMBEDDED_FIXTURES = re.compile(r"(^|_)(worker|workers|worker_process)$|^live_server$")
WORKER_SOURCE = re.compile(r"\bstart_worker\b|\"-A\", \"foldrun\"")  # a Celery worker
BACKEND_SOURCE = re.compile(
    "|".join(
        [
            r"\bfoldrun\.broker\b",
            r"filesystem://",
            r"\bkombu\b",
            r"connection_for_write",  # the broker
            r"(?i:sqlite)",
            r"database is locked",
            r"select_for_update",  # SQLite and its locking
            r"scripts/start",
            r"smoke-start",  # the start command
            r"SIGKILL",
            r"\bos\.kill\b",
            r"\bkillpg\b",
            r"\.kill\(\)",  # a kill
        ]
    )
)
# Threads count where they share the database (committed data: transactional_db): writers at once, SQLite's
# locking. A thread serving a loopback stand-in does not.
THREADS = re.compile(r"\bthreading\b|ThreadPoolExecutor|\bBarrier\b")
SHARED_DATABASE = re.compile(r"\btransactional_db\b|transaction=True")


def _source(path: Path, seen: dict[Path, str]) -> str:
    if path not in seen:
        seen[path] = path.read_text(errors="replace")
    return seen[path]


def browsers_own(item) -> bool:
    """Whether `item` is a browser's own test (its folder is one of BROWSER_TESTS)."""
    parts = Path(str(item.path)).parts
    return "tests" in parts and parts[parts.index("tests") + 1] in BROWSER_TESTS


def runs_on_embedded(item, seen: dict[Path, str]) -> bool:
    """Whether `item` is one of the tests the embedded default runs too (the rules above)."""
    if item.get_closest_marker("embedded"):
        return True
    source = _source(Path(str(item.path)), seen)
    if BACKEND_SOURCE.search(source):
        return True
    if browsers_own(item):
        return False  # once, on PostgreSQL and Redis
    return bool(
        any(EMBEDDED_FIXTURES.search(name) for name in item.fixturenames)
        or WORKER_SOURCE.search(source)
        or (THREADS.search(source) and SHARED_DATABASE.search(source))
    )


@pytest.hookimpl(tryfirst=True)  # before `-m` selects by the marks
def pytest_collection_modifyitems(config, items):
    seen: dict[Path, str] = {}
    for item in items:
        if runs_on_embedded(item, seen) and not item.get_closest_marker("embedded"):
            item.add_marker(pytest.mark.embedded)


@pytest.fixture(autouse=True)
def a_test_that_starts_a_worker_is_marked_embedded(request):
    """Fails a test that started a Celery worker (its heartbeat was written during the test) without being
    marked `embedded`: the embedded run would leave it out."""
    import time

    from foldrun.heartbeats import heartbeat_path

    began = time.time()
    yield
    if request.node.get_closest_marker("embedded") or browsers_own(request.node):
        return  # marked, or a browser's own test (the rules above)
    try:
        touched = heartbeat_path("worker").stat().st_mtime >= began
    except OSError:
        touched = False
    if touched:
        pytest.fail(
            f"{request.node.nodeid} started a Celery worker but is not marked `embedded`, so the embedded "
            "run (.ci/run) leaves it out: give it a worker fixture, or mark it (tests/conftest.py says how).",
            pytrace=False,
        )
