"""A step whose browser pod is lost mid-step and does not come back (spec tools.md, "Slim steps and a lost pod"),
on a real worker with real Chromium: the pod's server is killed with -9 mid-call, and every server started to
replace it is killed too, so the three reconnects fail. A step that had only read runs again with a browser
inside the step, its lost go a try of its own; a step that had written fails naming what it wrote."""

from __future__ import annotations

import os
import re
import signal
import threading

import pytest
from django.urls import reverse

from foldrun.cli.cmd_run import server_record
from foldrun.engine.localrun import report_lines
from runs.actions import check_start_run
from runs.models import Run, Step
from runs.serializers import RunDetailSerializer
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from tests.web.test_browse_worker import finished, log_lines, pods_of, tool_results

pytestmark = pytest.mark.e2e

FAILED_TRY = re.compile(r"browser pod: reconnect failed \(try (\d) of 3, at \d\d:\d\d:\d\dZ\)")
CLOSED_AGAIN = re.compile(r"browser pod: reconnected \(try (\d) of 3, at \d\d:\d\d:\d\dZ\), but the pod closed again")


class PodKiller:
    """Once the pod's browser asks the site for `path`, kill -9 every browser server the worker runs, and each
    one it starts to replace it, until `until()` holds."""

    def __init__(self, worker, site, path: str, until) -> None:
        self.worker, self.site, self.path, self.until = worker, site, path, until
        self.killed: list[int] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def _watch(self) -> None:
        while not self.stop.wait(0.01):
            if not any(r["path"] == self.path for r in self.site.seen):
                continue
            if self.until():
                return
            for pid in pods_of(self.worker):
                try:
                    os.kill(pid, signal.SIGKILL)
                    self.killed.append(pid)
                except ProcessLookupError:
                    pass

    def __enter__(self) -> "PodKiller":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.thread.join(timeout=10)


def pod_lines(run) -> list[str]:
    return [line for line in log_lines(run) if line.startswith("browser pod")]


def assert_three_failed_reconnects_then_lost(lines: list[str]) -> None:
    # Each reconnect either found no server (failed) or reached one the killer took at once (closed again);
    # the last try's line is followed by `lost — …`.
    tries = []
    for line in lines[:-1]:
        match = FAILED_TRY.fullmatch(line) or CLOSED_AGAIN.fullmatch(line)
        assert match, line
        tries.append(int(match.group(1)))
        if CLOSED_AGAIN.fullmatch(line):
            break
    assert tries == list(range(1, len(tries) + 1))
    assert lines[len(tries)] in (
        "browser pod: lost — no answer after 3 reconnects",
        "browser pod: lost — the call dropped again after the reconnect",
    )


def test_a_step_that_had_only_read_runs_again_with_a_browser_of_its_own_and_its_lost_go_is_a_try(
    celery_worker_process, workspace, alice, fake_provider, site, client
):
    site.seen.clear()
    push(workspace, {"agents/reader/agent.md": agent_file("reader", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/slow", "mode": "text"})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/slow", "mode": "text"})
    fake_provider.reply_text("GOOD — read it in the step's own browser")
    asked_twice = lambda: [r["path"] for r in site.seen].count("/slow") >= 2  # noqa: E731 - the re-run's ask
    with PodKiller(celery_worker_process, site, "/slow", until=asked_twice) as killer:
        done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read the slow page."))
    step = Step.objects.get(run=done)
    first, second = step.tries.order_by("n")
    lines = pod_lines(done)
    assert done.status == "completed", done.error
    assert killer.killed
    assert tool_results(done) == ["late"]  # the lost call's answer never reached the model: the re-run's did
    assert_three_failed_reconnects_then_lost(lines[:-1])
    assert lines[-1] == "browser pod lost; re-ran on full"
    assert (first.n, first.status, first.image) == (1, "lost", "slim")
    assert (second.n, second.status, second.image) == (2, "completed", "full")
    assert step.attempt == 2 and step.lost_reruns == 1  # the re-run is part of the attempt, not a retry:
    assert first.pod_line.endswith("browser pod lost; re-ran on full (" + lines[-2].split(" — ", 1)[1] + ")")
    assert first.pod_line.startswith(
        (
            "3 reconnects; ",
            "1 reconnect, which reached the pod but it closed again; ",
            "2 reconnects, which reached the pod but it closed again; ",
            "3 reconnects, which reached the pod but it closed again; ",
        )
    )
    assert first.tokens_in > 0 and second.tokens_in > 0
    assert step.cost_usd == first.cost_usd + second.cost_usd
    tries_line = f"#1 slim · lost · ${first.cost_usd:.4f} → #2 full · completed · ${second.cost_usd:.4f}"
    report = report_lines(server_record(RunDetailSerializer(Run.objects.get(pk=done.pk)).data))
    assert f"     {first.pod_line}" in report and f"     {tries_line}" in report  # foldrun report's two lines
    client.force_login(alice)
    page = client.get(reverse("run-page", args=[workspace.name, done.public_id])).content.decode()
    assert f"{first.pod_line}<br>" in page and tries_line in page  # the step card's


def test_a_step_that_had_written_fails_naming_what_it_wrote_and_is_not_run_again(
    celery_worker_process, workspace, alice, fake_provider, site
):
    site.seen.clear()
    push(workspace, {"agents/clerk/agent.md": agent_file("clerk", fake_provider, tools="[web]")})
    fake_provider.reply_tool_use("Write", {"path": "memory/notes.md", "content": "visited"})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/slow", "mode": "text"})
    fake_provider.reply_text("BAD — not reached")
    with PodKiller(celery_worker_process, site, "/slow", until=lambda: False):
        done = finished(check_start_run(workspace=workspace, user=alice, agent="clerk", task="Note it, then read."))
    step = Step.objects.get(run=done)
    lines = pod_lines(done)
    assert done.status == "failed"
    assert step.error == (
        'browser pod died after the step had written Write {"path": "memory/notes.md", "content": "visited"}'
    )
    assert_three_failed_reconnects_then_lost(lines)
    assert [(t.n, t.status, t.image) for t in step.tries.all()] == [(1, "failed", "slim")]
    assert step.tries.get().pod_line.endswith(f"browser pod lost; not re-run ({step.error})")
    assert [r["path"] for r in site.seen].count("/slow") == 1  # never asked again, in a pod or the step
