"""A loopback OAuth2 provider: an authorize endpoint that consents at once
(302 to the redirect URI with code and state) and a token endpoint speaking
RFC 6749 (form-encoded requests, JSON answers), checking PKCE S256.

    with FakeOAuth() as fake:
        fake.auth_url, fake.token_url
        fake.issue_refresh_tokens = False     # a provider like GitHub
        fake.rotate_refresh_tokens = True     # a new refresh token on every refresh
        fake.refuse_next = "invalid_grant"    # the next token request gets a 400
        fake.refreshes                        # how many refreshes it answered
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.fakes.loopback import LoopbackServer, QuietHandler


class FakeOAuth(LoopbackServer):
    def __init__(self, client_id: str = "app-123", client_secret: str = "app-secret-xyz") -> None:
        self.client_id = client_id
        self.client_secret = client_secret
        self.issue_refresh_tokens = True
        self.rotate_refresh_tokens = False
        self.expires_in: int | None = 3600
        self.refuse_next: str | None = None
        self.token_delay = 0.0
        self.refreshes = 0
        self.codes: dict[str, dict[str, Any]] = {}
        self.valid_refresh: set[str] = set()
        self.authorize_requests: list[dict[str, str]] = []
        self.token_requests: list[dict[str, str]] = []
        self._lock = threading.Lock()
        fake = self

        class Handler(QuietHandler):
            def _json(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != "/authorize":
                    self._json(404, {"error": "not_found"})
                    return
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                fake.authorize_requests.append(query)
                code = secrets.token_urlsafe(12)
                fake.codes[code] = query
                target = query["redirect_uri"] + "?" + urlencode({"code": code, "state": query.get("state", "")})
                self.send_response(302)
                self.send_header("location", target)
                self.send_header("content-length", "0")
                self.end_headers()

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode()).items()}
                fake.token_requests.append(form)
                if fake.token_delay:
                    time.sleep(fake.token_delay)
                status, payload = fake._token(form)
                self._json(status, payload)

        super().__init__(Handler)
        self.base_url = self.url
        self.auth_url = self.base_url + "/authorize"
        self.token_url = self.base_url + "/token"

    def grant_refresh_token(self) -> str:
        token = "rt-" + secrets.token_urlsafe(12)
        self.valid_refresh.add(token)
        return token

    def _tokens(self) -> dict[str, Any]:
        answer: dict[str, Any] = {"access_token": "at-" + secrets.token_urlsafe(12), "token_type": "Bearer"}
        if self.expires_in is not None:
            answer["expires_in"] = self.expires_in
        return answer

    def _token(self, form: dict[str, str]) -> tuple[int, dict]:
        with self._lock:
            if self.refuse_next:
                error, self.refuse_next = self.refuse_next, None
                return 400, {"error": error, "error_description": "refused by the fake"}
            if form.get("client_id") != self.client_id or form.get("client_secret") != self.client_secret:
                return 401, {"error": "invalid_client"}
            grant = form.get("grant_type")
            if grant == "authorization_code":
                asked = self.codes.pop(form.get("code", ""), None)
                if asked is None or asked.get("redirect_uri") != form.get("redirect_uri"):
                    return 400, {"error": "invalid_grant"}
                if asked.get("code_challenge"):
                    verifier = form.get("code_verifier", "")
                    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
                    if digest != asked["code_challenge"] or asked.get("code_challenge_method") != "S256":
                        return 400, {"error": "invalid_grant", "error_description": "PKCE verification failed"}
                answer = self._tokens()
                if self.issue_refresh_tokens:
                    answer["refresh_token"] = self.grant_refresh_token()
                return 200, answer
            if grant == "refresh_token":
                token = form.get("refresh_token", "")
                if token not in self.valid_refresh:
                    return 400, {"error": "invalid_grant"}
                self.refreshes += 1
                answer = self._tokens()
                if self.rotate_refresh_tokens:
                    self.valid_refresh.discard(token)
                    answer["refresh_token"] = self.grant_refresh_token()
                return 200, answer
            return 400, {"error": "unsupported_grant_type"}
