"""OpenAPI at /api/schema/ describes every API route (read from the URLconf), the account and library APIs'
bodies, and the bearer token the API takes. (Issue 2, item 5.)"""

from __future__ import annotations

import re

import yaml

from .conftest import api_routes


def test_the_openapi_schema_describes_every_api_route(alice_api):
    response = alice_api.get("/api/schema/")
    assert response.status_code == 200
    schema = yaml.safe_load(response.content)
    assert schema["openapi"].startswith("3.")
    documented = set(schema["paths"])
    expected = {
        re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", route)
        for route, cls, methods in api_routes()
        if route != "/api/schema/" and methods
    }
    assert expected - documented == set()


def _undocumented(alice_api, prefixes: tuple[str, ...]) -> list[str]:
    """Operations under `prefixes` whose schema has no request body (writes) or no response body (reads)."""
    schema = yaml.safe_load(alice_api.get("/api/schema/").content)
    missing = []
    for path, operations in schema["paths"].items():
        if not path.startswith(prefixes):
            continue
        for method, operation in operations.items():
            if method in ("post", "put", "patch") and "requestBody" not in operation:
                missing.append(f"{method.upper()} {path} takes no documented body")
            if method == "get" and not any("content" in r for r in operation.get("responses", {}).values()):
                missing.append(f"{method.upper()} {path} answers no documented body")
    return missing


ACCOUNT_PATHS = (
    "/api/version",
    "/api/me",
    "/api/workspaces",
    "/api/members",
    "/api/invites",
    "/api/tokens",
    "/api/auth/",
)
LIBRARY_PATHS = ("/api/library", "/api/gallery") + tuple(
    f"/api/workspaces/{{ws}}/{route}" for route in ("push", "deploy", "check", "files", "revisions", "diff")
)


def test_the_schema_documents_the_account_apis_bodies(alice_api):
    missing = [m for m in _undocumented(alice_api, ACCOUNT_PATHS) if "/api/workspaces/{ws}/" not in m]
    assert missing == []


def test_the_schema_says_the_api_takes_a_bearer_token(alice_api):
    schema = yaml.safe_load(alice_api.get("/api/schema/").content)
    assert schema["components"]["securitySchemes"]["foldrunToken"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "An API token (frt_…) from `foldrun login` or Settings → Tokens.",
    }


def test_the_schema_documents_the_library_apis_bodies(alice_api):
    assert _undocumented(alice_api, LIBRARY_PATHS) == []
