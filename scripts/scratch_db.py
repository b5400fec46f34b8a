"""`scratch_db.py create NAME` makes an empty PostgreSQL database NAME beside DATABASE_URL's and prints its URL;
`scratch_db.py drop NAME` removes it (scripts/schemathesis: a fuzzing run never touches a database in use)."""

from __future__ import annotations

import os
import re
import sys
from urllib.parse import urlsplit, urlunsplit

import psycopg


def main(verb: str, name: str) -> None:
    if not re.fullmatch(r"[a-z][a-z0-9_]{0,62}", name):
        raise SystemExit(f"{name!r} is not a database name this script makes")
    parts = urlsplit(os.environ["DATABASE_URL"])
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if verb == "create":
            conn.execute(f'CREATE DATABASE "{name}"')
            print(urlunsplit(parts._replace(path=f"/{name}")))
        elif verb == "drop":
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        else:
            raise SystemExit("use: scratch_db.py create|drop NAME")


if __name__ == "__main__":
    main(*sys.argv[1:3])
