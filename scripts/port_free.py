"""Whether ./scripts/start can have its port: exit 0 when 127.0.0.1:PORT is free, else say once which port is
taken and a free one to set instead, and exit 1. Standard library only: it runs before .venv exists."""

from __future__ import annotations

import socket
import sys


def free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # As gunicorn binds: SO_REUSEADDR, so a port left in TIME_WAIT by the last start counts as free.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def main(argv: list[str]) -> int:
    raw = argv[0] if argv else "8000"
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        print(f"PORT={raw} is not a port; set PORT to a number from 1 to 65535.", file=sys.stderr)
        return 1
    port = int(raw)
    if free(port):
        return 0
    other = next((p for p in range(port + 1, min(port + 100, 65536)) if free(p)), None)
    if other is None:
        print(f"port {port} is taken — set PORT to a free port: PORT=<port> ./scripts/start", file=sys.stderr)
    else:
        print(f"port {port} is taken — set PORT={other} (free now): PORT={other} ./scripts/start", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
