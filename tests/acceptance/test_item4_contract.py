"""Issue 2, item 4: the file contract is pure Python (no Django), and every
finding is an error or a warning with a file, a line where there is one, and
one sentence. Each rule the issue names has its own test in tests/contract/."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from foldrun.contract import Desk, check

from .test_item6_cli import BAD_DESK, UNGUARDED_DESK

ROOT = Path(__file__).resolve().parents[2]


def test_the_contract_checks_a_desk_without_importing_django():
    script = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('django', 'rest_framework', 'celery'):\n"
        "            raise ImportError('blocked: ' + name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from foldrun.contract import Desk, check\n"
        "found = check(Desk.from_folder('foldrun/demo/rank-desk'), mode='deploy')\n"
        "print(len([f for f in found if f.level == 'error']), 'django' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["0", "False"]


def test_every_finding_is_a_level_a_file_a_line_and_one_sentence():
    found = check(Desk(files=BAD_DESK), mode="check") + check(Desk(files=UNGUARDED_DESK), mode="check")
    assert len(found) == 12
    bad = [f.format() for f in found
           if f.level not in ("error", "warning") or f.file not in {**BAD_DESK, **UNGUARDED_DESK}
           or not (f.line is None or f.line >= 1) or "\n" in f.message or not f.message.rstrip().endswith((".", ")"))]
    assert bad == []


def test_a_finding_prints_as_file_line_level_and_sentence():
    found = [f for f in check(Desk(files=BAD_DESK), mode="check") if f.file == "flows/weekly.md"]
    assert [f.format() for f in found] == [
        "flows/weekly.md:4: error: step 1 names [[nobody]], which is not an agent in this workspace; add "
        "agents/nobody/agent.md or fix the name."]
    assert found[0].to_dict()["file"] == "flows/weekly.md"
