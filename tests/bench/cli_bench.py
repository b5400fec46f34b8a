"""Benchmark: how long `foldrun` takes to answer, against a bare `python -c pass` measured in the same run.

Run it: .venv/bin/python tests/bench/cli_bench.py [--rounds 11]

Each round runs, one after the other, a bare interpreter (`python -c pass`), `foldrun --version`,
`foldrun --help` and `foldrun check` of the desk `foldrun init` writes (offline: no server is configured),
each as a fresh process the way a person runs it (bytecode cached, PYTHONDONTWRITEBYTECODE unset, one
warm-up round first). Rounds alternate the order, so a busy machine slows them alike. Prints each one's
median wall time, its median over the baseline's, and the machine's load average before and after.
Targets (issue 35): --help and --version within 0.3 s, check of a small desk within 0.6 s, on a machine
where the baseline is 0.03–0.10 s.

Not a pytest test (pytest collects test_*.py only, and nothing runs on import).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGETS = {"--version": 0.3, "--help": 0.3, "check (small desk)": 0.6}


def foldrun_command() -> list[str]:
    script = Path(sys.executable).with_name("foldrun")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "import sys; from foldrun.cli.main import main; sys.exit(main())"]


def timed(argv: list[str], env: dict[str, str], cwd: str) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    took = time.perf_counter() - start
    if done.returncode not in (0, 1):  # check exits 1 on an error finding; anything else is a broken run
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.strip()[-500:]}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=11)
    args = parser.parse_args()
    foldrun = foldrun_command()
    with tempfile.TemporaryDirectory(prefix="foldrun-cli-bench-") as scratch:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"PYTHONDONTWRITEBYTECODE", "FOLDRUN_URL", "FOLDRUN_TOKEN", "DJANGO_SETTINGS_MODULE"}
        }
        env["FOLDRUN_HOME"] = str(Path(scratch) / "home")
        subprocess.run(foldrun + ["init", "desk"], env=env, cwd=scratch, check=True, stdout=subprocess.DEVNULL)
        cases = {
            "python -c pass (baseline)": [sys.executable, "-c", "pass"],
            "--version": foldrun + ["--version"],
            "--help": foldrun + ["--help"],
            "check (small desk)": foldrun + ["check", "desk"],
        }
        load_before = os.getloadavg()
        for argv in cases.values():  # warm-up: bytecode written, files in the page cache
            timed(argv, env, scratch)
        times: dict[str, list[float]] = {name: [] for name in cases}
        names = list(cases)
        for round_number in range(args.rounds):
            order = names if round_number % 2 == 0 else list(reversed(names))
            for name in order:
                times[name].append(timed(cases[name], env, scratch))
        load_after = os.getloadavg()
    baseline = statistics.median(times[names[0]])
    print(
        f"{args.rounds} rounds, load average {load_before[0]:.2f} before, {load_after[0]:.2f} after "
        f"({os.cpu_count()} cores)"
    )
    # A loaded machine slows every process alike: the ratio, times the target machine's slowest baseline
    # (0.10 s), says what a quiet machine would show.
    print(f"{'command':28} {'median':>8} {'× baseline':>11} {'at 0.10 s':>10}  target")
    for name in names:
        median = statistics.median(times[name])
        ratio = median / baseline
        target = TARGETS.get(name)
        verdict = "" if target is None else f"{target:.1f} s {'met' if ratio * 0.10 <= target else 'MISSED'}"
        print(f"{name:28} {median:7.3f}s {ratio:10.1f}× {ratio * 0.10:9.3f}s  {verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
