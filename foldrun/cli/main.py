"""The `foldrun` command line."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    import foldrun

    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["version"]:
        print(f"foldrun {foldrun.__version__}")
        return 0
    print("usage: foldrun <command>", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
