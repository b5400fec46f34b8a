"""Programs a step starts (Bash, script tools, stdio MCP servers): in their own namespaces — PID when the
machine allows, a mount namespace that shows the program only its own sandbox and none of the hidden paths,
and a network namespace: on a test run with no way out at all, on a real run with one, the egress proxy
(foldrun.net.fence), which connects only where the network guard allows."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Callable

from foldrun.net.fence import ProgramFence

from .errors import ToolError

_NAMESPACES: dict[bool, list[str] | None] = {}
_ISOLATION: dict[tuple, bool] = {}

# Run inside the program's fresh mount namespace (private propagation: nothing here reaches the worker),
# before the program:
# - the sandbox folder's other sandboxes (other steps, other tenants) disappear under a tmpfs with only
#   this one put back; on a test run (FOLDRUN_SEAL=1) /tmp itself is a fresh private tmpfs;
# - each path in FOLDRUN_HIDE is masked (a folder by a tmpfs, a file by /dev/null);
# - each knowledge/ folder in FOLDRUN_READONLY (relative to the sandbox) is bind-mounted read-only;
# - on a test run every other mount is remounted read-only: the program writes only its sandbox and /tmp;
# - on a real run (FOLDRUN_FENCE set) the forwarder to the egress proxy is started in the program's network
#   namespace, listening on its loopback, before the program (foldrun/net/fence.py);
# - the program starts without CAP_SYS_ADMIN (setpriv), so even as root it cannot remount or unmount
#   any of this. Exit 97, with a sentence on stderr, when any part cannot be done.
ISOLATE = r"""
own="$1"; shift
base=$(dirname "$own")
fail() { echo "foldrun: $1" >&2; exit 97; }
IFS='
'
exec 3< "$own" || exit 97
if [ "$FOLDRUN_SEAL" = 1 ]; then
  # The runtime folders (FOLDRUN_KEEP) under /tmp are held open, to be put back in the private /tmp — bound
  # with -c: mount(8) otherwise reads the fd's link back as a path, which by then names the empty new /tmp.
  n=4; kept=""
  for k in $FOLDRUN_KEEP; do
    case "$k/" in /tmp/*) [ -d "$k" ] || continue; [ $n -le 9 ] || fail "too many runtime folders under /tmp"
      eval "exec $n< \"\$k\"" || fail "$k could not be kept"; kept="$kept$n:$k
"; n=$((n+1));; esac
  done
  mount -t tmpfs -o size=256m,mode=1777 tmpfs /tmp || fail "a private /tmp could not be mounted"
  for line in $kept; do
    mkdir -p "${line#*:}" && mount -c --bind "/proc/self/fd/${line%%:*}" "${line#*:}" || fail "${line#*:} could not be kept"
  done
  case "$base/" in /tmp/*) ;; *) mount -t tmpfs -o size=256m,mode=1777 tmpfs "$base" || fail "the sandbox could not be isolated";; esac
else
  mount -t tmpfs -o size=256m,mode=1777 tmpfs "$base" || fail "the sandbox could not be isolated"
fi
mkdir -p "$own" && mount -c --bind /proc/self/fd/3 "$own" || fail "the sandbox could not be isolated"
exec 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&-
for p in $FOLDRUN_HIDE; do
  if [ -d "$p" ]; then mount -t tmpfs -o size=1m tmpfs "$p" || exit 97
  elif [ -e "$p" ]; then mount --bind /dev/null "$p" || exit 97
  fi
done
for p in $FOLDRUN_READONLY; do
  mount --bind "$own/$p" "$own/$p" && mount -o remount,bind,ro "$own/$p" || fail "$p could not be made read-only"
done
if [ "$FOLDRUN_SEAL" = 1 ]; then
  mount -o remount,bind,ro / || fail "the file system could not be made read-only outside the sandbox"
  while IFS=' ' read -r _id _parent _dev _root point _rest; do
    case "$point" in
      /|/proc|/proc/*|/sys|/sys/*|/dev|/dev/*|/tmp) continue;;
      "$own"|"$own"/*) continue;;
    esac
    mount -o remount,bind,ro "$point" 2>/dev/null || fail "$point could not be made read-only"
  done < /proc/self/mountinfo
fi
if [ -n "$FOLDRUN_FENCE" ]; then
  "$FOLDRUN_FENCE_PYTHON" -I -S -c "$FOLDRUN_FENCE" "$FOLDRUN_FENCE_SOCKET" "$FOLDRUN_FENCE_PORT" "$$" \
    </dev/null >/dev/null 2>&1 || fail "the program's way out through the egress proxy could not be started"
fi
unset FOLDRUN_HIDE FOLDRUN_READONLY FOLDRUN_SEAL FOLDRUN_KEEP FOLDRUN_FENCE FOLDRUN_FENCE_PYTHON FOLDRUN_FENCE_SOCKET \
  FOLDRUN_FENCE_PORT
cd "$own" || exit 97
exec setpriv --bounding-set=-sys_admin -- "$@"
"""


def isolation_works(prefix: list[str]) -> bool:
    """Whether this machine lets the program's namespace mount (probed once per prefix)."""
    key = tuple(prefix)
    if key not in _ISOLATION:
        probe = Path(tempfile.mkdtemp(prefix="foldrun-probe-"))
        (probe / "knowledge").mkdir()
        try:
            # Everything a test run's program gets, tried once: the read-only knowledge/, the sealed rest.
            done = subprocess.run(
                prefix + ["sh", "-c", ISOLATE, "sh", str(probe), "true"],
                capture_output=True,
                timeout=10,
                env={
                    "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                    "FOLDRUN_READONLY": "knowledge",
                    "FOLDRUN_SEAL": "1",
                },
            )
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


def listening_sockets(*, exclude: str) -> list[str]:
    """The machine's listening Unix sockets that have a path (a database's, a broker's), outside `exclude`: a
    Unix socket is a file, reached from any network namespace, so the program's mount namespace masks each."""
    try:
        lines = Path("/proc/net/unix").read_text().splitlines()[1:]
    except OSError:
        return []
    found: list[str] = []
    for line in lines:
        fields = line.split(None, 7)
        # Flags 00010000: listening; a path begins with "/" (an abstract name with "@" stays in its namespace).
        if len(fields) == 8 and fields[3] == "00010000" and fields[7].startswith("/"):
            path = fields[7]
            if path != exclude and not path.startswith(exclude.rstrip("/") + "/") and path not in found:
                found.append(path)
    return found


class Programs:
    """How one step starts its programs (`StepEnv.run_program` and `program_wrapper` delegate here)."""

    def __init__(
        self,
        root: Path,
        *,
        is_test: bool,
        hide_under: list[str],
        keep_visible: list[str],
        redact: Callable[[str], str],
        trace: Callable[[str, dict], None],
        log: Callable[[str], None],
        allow_private: bool = False,
        fence_required: bool = True,
    ) -> None:
        self.root = root
        self.is_test = is_test
        self.hide_under = hide_under
        self.keep_visible = keep_visible
        self.redact = redact
        self.trace = trace
        self.log = log
        self.keep: list[str] = []  # runtime folders a sealed program still needs (the venv cache)
        self.allow_private = allow_private  # the install's opt-in, for what the egress proxy may reach
        # A server's run never starts a program on the worker's own network; the laptop CLI (the user's own
        # machine) falls back to it, saying so, where the machine cannot make the namespace.
        self.fence_required = fence_required
        self._fence: ProgramFence | None = None
        self._egress_url = ""
        self._warned = False

    def run_program(
        self,
        command: list[str],
        *,
        timeout: float | None,
        extra_env: dict[str, str] | None = None,
        stdin: str | None = None,
        cwd: Path | None = None,
        label: str = "Bash",
        raise_on_error: bool = False,
    ) -> str:
        """Run a program in the sandbox, in its network namespace: no route on a test run, the egress proxy
        on a real one."""
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.root),
            "LANG": "C.UTF-8",
            "FOLDRUN_SANDBOX": str(self.root),
        }
        env.update(extra_env or {})
        wrap, wrap_env = self.program_wrapper()
        if self._fence is not None and env.get("FOLDRUN_EGRESS"):
            env["FOLDRUN_EGRESS"] = self.reach_egress(env["FOLDRUN_EGRESS"])
        if self.is_test:
            self.log(f"test run: {label} runs with no network (outward calls fail closed)")
        env.update(wrap_env)
        command = wrap + command
        started = time.monotonic()
        process = subprocess.Popen(
            command,
            cwd=str(cwd or self.root),
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = process.communicate(stdin.encode() if stdin is not None else None, timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            self.note_refusals()
            raise ToolError(f"{label}: timed out after {timeout:g}s and was stopped") from None
        self.note_refusals()
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
        namespaces: network (no route on a test run; on a real run only the egress proxy), mount, and PID
        where the machine allows. In the mount namespace the program sees only its own sandbox and none of
        the hidden paths (nor the machine's listening Unix sockets), knowledge/ is read-only, and on a test
        run so is everything outside the sandbox, with a private /tmp. Without the namespaces a program does
        not run (ToolError): never on the worker's own network."""
        prefix = namespace_prefix(no_network=True)
        isolated = bool(prefix) and isolation_works(prefix)
        if self.is_test and prefix is None:
            raise ToolError("test run: no network namespace is available here, so programs do not run")
        if self.is_test and not isolated:
            raise ToolError(
                "test run: no mount namespace is available here, so programs do not run (knowledge/ "
                "and the file system outside the sandbox could not be held read-only)"
            )
        if not isolated:
            if self.fence_required:
                raise ToolError(
                    "programs do not run on this machine: it cannot give a program its own network and "
                    "mount namespaces (unshare -n and -m, or -r for a user namespace), and a step's "
                    "program is never run on the worker's own network — see docs/operating.md"
                )
            return self._unfenced()
        env = {"FOLDRUN_HIDE": "\n".join(self._hidden_paths()), "FOLDRUN_READONLY": "\n".join(self._knowledge())}
        if self.is_test:
            env.update(FOLDRUN_SEAL="1", FOLDRUN_KEEP="\n".join(self.keep))
        else:
            env.update(self._fence_env())
        return list(prefix or []) + ["sh", "-c", ISOLATE, "sh", str(self.root)], env

    def _fence_env(self) -> dict[str, str]:
        """The egress proxy for this step's programs, started with the first of them."""
        if self._fence is None:
            try:
                self._fence = ProgramFence(self.root / ".foldrun", allow_private=self.allow_private)
            except OSError as exc:
                raise ToolError(
                    f"programs do not run: the egress proxy's socket could not be made in the step's "
                    f"folder ({exc.strerror or exc})"
                ) from None
            reach = (
                "public addresses only"
                if not self.allow_private
                else "private addresses too, as this install opted in (FOLDRUN_ALLOW_PRIVATE_URLS)"
            )
            self.log(
                f"programs run in a network namespace of their own: their only way out is the egress proxy "
                f"(HTTP_PROXY and HTTPS_PROXY, set for them), which reaches {reach}, and a connection to any "
                f"other address fails"
            )
        return self._fence.env()

    def _unfenced(self) -> tuple[list[str], dict[str, str]]:
        """The laptop's fallback where namespaces are not to be had: the program on the machine's network."""
        if not self._warned:
            self._warned = True
            self.log(
                "programs run on this machine's own network, without a mount namespace: it cannot make "
                "them (knowledge/ is read-only by file mode only)"
            )
        return list(namespace_prefix(no_network=False) or []), {}

    def reach_egress(self, url: str) -> str:
        """FOLDRUN_EGRESS as the program reaches it: through its way out, when it has one."""
        self._egress_url = url
        return self._fence.reach_egress(url) if self._fence is not None else url

    def note_refusals(self) -> None:
        """The egress proxy's refusals so far, each one sentence on the step's trace."""
        if self._fence is not None:
            for line in self._fence.drain():
                self.log(line)

    def close(self) -> None:
        if self._fence is not None:
            self.note_refusals()
            self._fence.close()
            self._fence = None

    def _knowledge(self) -> list[str]:
        """The sandbox's knowledge/ folders (the workspace's, each agent's, the library's), relative."""
        found = [p for p in ("knowledge", "library/knowledge") if (self.root / p).is_dir()]
        agents = self.root / "agents"
        if agents.is_dir():
            found += [
                f"agents/{a.name}/knowledge"
                for a in sorted(agents.iterdir())
                if (a / "knowledge").is_dir() and not (a / "knowledge").is_symlink()
            ]
        return [p for p in found if not (self.root / p).is_symlink()]

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
        return hidden + listening_sockets(exclude=str(self.root))
