"""Bearer-token authentication for the CLI."""
from __future__ import annotations

from django.utils import timezone
from rest_framework import authentication, exceptions

from .models import TOKEN_PREFIX, ApiToken, hash_token


class TokenAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request):
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        parts = header.split()
        if len(parts) != 2 or parts[0] != self.keyword:
            return None
        raw = parts[1]
        if not raw.startswith(TOKEN_PREFIX):
            raise exceptions.AuthenticationFailed("This API token is not valid; run `foldrun login` for a new one.")
        token = ApiToken.objects.select_related("user", "account").filter(token_hash=hash_token(raw)).first()
        if token is None or token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("This API token is not valid; run `foldrun login` for a new one.")
        if not token.is_active:
            raise exceptions.AuthenticationFailed("This API token has expired; run `foldrun login` for a new one.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("This user is deactivated.")
        now = timezone.now()
        if token.last_used_at is None or (now - token.last_used_at).total_seconds() > 60:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        return (token.user, token)

    def authenticate_header(self, request) -> str:
        return self.keyword
