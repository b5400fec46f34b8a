"""OpenAPI: how /api/schema/ describes the CLI's bearer tokens."""

from __future__ import annotations

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class TokenAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "accounts.auth.TokenAuthentication"
    name = "foldrunToken"

    def get_security_definition(self, auto_schema):
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An API token (frt_…) from `foldrun login` or Settings → Tokens.",
        }
