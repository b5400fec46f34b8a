"""Every dashboard page goes through the same scoped base — another account's workspace or object is a 404
like a missing one, a viewer cannot write — no page address, link or form carries an integer key, and no
page answers junk or a NUL with a 500. (Issue 2, item 7.)"""

from __future__ import annotations

import re

from django.test import Client

from .conftest import MISSING, url_patterns


def page_routes() -> list[tuple[str, object]]:
    return [
        ("/" + route, p.callback)
        for route, p in url_patterns()
        if not route.startswith(("api/", "v1/", "admin/", "accounts/", "^"))
    ]  # v1/: the sessions API


OBJECT_PARAMS = {
    "ws",
    "member_id",
    "token_id",
    "run_id",
    "delivery_id",
    "path",
    "number",
    "name",
    "session_id",
    "skill_run_id",
}
# Page routes that name no object of an account, or whose object is the caller's own.
NOT_ACCOUNT_OBJECTS = {
    "/invites/<str:raw>",
    "/decide/<str:token>",
    "/library/gallery/<str:tool>/install",
    "/library/gallery/<str:tool>/update",
}
# Writes a viewer may make from a page, and why.
VIEWER_MAY = {
    "/invites/<str:raw>": "accepting an invite: the link is the proof",
    "/decide/<str:token>": "a mailed approve/reject link: the signed token is the proof",
    "/profile/notifications/": "a person's own inbox",
    "/settings/account": "switching which of one's own accounts the pages show",
    "/settings/tokens/create": "a viewer may mint a token for himself",
    "/settings/tokens/<str:token_id>/revoke": "another member's token is as missing as another account's: 404",
}


def page_values(route: str, world: dict) -> dict:
    values = dict(world, decision="approve", tool="web", raw="x", token="x")
    if route.startswith("/library/"):
        values["path"] = world["library_path"]
    if route.startswith("/w/"):
        values["name"] = world["ws_secret"]
    if "/scratch/" in route:  # a file of the Tool Test scratch of web
        values["path"] = world["scratch_path"]
    if "/videos/" in route:  # a step's video: the run's .webm artifact
        values["artifact_id"] = world["video_id"]
    return values


def fill_page(route: str, values: dict) -> str:
    return re.sub(r"<(?:\w+:)?(\w+)>", lambda m: str(values[m.group(1)]), route)


def scoped_pages():
    for route, _view in page_routes():
        names = set(re.findall(r"<(?:\w+:)?(\w+)>", route))
        if names & OBJECT_PARAMS and route not in NOT_ACCOUNT_OBJECTS:
            yield route


def post_only(route: str, client: Client, world: dict) -> bool:
    return client.get(fill_page(route, page_values(route, world))).status_code == 405


FORM = {"content": "x", "message": "m", "role": "editor", "value": "v", "name": "X", "email": "erin@example.com"}


def test_alice_opens_every_page_naming_her_objects(world, alice):
    web = Client()
    web.force_login(alice)
    answers = {route: web.get(fill_page(route, page_values(route, world))).status_code for route in scoped_pages()}
    assert {r: s for r, s in answers.items() if s not in (200, 405)} == {}


def test_charlie_gets_404_on_every_page_naming_alices_objects(world, charlie):
    web = Client()
    web.force_login(charlie)
    answers = {}
    for route in scoped_pages():
        path = fill_page(route, page_values(route, world))
        answers[f"POST {route}"] = web.post(path, FORM).status_code
        answers[f"GET {route}"] = web.get(path).status_code
    assert {k: v for k, v in answers.items() if v != 404 and not (k.startswith("GET") and v == 405)} == {}
    assert len(answers) >= 40


def unmasked(html: bytes) -> bytes:
    """The page without its CSRF token, which Django masks afresh on every response."""
    return re.sub(rb'name="csrfmiddlewaretoken" value="[^"]+"', b"", html)


def test_charlie_gets_the_same_page_for_alices_objects_as_for_missing_ones(world, charlie):
    web = Client()
    web.force_login(charlie)
    differ = {}
    for route in scoped_pages():
        hers = web.get(fill_page(route, page_values(route, world)))
        missing = web.get(
            fill_page(
                route,
                dict(
                    page_values(route, world),
                    **{
                        k: v
                        for k, v in MISSING.items()
                        if k
                        in (
                            "ws",
                            "member_id",
                            "token_id",
                            "run_id",
                            "delivery_id",
                            "name",
                            "path",
                            "number",
                            "session_id",
                            "skill_run_id",
                        )
                    },
                ),
            )
        )
        if (hers.status_code, unmasked(hers.content)) != (missing.status_code, unmasked(missing.content)):
            differ[route] = (hers.status_code, missing.status_code)
    assert differ == {}


def test_bob_the_viewer_gets_403_posting_every_form_that_writes(world, bob):
    web = Client()
    web.force_login(bob)
    answers = {}
    for route, _view in page_routes():
        if route not in VIEWER_MAY and post_only(route, web, world):
            answers[route] = web.post(fill_page(route, page_values(route, world)), FORM).status_code
    assert {k: v for k, v in answers.items() if v != 403} == {}
    assert len(answers) >= 15


HUGE = 99999999999999999999
JUNK_FORM = {
    "content": "\x00\x01",
    "message": "m" * 5000,
    "role": "god",
    "value": "",
    "name": "../x",
    "email": "not-an-email",
    "to": "x",
    "revision": HUGE,
    "category": "x",
    "enabled": "maybe",
    "workspace": "../x",
    "expires_in_days": HUGE,
    "token": "x",
    "answer": "x" * 100000,
    "account": "acc_x",
    "path": "../x",
    "provider": "x",
    "model": "x",
    "base_url": "ftp://x",
}


def test_no_page_answers_junk_with_a_500(world, alice):
    web = Client(raise_request_exception=False)
    web.force_login(alice)
    query = f"?page={HUGE}&at={HUGE}&from=x&to={HUGE}&rev=x&revision=x&number=x"
    answers = {}
    for route, _view in page_routes():
        path = fill_page(route, page_values(route, world))
        answers[f"GET {route}"] = web.get(path + query).status_code
        answers[f"POST {route}"] = web.post(path + query, JUNK_FORM).status_code
        answers[f"POST {route} (empty)"] = web.post(path, {}).status_code
    assert {k: v for k, v in answers.items() if v >= 500} == {}


def test_no_page_address_takes_an_integer_key():
    # <int:…> is used only for a revision number in its scope and a step's place in a flow.
    ints = {p for route, _v in page_routes() for p in re.findall(r"<int:(\w+)>", route)}
    assert ints == {"number", "index"}


def test_no_page_answers_a_nul_in_a_parameter_with_a_500(world, alice):
    from django.db import transaction

    web = Client(raise_request_exception=False)
    web.force_login(alice)
    form = {key: "a\x00b" for key in JUNK_FORM}
    query = "?q=%00&page=%00&at=%00&path=%00&status=%00&rev=%00"
    answers = {}
    for route, _view in page_routes():
        path = fill_page(route, page_values(route, world))
        with transaction.atomic():  # a database error in one request must not poison the next
            answers[f"GET {route}"] = web.get(path + query).status_code
        with transaction.atomic():
            answers[f"POST {route}"] = web.post(path, form).status_code
    assert {k: v for k, v in answers.items() if v >= 500} == {}


def test_a_nul_in_a_form_field_is_a_400_naming_it(world, alice):
    web = Client()
    web.force_login(alice)
    response = web.post("/settings/account", {"account": "acc_\x00"})
    assert response.status_code == 400
    assert response.content.decode() == "The `account` parameter may not hold a NUL character."


def test_no_link_or_form_on_any_page_carries_an_integer_key(world, alice):
    web = Client()
    web.force_login(alice)
    found = set()
    for route, _view in page_routes():
        response = web.get(fill_page(route, page_values(route, world)))
        html = response.content.decode() if response.get("Content-Type", "").startswith("text/html") else ""
        found |= {
            href
            for href in re.findall(r'(?:href|action)="([^"]+)"', html)
            if re.search(r"/\d+(/|$|\?)", href) and not re.search(r"/(revisions|steps)/\d+", href)
        }
    assert found == set()
