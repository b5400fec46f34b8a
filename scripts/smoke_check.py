"""Signs in to a running foldrun as the demo user and reads the demo desk."""
from __future__ import annotations

import sys

import httpx

base = sys.argv[1]
with httpx.Client(base_url=base, timeout=20) as http:
    token = http.post("/api/auth/token", json={"email": "demo@foldrun.dev", "password": "demo-password-123", "name": "smoke"})
    token.raise_for_status()
    headers = {"Authorization": f"Bearer {token.json()['token']}"}
    workspaces = http.get("/api/workspaces", headers=headers).json()
    names = [w["name"] for w in workspaces]
    assert "rank-desk" in names, f"the demo desk is missing: {names}"
    login_page = http.get("/accounts/login/")
    assert login_page.status_code == 200, login_page.status_code
print(f"smoke: signed in as demo@foldrun.dev and found {names}")
