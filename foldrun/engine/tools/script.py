"""Script tool files: a program run as a subprocess of the step.

The program receives its arguments as `--name value` pairs on its command
line and, the same values, as one JSON object on stdin; stdout is the result,
stderr goes to the trace. Fields: `run` (or the fenced block in the body),
`args`, `timeout`, `interpreter`, `secrets` (materialised — the default — or
`proxied`), `outward`, `test_mode`, `runtime` (packages installed into a
per-tool virtualenv cached by the hash of its requirements; a
`requirements.txt` beside the program counts too; `runtime: npm:` and a
`package.json`'s `dependencies` are installed with npm into a per-tool
`node_modules`, cached the same way, which the program finds beside it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .base import Tool, ToolError
from .registry import ToolPlan, register_transport

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ToolContext

FENCE = re.compile(r"^```([A-Za-z0-9_+-]*)[^\n]*\n(.*?)^```", re.S | re.M)
EXTENSION_FOR = {
    "python": "py",
    "python3": "py",
    "py": "py",
    "bash": "sh",
    "sh": "sh",
    "shell": "sh",
    "javascript": "js",
    "js": "js",
    "node": "js",
}
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
    npm: dict[str, str] = field(default_factory=dict)  # package name -> version range (or file: spec)
    npm_key: str = ""  # what the npm environment is cached by
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
    npm, npm_log = npm_dependencies(meta, folder_files)
    log += npm_log
    return ScriptPlan(
        name=name,
        folder=folder,
        program=program,
        interpreter=interpreter,
        packages=list(dict.fromkeys(packages)),
        npm=npm,
        npm_key=npm_key(npm, folder_files),
        build_log=log,
    )


def _npm_spec(entry: str) -> tuple[str, str]:
    """`left-pad@1.3.0` -> ("left-pad", "1.3.0"); `@scope/pkg@^2` -> ("@scope/pkg", "^2"); a bare name -> "*"."""
    at = entry.rfind("@")
    if at > 0:
        return entry[:at], entry[at + 1 :] or "*"
    return entry, "*"


def npm_dependencies(meta: dict, folder_files: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """`package.json`'s `dependencies` merged with `runtime: npm:` (a list of `name@range`, or a mapping);
    tool.md wins for a name in both. (dependencies, build-log lines)."""
    found: dict[str, str] = {}
    log: list[str] = []
    text = folder_files.get("package.json")
    if text is not None:
        try:
            declared = json.loads(text).get("dependencies") or {}
            if not isinstance(declared, dict):
                raise ValueError("dependencies is not an object")
            found.update({str(k): str(v) for k, v in declared.items()})
        except (ValueError, AttributeError) as exc:
            log.append(f"package.json: not read ({exc})")
    runtime = meta.get("runtime") if isinstance(meta.get("runtime"), dict) else {}
    wanted = runtime.get("npm") or []
    if isinstance(wanted, dict):
        found.update({str(k): str(v) for k, v in wanted.items()})
    elif isinstance(wanted, (list, tuple)):
        found.update(dict(_npm_spec(str(e)) for e in wanted))
    elif isinstance(wanted, str):
        found.update(dict(_npm_spec(e) for e in wanted.split()))
    return found, log


def npm_key(npm: dict[str, str], folder_files: dict[str, str]) -> str:
    """The hash the npm environment is cached by: the dependencies as declared, and the files of any
    `file:` dependency inside the tool's folder (a change there is a new environment)."""
    if not npm:
        return ""
    digest = hashlib.sha256(json.dumps(sorted(npm.items())).encode())
    for spec in sorted(npm.values()):
        if spec.startswith("file:") and not spec[5:].startswith("/"):
            prefix = os.path.normpath(spec[5:]).rstrip("/") + "/"
            for rel in sorted(r for r in folder_files if r.startswith(prefix)):
                digest.update(rel.encode() + b"\0" + folder_files[rel].encode() + b"\0")
    return digest.hexdigest()[:16]


def runtime_npm(plan: ScriptPlan, cache_dir: Path, log) -> Path:
    """A `node_modules` holding the tool's npm dependencies, cached under `cache_dir/npm/<hash>`.

    Installed into a fresh folder and renamed into place, so two steps installing the same
    environment at once both end with a whole one. A relative `file:` dependency is read from
    the tool's folder in this step's sandbox and copied in (`--install-links`), not linked."""
    target = cache_dir / "npm" / plan.npm_key
    if (target / ".ready").exists():
        return target / "node_modules"
    npm = shutil.which("npm")
    if npm is None:
        raise ToolError(f"{plan.name}: declares npm packages ({', '.join(plan.npm)}) and npm is not installed here")
    building = cache_dir / "npm" / f".{plan.npm_key}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    building.mkdir(parents=True)
    dependencies = {
        name: (
            f"file:{(plan.folder / spec[5:]).resolve()}"
            if spec.startswith("file:") and not spec[5:].startswith("/")
            else spec
        )
        for name, spec in plan.npm.items()
    }
    (building / "package.json").write_text(
        json.dumps({"name": "foldrun-tool-environment", "private": True, "dependencies": dependencies})
    )
    try:
        done = subprocess.run(
            [
                npm,
                "install",
                "--no-audit",
                "--no-fund",
                "--no-update-notifier",
                "--install-links",
                "--omit=dev",
                "--loglevel=error",
            ],
            cwd=str(building),
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode != 0:
            raise ToolError(f"installing npm {', '.join(plan.npm)} failed: {done.stderr.strip()[-500:]}")
        (building / "node_modules").mkdir(exist_ok=True)
        (building / ".ready").write_text(plan.npm_key)
        _move_into_place(building, target)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    log(
        f"{plan.name}: runtime: installed npm {', '.join(f'{n}@{v}' for n, v in sorted(plan.npm.items()))} into environment "
        f"{plan.npm_key}"
    )
    return target / "node_modules"


def runtime_python(packages: list[str], cache_dir: Path, log) -> str:
    """A virtualenv with `packages`, cached by the hash of the sorted requirement list.

    Built in a fresh folder and renamed into place once installed, so two steps building the same
    environment at once each end with a whole one (and a half-built one is never used)."""
    key = hashlib.sha256("\n".join(sorted(packages)).encode()).hexdigest()[:16]
    venv = cache_dir / key
    python = venv / "bin" / "python"
    if (venv / ".ready").exists():
        return str(python)
    cache_dir.mkdir(parents=True, exist_ok=True)
    building = cache_dir / f".{key}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    try:
        subprocess.run([sys.executable, "-m", "venv", str(building)], check=True, capture_output=True, timeout=120)
        done = subprocess.run(
            [str(building / "bin" / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q", *packages],
            capture_output=True,
            text=True,
            timeout=900,
        )
        if done.returncode != 0:
            raise ToolError(f"installing {', '.join(packages)} failed: {done.stderr.strip()[-500:]}")
        (building / ".ready").write_text(key)
        _move_into_place(building, venv)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    log(f"runtime: installed {', '.join(packages)} into environment {key}")
    return str(python)


def _move_into_place(building: Path, target: Path) -> None:
    """Rename a finished environment to its cached name; another step's finished one there is as good."""
    if target.exists() and not (target / ".ready").exists():
        shutil.rmtree(target, ignore_errors=True)  # half-built by an older foldrun that installed in place
    try:
        building.rename(target)
    except OSError:
        if not (target / ".ready").exists():
            raise


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
            # `args:` declare exactly the names a call may pass: another name never reaches the program.
            input_schema={"type": "object", "properties": props, "required": [], "additionalProperties": False},
            handler=self.handler,
            limit_keys=[self.name],
            writes=self.outward,
            outward=self.outward,
            kind="script",
        )

    def plan(self, env: "ToolContext") -> ScriptPlan:
        if self._plan is None:
            self._plan = plan_script(self.name, self.meta, self.body, self.folder_files, env.sandbox.root)
            for line in self._plan.build_log:
                env.log(f"{self.name}: {line}")
        return self._plan

    def handler(self, arguments: dict, env: "ToolContext") -> str:
        plan = self.plan(env)
        interpreter = plan.interpreter
        # `interpreter: python3` (or `python`) means the tool's own environment when it has a runtime:
        # whatever the program is called (tools.md); a .py program with no interpreter named means it too.
        own_python = interpreter in {"python3", "python"} or (not interpreter and plan.program.suffix == ".py")
        if plan.packages and own_python:
            interpreter = runtime_python(plan.packages, env.venv_cache, env.log)
        command = ([interpreter] if interpreter else []) + [str(plan.program)] + argv_for(arguments)
        extra_env = env.script_env(self)
        if plan.npm:
            modules = runtime_npm(plan, env.venv_cache, env.log)
            # Found beside the program (node looks in ./node_modules first), and by NODE_PATH for a
            # program that is not in the tool's folder.
            link = plan.folder / "node_modules"
            if not link.exists() and not link.is_symlink():
                link.symlink_to(modules, target_is_directory=True)
            extra_env["NODE_PATH"] = str(modules)
        result = env.run_program(
            command,
            timeout=self.timeout,
            extra_env=extra_env,
            stdin=json.dumps(arguments),
            cwd=env.sandbox.root,
            label=self.name,
            raise_on_error=True,
        )
        # print() ends with a newline; the model and `foldrun tool test` get the value, not the line break.
        return result.rstrip("\r\n")


def plan_script_tool(tool_file: Any, ctx: "ToolContext") -> ToolPlan:
    """A script tool file: its declared `secrets:` (none when proxied), then its one tool."""
    runtime = ScriptToolRuntime(tool_file.name, tool_file.meta, tool_file.body, tool_file.folder_files)
    return ToolPlan(list(runtime.secret_names), lambda: [runtime.tool()], outward=runtime.outward)


register_transport("script", plan_script_tool)
