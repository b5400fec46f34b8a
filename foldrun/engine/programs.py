"""Programs a step starts (Bash, script tools, stdio MCP servers): in their own namespaces when the
machine allows — PID always, network too on a test run, and a mount namespace that shows the program
only its own sandbox and none of the hidden paths."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from .errors import ToolError

_NAMESPACES: dict[bool, list[str] | None] = {}
_ISOLATION: dict[tuple, bool] = {}

# Run inside the program's fresh mount namespace, before the program: the sandbox folder's other
# sandboxes (other steps, other tenants) disappear under a tmpfs with only this one put back, and
# each path in FOLDRUN_HIDE is masked (a folder by a tmpfs, a file by /dev/null).
ISOLATE = r"""
own="$1"; shift
base=$(dirname "$own")
exec 3< "$own" || exit 97
mount -t tmpfs -o size=256m,mode=1777 tmpfs "$base" && mkdir -p "$own" && mount -c --bind /proc/self/fd/3 "$own" \
  || { echo "foldrun: the sandbox could not be isolated" >&2; exit 97; }
exec 3<&-
IFS='
'
for p in $FOLDRUN_HIDE; do
  if [ -d "$p" ]; then mount -t tmpfs -o size=1m tmpfs "$p" || exit 97
  elif [ -e "$p" ]; then mount --bind /dev/null "$p" || exit 97
  fi
done
unset FOLDRUN_HIDE
cd "$own" || exit 97
exec "$@"
"""


def isolation_works(prefix: list[str]) -> bool:
    """Whether this machine lets the program's namespace mount (probed once per prefix)."""
    key = tuple(prefix)
    if key not in _ISOLATION:
        probe = Path(tempfile.mkdtemp(prefix="foldrun-probe-"))
        try:
            done = subprocess.run(prefix + ["sh", "-c", ISOLATE, "sh", str(probe), "true"], capture_output=True,
                                  timeout=10, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
            _ISOLATION[key] = done.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _ISOLATION[key] = False
        finally:
            shutil.rmtree(probe, ignore_errors=True)
    return _ISOLATION[key]


def namespace_prefix(*, no_network: bool) -> list[str] | None:
    """How to start a step's program: in its own PID namespace (it cannot read the worker's
    /proc/<pid>/environ) and, with `no_network`, in a network namespace with no route. Probed once.
    Without `no_network` the fallback is [] (no namespace); with it, None means "not possible here"."""
    if no_network not in _NAMESPACES:
        net = ["-n"] if no_network else []
        candidates = [["unshare", "-pf", "--mount-proc", *net], ["unshare", "-r", "-pf", "--mount-proc", *net]]
        if no_network:
            candidates += [["unshare", "-n"], ["unshare", "-r", "-n"]]
        found: list[str] | None = [] if not no_network else None
        if shutil.which("unshare"):
            for candidate in candidates:
                try:
                    ok = subprocess.run(candidate + ["true"], capture_output=True, timeout=10).returncode == 0
                except (OSError, subprocess.SubprocessError):
                    ok = False
                if ok:
                    found = candidate
                    break
        _NAMESPACES[no_network] = found
    return _NAMESPACES[no_network]


class Programs:
    """How one step starts its programs (`StepEnv.run_program` and `program_wrapper` delegate here)."""

    def __init__(self, root: Path, *, is_test: bool, hide_under: list[str], keep_visible: list[str],
                 redact: Callable[[str], str], trace: Callable[[str, dict], None], log: Callable[[str], None]) -> None:
        self.root = root
        self.is_test = is_test
        self.hide_under = hide_under
        self.keep_visible = keep_visible
        self.redact = redact
        self.trace = trace
        self.log = log

    def run_program(self, command: list[str], *, timeout: float | None, extra_env: dict[str, str] | None = None,
                    stdin: str | None = None, cwd: Path | None = None, label: str = "Bash",
                    raise_on_error: bool = False) -> str:
        """Run a program in the sandbox; on a test run, in a network namespace with no route."""
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root), "LANG": "C.UTF-8",
               "FOLDRUN_SANDBOX": str(self.root)}
        env.update(extra_env or {})
        wrap, wrap_env = self.program_wrapper()
        if self.is_test:
            self.log(f"test run: {label} runs with no network (outward calls fail closed)")
        env.update(wrap_env)
        command = wrap + command
        started = time.monotonic()
        process = subprocess.Popen(command, cwd=str(cwd or self.root), env=env, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
        try:
            out, err = process.communicate(stdin.encode() if stdin is not None else None, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise ToolError(f"{label}: timed out after {timeout:g}s and was stopped") from None
        seconds = time.monotonic() - started
        stdout = self.redact(out.decode("utf-8", errors="replace"))
        stderr = self.redact(err.decode("utf-8", errors="replace"))
        if stderr.strip():
            self.trace("log", {"program": label, "stderr": stderr[-2000:]})
        if raise_on_error and process.returncode != 0:
            raise ToolError(f"{label} exited with status {process.returncode}\n{stderr.strip()[-2000:]}")
        if not raise_on_error:
            text = stdout + (f"\n[stderr]\n{stderr}" if stderr.strip() else "")
            return (text + f"\n[exit {process.returncode}, {seconds:.1f}s]").strip()
        return stdout

    def program_wrapper(self) -> tuple[list[str], dict[str, str]]:
        """(the argv prefix, the environment it needs) that starts a program of this step in its own
        namespaces: PID (and mount) always when the machine allows, network too on a test run, and — when
        mounts are allowed — seeing only its own sandbox and none of the hidden paths."""
        prefix = namespace_prefix(no_network=self.is_test)
        if self.is_test and prefix is None:
            raise ToolError("test run: no network namespace is available here, so programs do not run")
        if prefix and isolation_works(prefix):
            return prefix + ["sh", "-c", ISOLATE, "sh", str(self.root)], {
                "FOLDRUN_HIDE": "\n".join(self._hidden_paths())}
        return list(prefix or []), {}

    def _hidden_paths(self) -> list[str]:
        """What a program must not see: every entry of the request's `hide_under` folders except `keep`."""
        keep = {str(Path(k).resolve()) for k in self.keep_visible}
        keep.add(str(self.root.resolve()))
        hidden: list[str] = []
        for folder in self.hide_under:
            try:
                entries = list(Path(folder).iterdir())
            except OSError:
                continue
            for entry in entries:
                real = str(entry.resolve())
                if real in keep or any(k.startswith(real + "/") for k in keep):
                    continue
                hidden.append(str(entry))
        return hidden
