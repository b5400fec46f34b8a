"""Issue 3, item 4 (audit3): a script tool's `runtime` — `runtime: npm:` and a
`package.json`'s `dependencies` (spec/tools.md, "Script — code as a tool")
are installed with npm into a per-tool environment cached by their hash, and
the program finds them. The packages are made in the test (a `file:` folder
beside the program, a tarball from `npm pack`): no registry is reached."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from django.conf import settings

from runs.actions import check_start_run
from runs.models import TraceEvent
from tests.fakes.conftest_plugin import fake_provider  # noqa: F401
from tests.runs.helpers import agent_file, drive, push

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed on this machine")

GREETER_TOOL = "---\ntransport: script\nname: greeter\nrun: run.js\nargs: {who: whom to greet}\n---\n"
GREETER_RUN = (
    "const greet = require('tiny-greet');\nconsole.log(greet(JSON.parse(require('fs').readFileSync(0, 'utf8')).who));\n"
)
PACKAGE_JSON = json.dumps({"name": "greeter", "private": True, "dependencies": {"tiny-greet": "file:./tiny-greet"}})
TINY_PACKAGE = json.dumps({"name": "tiny-greet", "version": "1.0.0", "main": "index.js"})
TINY_INDEX = "module.exports = (who) => `hello ${who}, from tiny-greet`;\n"


def results(run) -> list[str]:
    return [e.data["content"] for e in TraceEvent.objects.filter(run=run, kind="tool_result")]


def logs(run) -> list[str]:
    return [e.data.get("message", "") for e in TraceEvent.objects.filter(run=run, kind="log")]


def greet_run(workspace, alice, fake_provider):
    fake_provider.reply_tool_use("greeter", {"who": "ann"})
    fake_provider.reply_text("GOOD greeted")
    return drive(check_start_run(workspace=workspace, user=alice, agent="worker", task="Greet ann."))


def test_a_package_json_dependency_is_installed_with_npm_and_the_program_requires_it(workspace, alice, fake_provider):
    push(
        workspace,
        {
            "agents/worker/agent.md": agent_file("worker", fake_provider, tools="[greeter]"),
            "tools/greeter/tool.md": GREETER_TOOL,
            "tools/greeter/run.js": GREETER_RUN,
            "tools/greeter/package.json": PACKAGE_JSON,
            "tools/greeter/tiny-greet/package.json": TINY_PACKAGE,
            "tools/greeter/tiny-greet/index.js": TINY_INDEX,
        },
    )
    run = greet_run(workspace, alice, fake_provider)
    assert run.status == "completed", run.error
    assert results(run)[0].strip() == "hello ann, from tiny-greet"
    installed = [line for line in logs(run) if "runtime: installed npm" in line]
    assert len(installed) == 1 and installed[0].startswith(
        "greeter: runtime: installed npm tiny-greet@file:./tiny-greet into environment "
    )


def test_the_npm_environment_is_cached_by_the_hash_and_a_changed_package_is_a_new_one(workspace, alice, fake_provider):
    files = {
        "agents/worker/agent.md": agent_file("worker", fake_provider, tools="[greeter]"),
        "tools/greeter/tool.md": GREETER_TOOL,
        "tools/greeter/run.js": GREETER_RUN,
        "tools/greeter/package.json": PACKAGE_JSON,
        "tools/greeter/tiny-greet/package.json": TINY_PACKAGE,
        "tools/greeter/tiny-greet/index.js": TINY_INDEX.replace("hello", "hi"),
    }
    push(workspace, files)
    first = greet_run(workspace, alice, fake_provider)
    second = greet_run(workspace, alice, fake_provider)
    push(workspace, {"tools/greeter/tiny-greet/index.js": TINY_INDEX.replace("hello", "howdy")})
    third = greet_run(workspace, alice, fake_provider)
    assert [results(r)[0].strip() for r in (first, second, third)] == [
        "hi ann, from tiny-greet",
        "hi ann, from tiny-greet",
        "howdy ann, from tiny-greet",
    ]
    assert [any("runtime: installed npm" in line for line in logs(r)) for r in (first, second, third)] == [
        True,
        False,
        True,
    ]
    environments = [p.name for p in (Path(settings.DATA_DIR) / "venvs" / "npm").iterdir() if not p.name.startswith(".")]
    assert len(environments) >= 2


def test_runtime_npm_in_tool_md_installs_a_package_tarball(workspace, alice, fake_provider, tmp_path):
    source = tmp_path / "tiny-shout"
    source.mkdir()
    (source / "package.json").write_text(json.dumps({"name": "tiny-shout", "version": "2.0.0", "main": "index.js"}))
    (source / "index.js").write_text("module.exports = (w) => w.toUpperCase() + '!';\n")
    packed = (
        subprocess.run(
            ["npm", "pack", "--silent", "--pack-destination", str(tmp_path)],
            cwd=source,
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    tarball = tmp_path / packed
    push(
        workspace,
        {
            "agents/worker/agent.md": agent_file("worker", fake_provider, tools="[shout]"),
            "tools/shout.md": (
                "---\ntransport: script\nname: shout\nargs: {word: a word}\n"
                f"runtime: {{npm: ['tiny-shout@file:{tarball}']}}\n---\n"
                "```js\nconst shout = require('tiny-shout');\n"
                "console.log(shout(JSON.parse(require('fs').readFileSync(0, 'utf8')).word));\n```\n"
            ),
        },
    )
    fake_provider.reply_tool_use("shout", {"word": "hey"})
    fake_provider.reply_text("GOOD shouted")
    run = drive(check_start_run(workspace=workspace, user=alice, agent="worker", task="Shout."))
    assert run.status == "completed", run.error
    assert results(run)[0].strip() == "HEY!"


def test_an_npm_package_that_cannot_be_installed_is_an_error_the_model_sees(workspace, alice, fake_provider, tmp_path):
    push(
        workspace,
        {
            "agents/worker/agent.md": agent_file("worker", fake_provider, tools="[shout]"),
            "tools/shout.md": (
                "---\ntransport: script\nname: shout\n"
                f"runtime: {{npm: ['tiny-gone@file:{tmp_path}/no-such-package.tgz']}}\n---\n"
                "```js\nconsole.log(require('tiny-gone'));\n```\n"
            ),
        },
    )
    fake_provider.reply_tool_use("shout", {})
    fake_provider.reply_text("BAD could not shout")
    run = drive(check_start_run(workspace=workspace, user=alice, agent="worker", task="Shout."))
    result = TraceEvent.objects.get(run=run, kind="tool_result").data
    assert run.status == "completed"
    assert result["error"] is True
    assert result["content"].startswith("installing npm tiny-gone failed: ")


def test_two_steps_installing_the_same_npm_environment_at_once_both_get_a_whole_one(tmp_path):
    import threading

    from foldrun.engine.tools.script import plan_script, runtime_npm

    folder_files = {
        "run.js": GREETER_RUN,
        "package.json": PACKAGE_JSON,
        "tiny-greet/package.json": TINY_PACKAGE,
        "tiny-greet/index.js": TINY_INDEX.replace("hello", "hey"),
    }
    plans = [plan_script("greeter", {"run": "run.js"}, "", folder_files, tmp_path / f"sandbox{n}") for n in range(2)]
    found: list[Path] = []
    threads = [
        threading.Thread(target=lambda p=p: found.append(runtime_npm(p, tmp_path / "venvs", lambda line: None)))
        for p in plans
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert len(found) == 2 and found[0] == found[1]
    assert (found[0] / "tiny-greet" / "index.js").read_text() == TINY_INDEX.replace("hello", "hey")
    assert [p.name for p in (tmp_path / "venvs" / "npm").iterdir()] == [found[0].parent.name]
