"""`schemathesis_reach.py SCHEMA.json ACCESS.log`: which operations that name an object in their path the fuzzer
actually reached — answered at least once with anything but a 404 (or the 401 of a case sent without the
token, which never gets as far as the lookup) — read from the web server's access log.

scripts/schemathesis prints it after a run: an operation that only ever heard 404 was fuzzed against nothing
(its checks ran on the not-found answer alone), which a green run would otherwise hide.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter, defaultdict
from urllib.parse import unquote, urlsplit

METHODS = {"get", "post", "put", "patch", "delete"}
# uvicorn's access line: `127.0.0.1:40000 - "GET /api/me HTTP/1.1" 200`
LINE = re.compile(r'^\S+ - "(?P<method>[A-Z]+) (?P<target>\S+) HTTP/[\d.]+" (?P<status>\d{3})')


def _matchers(schema: dict) -> list[tuple[str, str, re.Pattern[str]]]:
    out = []
    for path, item in schema["paths"].items():
        if "{" not in path:
            continue
        # A file's {path} spans folders; any other parameter is one segment.
        regex = "^" + re.escape(path).replace(r"\{path\}", ".+") + "$"
        regex = re.sub(r"\\\{[^}]+\\\}", "[^/]+", regex)
        for method, op in item.items():
            if method in METHODS:
                out.append((method.upper(), op["operationId"], re.compile(regex)))
    # The most specific first: `/files/{path}/history` before `/files/{path}`.
    return sorted(out, key=lambda m: -len(m[2].pattern))


def main(schema_file: str, log_file: str) -> None:
    matchers = _matchers(json.load(open(schema_file)))
    statuses: dict[str, Counter] = defaultdict(Counter)
    for line in open(log_file, errors="replace"):
        hit = LINE.match(line)
        if not hit:
            continue
        path = unquote(urlsplit(hit["target"]).path)
        for method, operation, regex in matchers:
            if method == hit["method"] and regex.match(path):
                statuses[operation][hit["status"]] += 1
                break
    operations = sorted({op for _, op, _ in matchers})
    reached = [op for op in operations if any(s not in ("401", "404") for s in statuses[op])]
    for op in operations:
        seen = ", ".join(f"{s}×{n}" for s, n in sorted(statuses[op].items())) or "never called"
        print(f"  {'reached' if op in reached else 'only 404'}  {op}: {seen}")
    print(
        f"schemathesis: {len(reached)} of {len(operations)} operations that name an object in their path got past 404"
    )


if __name__ == "__main__":
    main(*sys.argv[1:3])
