"""Bad input to the REST API is a 4xx, never a 500, on every route (read from the URLconf): bodies that are
not objects, wrong types, broken JSON, nonsense or huge numbers, bodies over the form cap, text that is not
text, methods a route does not take; and every error is {code, message, details}. (Issue 2, item 5.)"""

from __future__ import annotations

import os

import pytest

from .conftest import WRITE_BODY as WRITE_BODY_BASE, api_routes, fill


P = "/api/workspaces/rank-desk"
WRONG_TYPES = {
    "message": 5,
    "files": "nope",
    "content": 7,
    "value": [],
    "name": {"a": 1},
    "role": 3,
    "email": [],
    "flow": 9,
    "to": "x",
    "revision": "x",
    "inputs": "x",
    "arguments": "x",
    "category": 1,
    "enabled": "x",
    "token": 5,
    "password": 5,
    "workspace": [],
    "delete": "x",
    "prune": "x",
    "expires_in_days": "x",
}
WRITE_TYPES_KEYS = sorted(WRONG_TYPES) + ["index", "number", "page", "days", "limit", "timeout"]


def _writes():
    for route, _cls, methods in api_routes():
        for method in methods:
            if method != "get":
                yield method, route


def test_no_route_answers_a_body_that_is_not_an_object_with_a_500(world, alice_api):
    answers = {}
    for method, route in _writes():
        response = getattr(alice_api, method)(fill(route, world), [1, 2], format="json")
        answers[f"{method.upper()} {route}"] = response.status_code
    assert {k: v for k, v in answers.items() if v >= 500} == {}


def test_no_route_answers_fields_of_the_wrong_type_with_a_500(world, alice_api):
    answers = {}
    for method, route in _writes():
        response = getattr(alice_api, method)(fill(route, world), WRONG_TYPES, format="json")
        answers[f"{method.upper()} {route}"] = response.status_code
    assert {k: v for k, v in answers.items() if v >= 500} == {}


def test_no_route_answers_broken_json_with_a_500_and_each_says_so_as_json(world, alice_api):
    answers = {}
    for method, route in _writes():
        response = getattr(alice_api, method)(fill(route, world), data="{not json", content_type="application/json")
        body = response.json() if response.get("Content-Type", "").startswith("application/json") else {}
        answers[f"{method.upper()} {route}"] = (
            response.status_code < 500,
            sorted(body) if response.status_code >= 400 else ["code", "details", "message"],
        )
    assert {k: v for k, v in answers.items() if v != (True, ["code", "details", "message"])} == {}


def test_no_read_answers_nonsense_query_parameters_with_a_500(world, alice_api):
    answers = {}
    query = "?at=abc&from=x&to=-1&page=-3&page_size=zzz&path=../../etc&raw=maybe&status=%00&limit=nope&q=%ff"
    for route, _cls, methods in api_routes():
        if "get" in methods:
            answers[route] = alice_api.get(fill(route, world) + query).status_code
    assert {k: v for k, v in answers.items() if v >= 500} == {}


def test_an_error_is_code_message_and_details(alice_api, workspace):
    body = alice_api.post(
        f"{P}/push", {"message": "m", "files": [{"path": "../x", "content": "x"}]}, format="json"
    ).json()
    assert sorted(body) == ["code", "details", "message"]
    assert isinstance(body["message"], str) and body["message"].endswith(".")


HUGE = 99999999999999999999


def test_no_read_answers_numbers_past_64_bits_with_a_500(world, alice_api):
    answers = {}
    for name in ("page", "page_size", "at", "from", "to", "limit", "offset"):
        for route, _cls, methods in api_routes():
            if "get" in methods:
                answers[f"{route}?{name}="] = alice_api.get(fill(route, world) + f"?{name}={HUGE}").status_code
    # /api/health answers 503 when no worker or beat has been heard from (none runs here): that is its meaning,
    # not a failure; every other route must stay below 500.
    assert {k: v for k, v in answers.items() if v >= 500 and not k.startswith("/api/health?")} == {}


def test_a_revisions_page_past_64_bits_is_a_400_naming_the_parameter(world, alice_api):
    answers = [alice_api.get(f"{P}/revisions?page={HUGE}"), alice_api.get(f"/api/library/revisions?page={HUGE}")]
    assert [a.status_code for a in answers] == [400, 400]
    assert answers[0].json() == {
        "code": "invalid",
        "details": {"parameter": "page"},
        "message": (f"The `page` parameter must be a page number of at most 2,147,483,647, not {HUGE}."),
    }


def test_no_write_answers_numbers_past_64_bits_with_a_500(world, alice_api):
    body = {key: HUGE for key in WRITE_TYPES_KEYS}
    answers = {}
    for method, route in _writes():
        if method != "delete":
            answers[f"{method.upper()} {route}"] = getattr(alice_api, method)(
                fill(route, world), body, format="json"
            ).status_code
    assert {k: v for k, v in answers.items() if v >= 500} == {}


def test_a_token_that_would_expire_past_the_calendar_is_refused_naming_the_field(alice_api):
    response = alice_api.post("/api/tokens", {"name": "forever", "expires_in_days": 10**12}, format="json")
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid",
        "details": {"field": "expires_in_days"},
        "message": "expires_in_days: at most 3650 days; leave it out for a token that does not expire.",
    }


def test_no_write_answers_a_body_over_djangos_form_cap_with_a_500(world, alice_api):
    big = {
        key: "x" * 3_000_000 if key in ("content", "value", "name") else value for key, value in WRITE_BODY_BASE.items()
    }
    answers = {}
    for method, route in _writes():
        if method != "delete":
            answers[f"{method.upper()} {route}"] = getattr(alice_api, method)(
                fill(route, world), big, format="json"
            ).status_code
    assert {k: v for k, v in answers.items() if v >= 500} == {}


def test_a_body_over_djangos_form_cap_is_a_413_with_a_sentence(world, alice_api):
    response = alice_api.post("/api/workspaces", {"name": "x" * 3_000_000}, format="json")
    assert response.status_code == 413
    assert response.json() == {
        "code": "too_large",
        "details": {},
        "message": "The request body is larger than 2,621,440 bytes; send less in one request.",
    }


def test_a_file_a_push_accepts_can_be_edited_too(world, alice_api):
    content = "x" * 3_000_000
    pushed = alice_api.post(
        f"{P}/push", {"message": "m", "files": [{"path": "state/big.csv", "content": content}]}, format="json"
    )
    edited = alice_api.put(f"{P}/files/state/big.csv", {"message": "m", "content": content + "y"}, format="json")
    assert (pushed.status_code, edited.status_code) == (201, 201)


def _every_string(value, text: str):
    if isinstance(value, str):
        return text
    if isinstance(value, dict):
        return {key: _every_string(inner, text) for key, inner in value.items()}
    if isinstance(value, list):
        return [_every_string(inner, text) for inner in value]
    return value


NOT_TEXT = {"a NUL": "a\u0000b", "a lone surrogate": "\ud800"}
# A flow's inbound webhook reads the raw body itself; proven broken below.
RAW_BODY_ROUTES = {"/api/hooks/<str:ws>/<str:flow>"}


def _isolated(call):
    """One request in its own savepoint, so a database error it causes cannot
    poison the requests after it."""
    from django.db import transaction

    with transaction.atomic():
        return call()


@pytest.mark.parametrize("kind", list(NOT_TEXT))
def test_no_write_answers_text_that_is_not_text_with_a_500(world, alice_api, kind):
    import json

    body = json.dumps(
        _every_string(dict(WRITE_BODY_BASE, inputs={"topic": "x"}, answer="x", workspace="rank-desk"), NOT_TEXT[kind])
    )
    answers = {}
    for method, route in _writes():
        if method != "delete" and route not in RAW_BODY_ROUTES:
            answers[f"{method.upper()} {route}"] = _isolated(
                lambda: getattr(alice_api, method)(fill(route, world), data=body, content_type="application/json")
            ).status_code
    assert {k: v for k, v in answers.items() if v >= 500} == {}


def test_a_nul_in_a_json_string_is_a_400_naming_the_field(world, alice_api):
    response = alice_api.post("/api/tokens", data='{"name": "lap\\u0000top"}', content_type="application/json")
    assert response.status_code == 400
    assert response.json() == {
        "code": "invalid",
        "details": {"field": "name"},
        "message": "name: text may not hold a NUL character or a lone surrogate.",
    }


def test_no_read_answers_a_nul_in_a_parameter_with_a_500(world, alice_api):
    query = "?q=%00&path=%00&at=%00&status=%00&flow=%00&state=%00&page=%00"
    answers = {}
    for route, _cls, methods in api_routes():
        if "get" in methods:
            answers[route] = _isolated(lambda: alice_api.get(fill(route, world) + query)).status_code
    assert {k: v for k, v in answers.items() if v >= 500} == {}


@pytest.mark.skipif(not os.environ.get("DATABASE_URL", "").startswith("postgres"), reason="SQLite stores it")
@pytest.mark.parametrize("kind", list(NOT_TEXT))
def test_an_inbound_webhook_body_that_is_not_text_is_not_a_500(world, client, kind):
    import json

    response = client.post(
        f"/api/hooks/{world['ws_id']}/weekly",
        data=json.dumps({"topic": NOT_TEXT[kind]}),
        content_type="application/json",
    )
    assert response.status_code < 500


def test_a_method_a_route_does_not_take_is_a_405_in_the_error_shape(world, alice_api):
    answers = {}
    for route, _cls, methods in api_routes():
        for method in ("get", "post", "put", "patch", "delete"):
            if methods and method not in methods and route != "/api/schema/":
                response = getattr(alice_api, method)(fill(route, world))
                answers[f"{method.upper()} {route}"] = (response.status_code, sorted(response.json()))
    assert {k: v for k, v in answers.items() if v != (405, ["code", "details", "message"])} == {}
    assert len(answers) >= 100


def test_an_inbound_webhook_takes_a_form_body_too(world, client):
    response = client.post(f"/api/hooks/{world['ws_id']}/weekly", {"topic": "x"})  # multipart, as a form sends it
    assert response.status_code == 202
