"""The engine's `Host` protocol (foldrun/engine/context.py) lists every method the engine and the web tool call on
a host, and every host implements all of it — a Celery task's, a consulted colleague's, a laptop run's and the
Tool Test button's — so nothing asks `getattr(host, …, None)` whether a host happens to have one (issue 30)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from foldrun.engine.context import Host
from foldrun.engine.local import LocalHost
from runs.host import ColleagueHost, DbHost
from runs.tooltest import TestHost as ToolTestHost  # not collected as a test class

ROOT = Path(__file__).resolve().parents[2]
PROTOCOL = sorted(name for name in vars(Host) if not name.startswith("_"))


def test_the_protocol_names_what_the_engine_asks_of_a_host():
    assert {
        "trace",
        "resolve_secrets",
        "model_client",
        "charge",
        "reserve",
        "release",
        "check_budget",
        "before_write",
        "recall_runs",
        "read_run",
        "egress",
        "consult",
        "kept_seeds",
        "session_action",
        "live_frames",
    } == set(PROTOCOL)


@pytest.mark.parametrize("host", [DbHost, ColleagueHost, LocalHost, ToolTestHost], ids=lambda h: h.__name__)
def test_every_host_implements_every_method_of_the_protocol(host):
    # The Tool Test's host makes its seed book in __init__ (an attribute of the instance); every other member is the class's.
    members = set(dir(host)) | ({"kept_seeds"} if host is ToolTestHost else set())
    assert [name for name in PROTOCOL if name not in members] == []


# What the engine calls a Host where it holds one: `env.host` / `self.host` (a step's ToolContext), and `host`
# in the modules whose functions take the step's Host (not a LocalHost made by the laptop's run, nor a URL's host).
HOST_PARAMETER_MODULES = ["engine/step.py", "engine/spend.py", "engine/prepare.py"]


def test_what_the_engine_and_the_web_tool_call_on_a_host_is_in_the_protocol():
    called: set[str] = set()
    for path in [*(ROOT / "foldrun" / "engine").rglob("*.py"), *(ROOT / "foldrun" / "web").rglob("*.py")]:
        text = path.read_text()
        called.update(re.findall(r"\b(?:env|self)\.host\.([a-z_]+)", text))
        if str(path.relative_to(ROOT / "foldrun")) in HOST_PARAMETER_MODULES:
            called.update(re.findall(r"(?<![.\w])host\.([a-z_]+)", text))
    assert called >= {"trace", "reserve", "charge", "egress", "consult", "kept_seeds", "live_frames"}
    assert called - set(PROTOCOL) == set()


def test_no_part_of_the_engine_or_the_web_tool_asks_whether_a_host_has_a_method():
    asked = []
    for path in [*(ROOT / "foldrun" / "engine").rglob("*.py"), *(ROOT / "foldrun" / "web").rglob("*.py")]:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"(getattr|hasattr)\([a-z_.]*host\b", line):
                asked.append(f"{path.relative_to(ROOT)}:{n}")
    # RedactingHost hands every other call on to the host
    assert [place.split(":")[0] for place in asked] == ["foldrun/engine/redact.py"]
