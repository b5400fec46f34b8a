"""Issue 29, item 5: hostile bodies — JSON nested 10,000 deep (arrays, objects, inside a field), numbers past
any column, bytes that are not UTF-8, JSON that is not an object — to every route of the URLconf that takes
a body, the inbound webhook included: 0 5xx, and a body nested past the limit is a 400 naming it."""

from __future__ import annotations

import pytest

from .conftest import api_routes, fill

DEEP = 10_000
LIMIT_SAID = "The JSON body is nested deeper than 100 levels (arrays and objects inside one another)"

HOSTILE = {
    "arrays nested 10,000 deep": b"[" * DEEP + b"]" * DEEP,
    "objects nested 10,000 deep": b'{"a":' * DEEP + b"1" + b"}" * DEEP,
    "a field nested 10,000 deep": b'{"message": "m", "inputs": ' + b"[" * DEEP + b"]" * DEEP + b"}",
    "101 deep, one past the limit": b"[" * 101 + b"]" * 101,
    "a float past any column": b'{"revision": 1e999999, "to": 1e400, "inputs": {"n": -1e400}, "value": 1e400}',
    "an integer of 5,000 digits": b'{"revision": ' + b"9" * 5000 + b"}",
    "an integer past 64 bits": b'{"revision": 99999999999999999999999, "to": -99999999999999999999999, '
    b'"expires_in_days": 99999999999999999999999, "inputs": {"n": 99999999999999999999999}}',
    "bytes that are not UTF-8": b'{"message": "\xff\xfe\xfd", "name": "\xc3\x28"}',
    "a byte-order mark": b"\xef\xbb\xbf{}",
    "an array": b"[1, 2, 3]",
    "a string": b'"just a string"',
    "null": b"null",
    "a number": b"42",
    "true": b"true",
    "nothing": b"",
    "a lone brace": b"{",
    "brackets inside a string": b'{"name": "' + b"[" * DEEP + b'"}',
}


def _writes():
    for route, _cls, methods in api_routes():
        for method in methods:
            if method != "get":
                yield method, route


def _isolated(call):
    from django.db import transaction

    with transaction.atomic():
        return call()


@pytest.mark.parametrize("kind", list(HOSTILE))
def test_no_route_that_takes_a_body_answers_a_hostile_one_with_a_5xx(world, alice_api, client, kind):
    answers = {}
    for method, route in _writes():
        url = fill(route, world)
        caller = client if route.startswith("/api/hooks/") else alice_api  # the hook takes no login
        response = _isolated(lambda: getattr(caller, method)(url, data=HOSTILE[kind], content_type="application/json"))
        answers[f"{method.upper()} {route}"] = response.status_code
    assert len(answers) >= 40
    assert {k: v for k, v in answers.items() if v >= 500} == {}


@pytest.mark.parametrize(
    "kind",
    [
        "arrays nested 10,000 deep",
        "objects nested 10,000 deep",
        "a field nested 10,000 deep",
        "101 deep, one past the limit",
    ],
)
def test_every_route_that_parses_json_refuses_a_deep_body_naming_the_limit(world, alice_api, client, kind):
    wrong = {}
    for method, route in _writes():
        caller = client if route.startswith("/api/hooks/") else alice_api
        response = _isolated(
            lambda: getattr(caller, method)(fill(route, world), data=HOSTILE[kind], content_type="application/json")
        )
        if response.status_code == 400 and response.json().get("code") == "too_deep":
            body = response.json()
            if not (body["message"].startswith(LIMIT_SAID) and body["details"] == {"limit": 100}):
                wrong[f"{method.upper()} {route}"] = body
    assert wrong == {}


def test_a_run_started_with_a_body_nested_10000_deep_is_a_400_naming_the_limit(world, alice_api):
    response = alice_api.post(
        "/api/workspaces/rank-desk/runs", data=HOSTILE["a field nested 10,000 deep"], content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json() == {
        "code": "too_deep",
        "details": {"limit": 100},
        "message": (f"{LIMIT_SAID}; at most 100 are read, so nothing was done."),
    }


def test_an_inbound_webhook_nested_10000_deep_is_a_400_and_starts_nothing(world, client):
    from runs.models import Run

    before = Run.objects.count()
    response = client.post(
        f"/api/hooks/{world['ws_id']}/weekly",
        data=HOSTILE["objects nested 10,000 deep"],
        content_type="application/json",
    )
    assert response.status_code == 400
    assert response.json() == {
        "code": "too_deep",
        "details": {"limit": 100},
        "message": (f"{LIMIT_SAID}; at most 100 are read, so nothing was started."),
    }
    assert Run.objects.count() == before


def test_a_body_100_deep_is_still_read(world, alice_api):
    nested: object = "x"
    for _ in range(98):  # inside the body and its inputs: 100 levels in all
        nested = [nested]
    response = alice_api.post(
        "/api/workspaces/rank-desk/runs", {"flow": "weekly", "inputs": {"deep": nested}}, format="json"
    )
    assert response.status_code == 201, response.json()
