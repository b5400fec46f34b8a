"""The account's browser pods: real Playwright servers, started, grown, reaped and replaced by the rules."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from accounts.models import BrowserPodLine
from foldrun.web.browse import servers
from foldrun.web.browse.servers import AccountPool
from foldrun.web.browse.spare import MOST_SPARES
from tests.conftest import wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture
def lines():
    got: list[tuple[str, dict]] = []
    yield got


def test_a_pod_is_started_per_two_browsing_steps_up_to_the_most_and_two_accounts_never_share_one(monkeypatch, lines):
    monkeypatch.setenv("FOLDRUN_BROWSER_MAX_PODS", "2")
    acme, other = AccountPool("acc_acme", lambda a, line: lines.append((a, line))), AccountPool("acc_other", None)
    try:
        acme.open_step()
        first = wait_for(lambda: acme.pods[:1])[0]  # started the moment the step begins, before any call
        assert first.alive() and first.users == 0
        acme.pod()
        assert acme.pods == [first]
        acme.open_step()
        acme.pod()
        assert len(acme.pods) == 1  # two steps to a pod
        acme.open_step()
        acme.pod()
        assert len(acme.pods) == 2
        acme.open_step()
        acme.open_step()
        acme.pod()
        assert len(acme.pods) == 2  # FOLDRUN_BROWSER_MAX_PODS
        other.open_step()
        other.pod()
        ours = {p.ws for p in acme.pods}
        assert other.pods[0].ws not in ours
        assert {p.process.pid for p in acme.pods}.isdisjoint({other.pods[0].process.pid})
        assert all(p.ws.startswith("ws://127.0.0.1:") and len(p.ws.rsplit("/", 1)[1]) >= 32 for p in acme.pods)
    finally:
        acme.stop()
        other.stop()
    assert [line["pod"] for _a, line in lines] == ["acc_acme-1", "acc_acme-2"]


def test_pods_are_reaped_idle_surplus_first_never_while_a_step_runs_and_each_leaves_one_line(monkeypatch, lines):
    monkeypatch.setenv("FOLDRUN_BROWSER_IDLE_MS", "200")
    pool = AccountPool("acc_acme", lambda a, line: lines.append((a, line)))
    try:
        for _ in range(3):
            pool.open_step()
            pool.done_with(pool.pod())
        assert len(pool.pods) == 2
        time.sleep(0.4)
        assert pool.reap() == []  # three steps are running
        pool.close_step()
        pool.close_step()
        time.sleep(0.4)
        assert pool.reap() == []  # one is still running
        pool.close_step()
        assert pool.reap() == []  # just now used
        time.sleep(0.4)
        reaped = pool.reap()
        assert [line["pod"] for line in reaped] == ["acc_acme-2", "acc_acme-1"]  # the surplus first
        assert pool.pods == []
        assert all(line["seconds"] > 0.4 and line["bytes"] == 0 for line in reaped)
        assert [a for a, _line in lines] == ["acc_acme", "acc_acme"]
    finally:
        pool.stop()


def test_a_pod_killed_with_9_is_noticed_replaced_and_its_line_kept(lines):
    pool = AccountPool("acc_acme", lambda a, line: lines.append((a, line)))
    try:
        pool.open_step()
        first = pool.pod()
        os.kill(first.process.pid, signal.SIGKILL)
        first.process.wait(timeout=5)
        replaced = pool.pod()
        assert replaced is not first and replaced.alive()
        assert [line["pod"] for _a, line in lines] == ["acc_acme-1"]
    finally:
        pool.stop()


def test_a_reaped_pods_line_is_on_the_accounts_ledger(transactional_db, account):
    from accounts.pods import record_pod_line

    record_pod_line(account.public_id, {"pod": f"{account.public_id}-1", "seconds": 912.5, "bytes": 48213})
    line = BrowserPodLine.objects.get(account=account)
    assert line.line == f"browser {account.public_id}-1: 912.500 s, 48,213 bytes"
    assert servers.POOL.on_reap is record_pod_line


def test_a_test_run_step_gets_no_pod_and_a_worker_step_does(make_tool):
    tested = make_tool(test_mode=True, pod_account="acc_tested")
    assert tested.pods is None and tested.browser_ws is None
    assert "acc_tested" not in servers.POOL.accounts
    real = make_tool(pod_account="acc_real")
    try:
        assert real.pods is servers.POOL.accounts["acc_real"] and real.pods.steps == 1
        started = wait_for(lambda: real.pods.pods[:1])[0]  # the step's pod starts as the step begins
        assert real.browser_ws == started.ws and real.pods.pods == [started]
    finally:
        real.close()
        servers.POOL.accounts.pop("acc_real").stop()


def test_the_next_step_of_the_account_browses_on_the_connection_the_last_left_with_no_cookie_of_its_own(
    make_tool, site
):
    first = make_tool(pod_account="acc_kept")
    try:
        signed = first.call(
            {
                "action": "browse",
                "url": f"{site.url}/echo-headers",
                "mode": "text",
                "actions": [{"cookie": "sid", "value": "first-step"}, {"reload": True}],
            }
        )
        kept = first.browsers
        first.close()
        second = make_tool(pod_account="acc_kept")
        looked = second.call({"action": "browse", "url": f"{site.url}/echo-headers", "mode": "text"})
        again = second.call({"action": "browse", "url": f"{site.url}/echo-headers", "mode": "text"})
        assert second.browsers is kept and kept.launches == 1  # one client and connection, kept between steps
        assert "cookie sid=first-step" in signed
        assert "cookie None" in looked and "cookie None" in again
        second.close()
    finally:
        servers.POOL.accounts.pop("acc_kept").stop()


def _display_of(pid: int) -> str | None:
    for item in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
        if item.startswith(b"DISPLAY="):
            return item.split(b"=", 1)[1].decode()
    return None


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"  # a zombie is gone
    except OSError:
        return True


def test_windowed_pods_each_run_under_an_xvfb_of_their_own_and_a_server_killed_with_9_takes_its_screen(
    monkeypatch, lines
):
    monkeypatch.setenv("FOLDRUN_BROWSER_STEPS_PER_POD", "1")
    pool = AccountPool("acc_window", lambda a, line: lines.append((a, line)))
    try:
        pool.open_step()
        plain = pool.pod()
        pool.open_step(windowed=True)
        pool.open_step(windowed=True)
        first, second = pool.pod(windowed=True), pool.pod(windowed=True)
        assert plain.screen is None and _display_of(plain.process.pid) == os.environ.get("DISPLAY")
        assert first is not second and first.windowed and second.windowed
        displays = {first.screen.display, second.screen.display}
        assert len(displays) == 2  # never one display (a fixed :99) shared by two servers
        assert {_display_of(first.process.pid), _display_of(second.process.pid)} == displays
        screen_pid = first.screen.process.pid
        os.kill(first.process.pid, signal.SIGKILL)
        wait_for(lambda: _gone(screen_pid), timeout=10)  # its Xvfb went with it, before anyone asked for the pod
        replaced = pool.pod(windowed=True)
        assert replaced.windowed and replaced is not first and replaced.alive()
        assert [line["pod"] for _a, line in lines] == [first.name]  # the killed one's line, whichever number it drew
        screens = [p.screen.process.pid for p in pool.pods if p.screen is not None]
    finally:
        pool.stop()
    assert all(_gone(pid) for pid in screens)  # stopping the pool stops every screen


def test_windowed_and_plain_steps_each_count_toward_their_own_pods_only(monkeypatch):
    monkeypatch.setenv("FOLDRUN_BROWSER_STEPS_PER_POD", "1")
    pool = AccountPool("acc_kinds", None)
    try:
        pool.open_step(windowed=True)
        pool.open_step(windowed=True)
        pool.open_step()
        assert (pool.wanted(), pool.wanted(windowed=True)) == (1, 2)
        plain = [pool.pod(), pool.pod()]
        windowed = [pool.pod(windowed=True), pool.pod(windowed=True)]
        assert plain[0] is plain[1]  # one plain step: one plain pod, however many windowed steps run beside it
        assert windowed[0] is not windowed[1] and all(p.windowed for p in windowed)
        assert len([p for p in pool.pods if not p.windowed]) == 1
        pool.close_step(windowed=True)
        pool.close_step(windowed=True)
        pool.open_step()
        assert (pool.wanted(), pool.wanted(windowed=True)) == (2, 1)  # two plain steps now, and no windowed one
        assert pool.pod() is not plain[0]
        assert len([p for p in pool.pods if not p.windowed]) == 2
    finally:
        pool.stop()


WORKER = """
import sys
from foldrun.web.browse.servers import AccountPool
pool = AccountPool("acc_dies", None)
pool.open_step(windowed=True)
pod = pool.pod(windowed=True)
print(pod.process.pid, pod.screen.process.pid, flush=True)
sys.stdin.read()
"""


def test_a_windowed_pods_server_and_its_xvfb_go_when_the_worker_that_started_them_is_killed():
    worker = subprocess.Popen(
        [sys.executable, "-c", WORKER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    try:
        server, screen = map(int, worker.stdout.readline().split())
        assert not _gone(server) and not _gone(screen)
        worker.kill()
        worker.wait(timeout=10)
        wait_for(lambda: _gone(server) and _gone(screen), timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()


def test_a_stopped_pool_has_ended_its_reaper_and_a_later_use_starts_one_again():
    pool = servers.ServerPool()
    before = set(threading.enumerate())
    pool.account("acc_reaped")
    (reaper,) = [t for t in threading.enumerate() if t not in before and t.name == "foldrun-browser-reaper"]
    pool.stop()
    assert not reaper.is_alive()  # ended and waited for: it reaps (and writes) nothing after stop
    pool.account("acc_reaped")
    (again,) = [t for t in threading.enumerate() if t not in before and t.name == "foldrun-browser-reaper"]
    assert again is not reaper and again.is_alive()
    pool.stop()
    assert not again.is_alive()


def test_a_test_session_that_leaves_a_pod_running_writes_its_line_before_the_database_goes(tmp_path):
    """A pytest session of its own (embedded SQLite, its own data folder) whose one test leaves a pod running: the
    session stops the pool before its test database goes, so the pod's ledger line meets a database."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PYTEST_")
        and k not in ("DATABASE_URL", "CELERY_BROKER_URL", "FOLDRUN_TEST_QUEUE", "FOLDRUN_TEST_DB_NAME")
    }
    env["FOLDRUN_DATA_DIR"] = str(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", "tests/web/pods_left_probe.py"],
        cwd=Path(__file__).resolve().parents[2],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "1 passed" in out, out
    assert "its line was not written" not in out, out


KEEPER = "<html><body><p>keeper</p><script src=/kept.js></script></body></html>"
# What a call leaves behind in its context: a cookie, both storages, a Cache Storage entry and a service worker.
LEAVE = (
    "(async () => { document.cookie = 'left=1; max-age=600'; localStorage.setItem('left', '1'); "
    "sessionStorage.setItem('left', '1'); await (await caches.open('left')).put('/left', new Response('1')); "
    "await navigator.serviceWorker.register('/keeper-sw.js'); await navigator.serviceWorker.ready; "
    "return 'left all five'; })()"
)
LOOK = (
    "(async () => ['cookie=' + document.cookie, 'local=' + localStorage.getItem('left'), "
    "'session=' + sessionStorage.getItem('left'), 'caches=' + (await caches.keys()).length, "
    "'workers=' + (await navigator.serviceWorker.getRegistrations()).length, "
    "'page=' + document.body.innerText.trim()].join(' '))()"
)


def test_calls_back_to_back_each_take_a_warmed_spare_of_their_own_with_nothing_the_last_call_left(make_tool, site):
    # Calls faster than a spare is made between them keep two spares (spare.py), each warmed on its own
    # about:blank: every call still starts with no cookie, storage, HTTP cache or service worker of the last, and
    # reads its own page, not the warm-up's.
    site.pages["/keeper"] = (200, {"content-type": "text/html"}, KEEPER.encode())
    site.pages["/kept.js"] = (
        200,
        {"content-type": "application/javascript", "cache-control": "max-age=600"},
        b"window.kept = true;",
    )
    site.pages["/keeper-sw.js"] = (
        200,
        {"content-type": "application/javascript"},
        b"self.addEventListener('fetch', () => {});",
    )
    tool = make_tool(pod_account="acc_spares")
    try:
        left = tool.call(
            {"action": "browse", "url": f"{site.url}/keeper", "mode": "text", "actions": [{"eval": LEAVE}]}
        )
        looked = [
            tool.call({"action": "browse", "url": f"{site.url}/keeper", "mode": "text", "actions": [{"eval": LOOK}]})
            for _ in range(4)
        ]
        assert '"value": "left all five"' in left
        assert tool.browsers.spares.depth == MOST_SPARES  # the calls came faster than one spare was made between them
        for answer in looked:
            assert '"value": "cookie= local=null session=null caches=0 workers=0 page=keeper"' in answer, answer
        assert sum(1 for seen in site.seen if seen["path"] == "/kept.js") == 5  # no call's HTTP cache in the next
    finally:
        servers.POOL.accounts.pop("acc_spares").stop()
