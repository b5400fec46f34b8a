"""The OpenAPI schema generates with no warning and no error (`manage.py spectacular --validate --fail-on-warn`),
and says what a client needs: every operation's refusals with the Error body, one operationId each, bounds and
enums on parameters, one content type per kind of answer."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
METHODS = {"get", "post", "put", "patch", "delete"}


def _schema(tmp_path) -> tuple[subprocess.CompletedProcess, dict]:
    out = tmp_path / "schema.yaml"
    env = dict(os.environ, FOLDRUN_DATA_DIR=str(tmp_path / "data"), DJANGO_SETTINGS_MODULE="foldrun.settings.test")
    done = subprocess.run(
        [sys.executable, "manage.py", "spectacular", "--validate", "--fail-on-warn", "--file", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    return done, (yaml.safe_load(out.read_text()) if out.exists() else {})


def test_the_schema_generates_and_validates_with_no_warnings(tmp_path):
    done, schema = _schema(tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Warning" not in done.stderr and "Error" not in done.stderr, done.stderr[-3000:]
    operations = [
        (path, method, op) for path, item in schema["paths"].items() for method, op in item.items() if method in METHODS
    ]
    ids = [op["operationId"] for _, _, op in operations]
    assert len(ids) == len(set(ids))
    # Every operation under a login says so (401), names a success and lists its refusals with the Error body.
    for path, method, op in operations:
        responses = op["responses"]
        assert any(code.startswith(("2", "3")) for code in responses), (method, path)
        for code, answer in responses.items():
            if code.startswith(("4", "5")) and path != "/api/health":  # health's 503 is its own report
                assert answer["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}, (
                    method,
                    path,
                    code,
                )
        if op.get("security") != [{}] and path not in ("/api/version", "/api/health"):
            assert "401" in responses, (method, path)
        if {"foldrunToken": []} in op.get("security", []):
            # The token check answers 503 when the database does not (accounts.auth).
            assert "503" in responses, (method, path)
        if "{" in path:
            assert "404" in responses, (method, path)
        if "requestBody" in op:
            assert list(op["requestBody"]["content"]) == ["application/json"], (method, path)
            assert {"400", "415"} <= set(responses), (method, path)


def test_the_schema_carries_bounds_enums_and_non_json_types(tmp_path):
    _, schema = _schema(tmp_path)
    paths = schema["paths"]
    at = next(p for p in paths["/api/workspaces/{ws}/files"]["get"]["parameters"] if p["name"] == "at")
    assert (at["schema"]["type"], at["schema"]["minimum"]) == ("integer", 0)
    page = next(p for p in paths["/api/library/revisions"]["get"]["parameters"] if p["name"] == "page")
    assert page["schema"]["minimum"] == 1
    raw = next(p for p in paths["/api/library/files/{path}"]["get"]["parameters"] if p["name"] == "raw")
    assert raw["schema"]["type"] == "boolean"
    assert set(paths["/api/library/files/{path}"]["get"]["responses"]["200"]["content"]) == {
        "application/json",
        "text/plain",
        "application/octet-stream",
    }
    artifact = paths["/api/workspaces/{ws}/runs/{run_id}/artifacts/{artifact_id}"]["get"]["responses"]["200"]
    assert list(artifact["content"]) == ["application/octet-stream"]
    components = schema["components"]["schemas"]
    assert components["Role"]["enum"] == ["owner", "admin", "editor", "approver", "viewer"]
    assert components["RoleInRequest"]["properties"]["role"] == {"$ref": "#/components/schemas/Role"}
    limit = next(p for p in paths["/api/workspaces/{ws}/runs"]["get"]["parameters"] if p["name"] == "limit")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 500)
    # A blank-allowed name whose pattern takes "" too is that one schema, not a oneOf "" would fit twice.
    name = components["TokenInRequest"]["properties"]["name"]
    assert "oneOf" not in name and name["maxLength"] == 100 and "pattern" in name
    # The same for the items of a list of them: a check's delete may name "" (a finding, not a refusal).
    assert components["CheckRequest"]["properties"]["delete"]["items"] == {"type": "string", "pattern": "^[^\\u0000]*$"}
    # A provider block for a preset with no fixed address needs base_url, as the probe requires.
    provider = components["ProbeInRequest"]["properties"]["provider"]
    needs = next(b for b in provider["oneOf"] if "qwen" in b.get("properties", {}).get("name", {}).get("enum", []))
    assert needs["required"] == ["name", "base_url"]


def test_a_files_path_is_never_empty_wherever_the_api_takes_one(tmp_path):
    """A path the schema allows is one a file can have: in the URL of every file operation (read, edit, history,
    rollback), in a pushed file and in a push's or deploy's delete list — so schemathesis's coverage phase,
    which sends the boundary values, finds no "valid" empty path the server then refuses."""
    _, schema = _schema(tmp_path)
    components = schema["components"]["schemas"]
    for scope in ("/api/library", "/api/workspaces/{ws}"):
        for tail, method in (("", "get"), ("", "put"), ("/history", "get"), ("/rollback", "post")):
            operation = schema["paths"][f"{scope}/files/{{path}}{tail}"][method]
            path = next(p for p in operation["parameters"] if p["name"] == "path")["schema"]
            assert (path["minLength"], path["maxLength"], path["pattern"][:2]) == (1, 400, "^["), (method, scope, tail)
    for shape in components["FileInRequest"]["oneOf"]:
        assert shape["properties"]["path"]["minLength"] == 1
    deleted = components["PushRequest"]["properties"]["delete"]["items"]
    assert (deleted["minLength"], deleted["maxLength"]) == (1, 400) and deleted["pattern"].startswith("^[A-Za-z0-9")
