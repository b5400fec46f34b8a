"""An internal error, as a person sees it: a sentence and a code, never a class name.

What broke inside the platform is of no use to the person reading a run —
`KeyError: 'verify'` tells them nothing they can act on, and an exception's
text can carry a value that should not be shown. They get a sentence with an
incident code; the platform's log gets the traceback under the same code, so
staff can find it from a screenshot or a support mail.
"""

from __future__ import annotations

import logging
import secrets

_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


def new_code() -> str:
    return "err_" + "".join(secrets.choice(_ALPHABET) for _ in range(10))


def record(log: logging.Logger, what: str, *args: object) -> str:
    """Log the exception being handled with a fresh incident code; return the code.

    Call it only inside an `except` block (it logs the traceback of the exception in flight).
    """
    code = new_code()
    log.exception(what + " [incident %s]", *args, code)
    return code


def sentence(what: str, code: str) -> str:
    """`the step stopped on an internal error (incident err_…; the platform's log has the details)`."""
    return f"{what} stopped on an internal error (incident {code}; the platform's log has the details)"
