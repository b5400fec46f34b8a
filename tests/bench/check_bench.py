"""Benchmark: `check` over a generated desk of 2,000 files against bare YAML parsing.

Run it: .venv/bin/python tests/bench/check_bench.py [--files 2000] [--repeat 5]

Prints files/second for `check` (a fresh Desk each time, so it parses every
file itself) and for bare YAML parsing of the same files' frontmatter — both
with yaml.safe_load (what the target names) and with the C loader `check`
itself uses — and the ratio. Target: check ≤ 3× parse.

Not a pytest test (pytest collects test_*.py only, and nothing runs on import).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import yaml  # noqa: E402

from foldrun.contract import Desk, check  # noqa: E402

try:
    from yaml import CSafeLoader
except ImportError:  # pragma: no cover
    CSafeLoader = None  # type: ignore[assignment,misc]


def generate(total: int, seed: int = 7) -> dict[str, str]:
    """A desk of `total` files: agents, flows, tools (flat http, folder script
    with a program and requirements.txt), skills and concepts."""
    rng = random.Random(seed)
    files: dict[str, str] = {
        "AGENTS.md": "---\nlanguage: en-AU\ntimezone: Australia/Sydney\nlimits: {calls: 300, web.search: 40}\nbudget: {month: 40}\n---\nBe precise.\n",
    }
    n_agents = total * 15 // 100
    n_flows = total * 5 // 100
    n_http = total * 10 // 100
    n_script = total * 8 // 100  # three files each: tool.md, run.py, requirements.txt
    n_skills = total * 10 // 100
    for i in range(n_http):
        files[f"tools/api-{i}.md"] = (
            f"---\ntransport: http\nname: api-{i}\ndescription: API number {i}. GET /items to list.\n"
            f"base: https://api{i}.example.com/v1\nmethods: [GET, POST]\nheaders:\n  Authorization: Bearer ${{API_{i}_TOKEN}}\n"
            f"rate: 5/s\ntimeout: 30\n---\n"
        )
    for i in range(n_script):
        files[f"tools/script-{i}/tool.md"] = (
            f"---\ntransport: script\nname: script-{i}\nrun: run.py\noutward: {str(i % 4 == 0).lower()}\n"
            f"secrets: [SCRIPT_{i}_KEY]\ndescription: Script {i}.\nargs:\n  query: what to look up\n  limit: how many\ntimeout: 60\n---\n"
        )
        files[f"tools/script-{i}/run.py"] = (
            "import json, sys, os\nimport httpx\nfrom bs4 import BeautifulSoup\n\n"
            "args = json.load(sys.stdin)\n"
            "r = httpx.get('https://example.com', params={'q': args['query']}, timeout=20)\n"
            "print(BeautifulSoup(r.text, 'html.parser').title)\n"
        )
        files[f"tools/script-{i}/requirements.txt"] = "httpx==0.28.1\nbeautifulsoup4==4.12.3\n"
    # Outward tools are granted only by publishers, whose steps are gated: the desk checks clean.
    tool_names = [f"api-{i}" for i in range(n_http)] + [f"script-{i}" for i in range(n_script) if i % 4 != 0]
    outward_names = [f"script-{i}" for i in range(n_script) if i % 4 == 0]
    publishers = set(range(0, n_agents, 10))
    for i in range(n_skills):
        files[f"skills/skill-{i}/SKILL.md"] = (
            f"---\nname: skill-{i}\ndescription: Do task {i} well. Use when asked about {i}.\n---\nStep one, step two.\n"
        )
    for i in range(n_agents):
        grants = ["read", "search", "web"] + rng.sample(outward_names if i in publishers else tool_names, 3)
        limit_tool = grants[3]
        files[f"agents/agent-{i}/agent.md"] = (
            f"---\nname: agent-{i}\ndescription: Agent number {i}.\ntools: [{', '.join(grants)}]\n"
            f"secrets: [AGENT_{i}_KEY]\nlimits: {{web.search: 20, {limit_tool}: 10, calls: 200}}\n"
            f"provider: {{name: anthropic, model: claude-sonnet-4-5}}\nlanguage: en-AU\n---\n"
            f"You are agent {i}. Do the work carefully and report what you found.\n"
        )
    for i in range(n_flows):
        agents = rng.sample([a for a in range(n_agents) if a not in publishers], 4)
        agents[2] = rng.choice(sorted(publishers))
        files[f"flows/flow-{i}.md"] = (
            f'---\nname: flow-{i}\nschedule: "0 7 * * MON"\ntimezone: Australia/Sydney\nsla: 2h\ndisable_after: 3\n'
            f"approve_within: 2d\napprovers: [owner@example.com]\nbudget: 5.00\n---\n"
            f"1. [[agent-{agents[0]}]] — Find pages about {{{{topic}}}}.\n"
            f"2. [[agent-{agents[1]}]] — Read this page.\n   each: lines\n   max: 10\n"
            f"3. [[agent-{agents[2]}]] ! — Publish the draft.\n   verify: file outputs/receipt.json\n"
            f"4. [[agent-{agents[3]}]] — Give the verdict.\n   limits: {{calls: 50}}\n"
        )
    i = 0
    while len(files) < total:
        where = "knowledge" if i % 2 == 0 else "memory"
        files[f"{where}/concept-{i}.md"] = (
            f"---\ntype: Reference\ntitle: Concept {i}\ndescription: What we know about thing {i}.\n---\n"
            f"| key | value |\n|---|---|\n| thing | {i} |\n"
        )
        i += 1
    return files


def frontmatters(files: dict[str, str]) -> list[str]:
    found = []
    for text in files.values():
        if text.startswith("---\n"):
            end = text.find("\n---", 4)
            if end != -1:
                found.append(text[4:end])
    return found


def best_of(repeat: int, *fns) -> list[float]:
    """The fastest of `repeat` runs of each fn, run interleaved so a busy
    machine slows them alike."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(repeat):
        for index, fn in enumerate(fns):
            if fn is None:
                times[index].append(float("nan"))
                continue
            start = time.perf_counter()
            fn()
            times[index].append(time.perf_counter() - start)
    return [min(t) for t in times]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)

    files = generate(args.files)
    sources = frontmatters(files)
    findings = check(Desk(files=files))  # warm-up: imports, rule registration
    errors = [f for f in findings if f.level == "error"]

    t_check, t_safe, t_c = best_of(
        args.repeat,
        lambda: check(Desk(files=files)),
        lambda: [yaml.safe_load(s) for s in sources],
        (lambda: [yaml.load(s, Loader=CSafeLoader) for s in sources]) if CSafeLoader else None,
    )
    if CSafeLoader is None:
        t_c = None

    n = len(files)
    print(
        f"desk: {n} files ({len(sources)} with frontmatter); check found {len(findings)} findings, {len(errors)} errors"
    )
    print(f"check:                       {n / t_check:10.0f} files/s  ({t_check * 1000:.1f} ms)")
    print(
        f"parse, yaml.safe_load:       {n / t_safe:10.0f} files/s  ({t_safe * 1000:.1f} ms)   check/parse = {t_check / t_safe:.2f}x"
    )
    if t_c is not None:
        print(
            f"parse, yaml CSafeLoader:     {n / t_c:10.0f} files/s  ({t_c * 1000:.1f} ms)   check/parse = {t_check / t_c:.2f}x"
        )
    target_ok = t_check <= 3 * t_safe
    print(f"target check <= 3x parse (yaml.safe_load): {'met' if target_ok else 'MISSED'}")
    if t_c is not None:
        print(f"stricter, check <= 3x parse (CSafeLoader):  {'met' if t_check <= 3 * t_c else 'missed'}")
    return 0 if target_ok else 1


if __name__ == "__main__":
    sys.exit(main())
