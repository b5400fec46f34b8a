"""`version:` picks a build of the engine (spec tools.md, "How this agent's browser presents itself"): a build dropped
at /opt/browser/<engine>/<version>/ (here FOLDRUN_BROWSER_BUILDS, a folder whose build is a wrapper that runs the
system Chromium and notes that it ran) is the one launched; a version that is not installed falls back to the default
build and says so on stderr; Chrome's channels are `stable`, `beta` and `dev`. On a worker the build is launched on
the account's pool, by its rules. Through real runs on a real worker."""

from __future__ import annotations

from pathlib import Path

import pytest

from runs.actions import check_start_run
from runs.models import Step
from tests.conftest import start_worker, stop_worker
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, push
from tests.web.test_browse_worker import finished, log_lines, tool_results

pytestmark = pytest.mark.e2e


@pytest.fixture
def builds(tmp_path, transactional_db):
    """A builds root holding chromium/150.0.7000.1/chrome, and a worker that reads it."""
    root = tmp_path / "builds"
    build = root / "chromium" / "150.0.7000.1"
    build.mkdir(parents=True)
    ran = tmp_path / "ran.txt"
    wrapper = build / "chrome"
    wrapper.write_text(f'#!/bin/sh\necho "$$" >> {ran}\nexec /usr/bin/chromium "$@"\n')
    wrapper.chmod(0o755)
    worker = start_worker(tmp_path / "worker.log", {"FOLDRUN_BROWSER_BUILDS": str(root)})
    yield root, ran
    stop_worker(worker)


def agent_with(fake_provider, browse: str) -> str:
    return agent_file("reader", fake_provider, tools="[web]", extra=f"web:\n  browse:\n{browse}")


def test_a_version_installed_under_the_builds_root_is_the_browser_launched(
    builds, workspace, alice, fake_provider, site
):
    root, ran = builds
    push(workspace, {"agents/reader/agent.md": agent_with(fake_provider, "    version: 150.0.7000.1\n")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/article", "mode": "text"})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read it."))
    assert done.status == "completed", done.error
    assert "twice a year" in tool_results(done)[0]
    assert ran.is_file() and ran.read_text().strip()  # the pinned build ran
    assert not [line for line in log_lines(done) if "fell back to the default build" in line]
    # … launched on the account's pool (its server started it), so the step stays `slim · browser pod`
    assert [t.image for t in Step.objects.get(run=done).tries.all()] == ["slim"]


def test_a_version_not_installed_falls_back_to_the_default_build_and_says_so(
    builds, workspace, alice, fake_provider, site
):
    root, ran = builds
    push(workspace, {"agents/reader/agent.md": agent_with(fake_provider, "    version: 99.0.1\n")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/article", "mode": "text"})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read it."))
    assert done.status == "completed", done.error
    assert "twice a year" in tool_results(done)[0]
    assert (
        f"browse: chromium version 99.0.1 is not installed in this image (no build at {root}/chromium/99.0.1/); "
        f"fell back to the default build"
    ) in log_lines(done)
    assert not ran.exists()


def test_a_chrome_channel_not_installed_falls_back_to_the_default_build_and_says_so(
    builds, workspace, alice, fake_provider, site
):
    if Path("/opt/google/chrome-beta/chrome").is_file():
        pytest.skip("this machine has Chrome beta")
    push(workspace, {"agents/reader/agent.md": agent_with(fake_provider, "    engine: chrome\n    version: beta\n")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/article", "mode": "text"})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read it."))
    assert done.status == "completed", done.error
    assert (
        "browse: Chrome's beta channel is not installed in this image (/opt/google/chrome-beta/chrome); fell back "
        "to the default build"
    ) in log_lines(done)


def test_a_version_that_is_a_path_is_refused_naming_the_setting(builds, workspace, alice, fake_provider, site):
    root, _ran = builds
    push(workspace, {"agents/reader/agent.md": agent_with(fake_provider, "    version: ../../usr\n")})
    fake_provider.reply_tool_use("web", {"action": "browse", "url": f"{site.url}/article", "mode": "text"})
    fake_provider.reply_text("GOOD")
    done = finished(check_start_run(workspace=workspace, user=alice, agent="reader", task="Read it."))
    assert tool_results(done)[0] == (
        f"web.browse.version: ../../usr is a channel (stable, beta, dev) or a build's "
        f"folder name under {root}/chromium/, not a path"
    )
