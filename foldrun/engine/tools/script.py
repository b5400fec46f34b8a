"""Script tool files: a program run as a subprocess of the step.

The program receives its arguments as `--name value` pairs on its command
line and, the same values, as one JSON object on stdin; stdout is the result,
stderr goes to the trace. Fields: `run` (or the fenced block in the body),
`args`, `timeout`, `interpreter`, `secrets` (materialised — the default — or
`proxied`), `outward`, `test_mode`, `runtime` (packages installed into a
per-tool virtualenv cached by the hash of its requirements; a
`requirements.txt` beside the program counts too).
"""
from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .base import Tool, ToolError

if TYPE_CHECKING:  # pragma: no cover
    from ..step import StepEnv

FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^```", re.S | re.M)
EXTENSION_FOR = {"python": "py", "python3": "py", "py": "py", "bash": "sh", "sh": "sh", "shell": "sh",
                 "javascript": "js", "js": "js", "node": "js"}
INTERPRETER_FOR = {"py": "python3", "sh": "bash", "js": "node"}
STDERR_TAIL = 2000


@dataclass
class ScriptPlan:
    """Where a script tool's program is, and how to run it."""

    name: str
    folder: Path
    program: Path
    interpreter: str
    packages: list[str] = field(default_factory=list)
    build_log: list[str] = field(default_factory=list)


def read_requirements(text: str) -> tuple[list[str], list[str]]:
    """(requirements, log lines). Backslash continuations join; options are not applied."""
    joined: list[str] = []
    buffer = ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            buffer += line[:-1] + " "
            continue
        joined.append(buffer + line)
        buffer = ""
    if buffer:
        joined.append(buffer)
    requirements: list[str] = []
    log: list[str] = []
    for line in joined:
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            log.append(f"requirements.txt: option {line.split()[0]} is not applied")
            continue
        if "--hash" in line:
            line = line.split("--hash", 1)[0].strip()
            log.append(f"requirements.txt: {line} is installed without hash checking")
        if ";" in line:
            log.append(f"requirements.txt: {line} has an environment marker; refused")
            continue
        if " @ " in line or "@" in line.split("==")[0] and "://" in line:
            log.append(f"requirements.txt: {line} names a URL; refused")
            continue
        requirements.append(line.split()[0])
    return requirements, log


def plan_script(name: str, meta: dict, body: str, folder_files: dict[str, str], root: Path) -> ScriptPlan:
    """Materialise the tool's folder (or its fenced block) under `root/.foldrun/tools/<name>/`.

    The Test button calls this too, so a test runs the identical program from
    the identical directory a run would.
    """
    folder = root / ".foldrun" / "tools" / name
    folder.mkdir(parents=True, exist_ok=True)
    for rel, text in folder_files.items():
        target = folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    interpreter = str(meta.get("interpreter") or "")
    if meta.get("run"):
        program = folder / str(meta["run"])
        if not program.is_file():
            raise ToolError(f"{name}: its program {meta['run']} is not beside the tool file")
    else:
        match = FENCE.search(body or "")
        if not match:
            raise ToolError(f"{name}: no `run:` and no fenced code block in the body — there is no program")
        language = match.group(1).lower()
        extension = EXTENSION_FOR.get(language, "py" if not language else language)
        program = folder / f"run.{extension}"
        program.write_text(match.group(2), encoding="utf-8")
        interpreter = interpreter or INTERPRETER_FOR.get(extension, "")
    if not interpreter:
        interpreter = INTERPRETER_FOR.get(program.suffix.lstrip("."), "")
    packages = [str(p) for p in ((meta.get("runtime") or {}).get("packages") or [])]
    log: list[str] = []
    requirements = folder / "requirements.txt"
    if requirements.is_file():
        extra, log = read_requirements(requirements.read_text(encoding="utf-8"))
        packages += extra
    return ScriptPlan(name=name, folder=folder, program=program, interpreter=interpreter,
                      packages=list(dict.fromkeys(packages)), build_log=log)


def runtime_python(packages: list[str], cache_dir: Path, log) -> str:
    """A virtualenv with `packages`, cached by the hash of the sorted requirement list."""
    key = hashlib.sha256("\n".join(sorted(packages)).encode()).hexdigest()[:16]
    venv = cache_dir / key
    python = venv / "bin" / "python"
    if (venv / ".ready").exists():
        return str(python)
    cache_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    done = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "-q", *packages],
                          capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise ToolError(f"installing {', '.join(packages)} failed: {done.stderr.strip()[-500:]}")
    (venv / ".ready").write_text(key)
    log(f"runtime: installed {', '.join(packages)} into environment {key}")
    return str(python)


def argv_for(arguments: dict) -> list[str]:
    argv: list[str] = []
    for key, value in arguments.items():
        argv += [f"--{key}", value if isinstance(value, str) else json.dumps(value)]
    return argv


class ScriptToolRuntime:
    def __init__(self, name: str, meta: dict, body: str, folder_files: dict[str, str]) -> None:
        self.name = name
        self.meta = meta
        self.body = body
        self.folder_files = folder_files
        self.outward = bool(meta.get("outward"))
        self.test_mode_allow = str(meta.get("test_mode", meta.get("testMode", ""))).lower() == "allow"
        raw = meta.get("secrets")
        self.proxied = raw == "proxied"
        self.secret_names = [] if self.proxied or not raw else [str(s) for s in raw]
        self.timeout = float(meta["timeout"]) if meta.get("timeout") not in (None, "") else None
        self._plan: ScriptPlan | None = None

    def tool(self) -> Tool:
        args = self.meta.get("args") or {}
        props = {str(k): {"description": str(v)} for k, v in args.items()} if isinstance(args, dict) else {}
        return Tool(
            name=re.sub(r"[^A-Za-z0-9_-]", "_", self.name)[:64],
            description=str(self.meta.get("description") or f"Run the {self.name} program."),
            input_schema={"type": "object", "properties": props, "required": []},
            handler=self.handler,
            limit_keys=[self.name],
            writes=self.outward,
            outward=self.outward,
            kind="script",
        )

    def plan(self, env: "StepEnv") -> ScriptPlan:
        if self._plan is None:
            self._plan = plan_script(self.name, self.meta, self.body, self.folder_files, env.sandbox.root)
            for line in self._plan.build_log:
                env.log(f"{self.name}: {line}")
        return self._plan

    def handler(self, arguments: dict, env: "StepEnv") -> str:
        plan = self.plan(env)
        interpreter = plan.interpreter
        if plan.packages and interpreter in {"python3", "python", ""} and plan.program.suffix == ".py":
            interpreter = runtime_python(plan.packages, env.venv_cache, env.log)
        command = ([interpreter] if interpreter else []) + [str(plan.program)] + argv_for(arguments)
        extra_env = env.script_env(self)
        result = env.run_program(command, timeout=self.timeout, extra_env=extra_env,
                                 stdin=json.dumps(arguments), cwd=env.sandbox.root, label=self.name,
                                 raise_on_error=True)
        return result
