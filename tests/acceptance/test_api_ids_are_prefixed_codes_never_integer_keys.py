"""Public ids are prefixed codes (ws_, mem_, run_ …), never integer keys: in every API answer and in no URL.
(Issue 2, item 2.)"""

from __future__ import annotations

from .conftest import api_routes, fill, params_of


def _integer_ids(value, where=""):
    """Every key that looks like an identifier and holds an integer."""
    found = []
    if isinstance(value, dict):
        for key, inner in value.items():
            if (key in ("id", "pk") or key.endswith("_id")) and isinstance(inner, int) and not isinstance(inner, bool):
                found.append(f"{where}.{key}={inner}")
            found += _integer_ids(inner, f"{where}.{key}")
    elif isinstance(value, list):
        for item in value:
            found += _integer_ids(item, where + "[]")
    return found


def test_no_api_answer_carries_an_integer_key(world, alice_api):
    found = {}
    for route, _cls, methods in api_routes():
        if "get" in methods and route != "/api/schema/" and "/api/hooks/" not in route:
            response = alice_api.get(fill(route, world))
            if response.get("Content-Type", "").startswith("application/json"):
                ids = _integer_ids(response.json())
                if ids:
                    found[route] = ids
    assert found == {}


def test_every_id_alice_reads_is_a_prefixed_code(world, alice_api):
    ids = [world[k] for k in ("ws_id", "member_id", "invite_id", "token_id", "run_id", "artifact_id", "delivery_id")]
    assert [i.split("_")[0] for i in ids] == ["ws", "mem", "inv", "tok", "run", "art", "dlv"]
    assert alice_api.get("/api/workspaces/rank-desk/revisions").json()["results"][0]["id"].startswith("rev_")


def test_no_url_takes_an_integer_key():
    # <int:…> is used only for a revision number in its scope and a step's place in a flow.
    ints = {p for route, _c, _m in api_routes() for p in params_of(route) if f"<int:{p}>" in route}
    assert ints == {"number", "index"}
