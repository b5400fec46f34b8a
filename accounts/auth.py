"""Bearer-token authentication: the API's (DRF) and the MCP server's share `check_token`."""

from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.utils import timezone
from rest_framework import authentication, exceptions

from foldrun import incidents
from foldrun.errors import ApiError

from .models import TOKEN_PREFIX, ApiToken, hash_token

INVALID_TOKEN = "This API token is not valid; run `foldrun login` for a new one."
EXPIRED_TOKEN = "This API token has expired; run `foldrun login` for a new one."
INACTIVE_USER = "This user is deactivated."

log = logging.getLogger(__name__)


class InvalidToken(Exception):
    """A bearer token that does not let its holder in; the message says why, in a sentence."""


def check_token(raw: str) -> ApiToken:
    """The live token whose raw value is `raw` (with its user and account), or `InvalidToken`."""
    if not raw.startswith(TOKEN_PREFIX):
        raise InvalidToken(INVALID_TOKEN)
    token = ApiToken.objects.select_related("user", "account").filter(token_hash=hash_token(raw)).first()
    if token is None or token.revoked_at is not None:
        raise InvalidToken(INVALID_TOKEN)
    if not token.is_active:
        raise InvalidToken(EXPIRED_TOKEN)
    if not token.user.is_active:
        raise InvalidToken(INACTIVE_USER)
    now = timezone.now()
    if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token


class TokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"
    openapi_unavailable = True  # foldrun.openapi documents the 503 below on every view that checks a token

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if len(parts) != 2 or parts[0] != self.keyword:
            return None
        try:
            token = check_token(parts[1])
        except InvalidToken as exc:
            raise exceptions.AuthenticationFailed(str(exc)) from None
        except (OperationalError, InterfaceError):
            # The database did not answer (down, or out of connections): the token is not known to be bad, so
            # not a 401; a 503 that says to try again, as the MCP server's token check answers.
            code = incidents.record(log, "api: the token could not be checked")
            raise ApiError(
                incidents.sentence("Checking the API token", code) + "; try again.",
                code="server_error",
                status_code=503,
                details={"incident": code},
            ) from None
        return (token.user, token)

    def authenticate_header(self, request) -> str:
        return self.keyword
