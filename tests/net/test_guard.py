"""foldrun.net: one predicate, checked at connect time on the address actually connected to."""

from __future__ import annotations

import httpx
import pytest

from foldrun import net
from notify.webhook import post_once

from .conftest import private_urls, refusal

HTTPX_ROLES = sorted(net.ROLES)


@pytest.mark.parametrize(
    "address",
    [
        "127.0.0.1",
        "10.0.0.1",
        "172.31.255.255",
        "192.168.0.1",
        "100.64.0.1",
        "100.127.255.254",
        "169.254.169.254",
        "0.0.0.0",
        "224.0.0.1",
        "239.255.255.250",
        "240.0.0.1",
        "255.255.255.255",
        "192.0.2.1",
        "198.18.0.1",
        "::1",
        "::",
        "fe80::1",
        "fd00::1",
        "fc00::1",
        "ff02::1",
        "ff0e::1",
        "fec0::1",
        "2001:db8::1",
        "::ffff:127.0.0.1",
        "::ffff:10.0.0.1",
        "::ffff:100.64.0.1",
        "::127.0.0.1",
        "2002:7f00:1::1",
        "2002:a9fe:a9fe::1",
        "64:ff9b::7f00:1",
        "64:ff9b::a00:1",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
    ],
)
def test_a_non_public_address_in_any_form_is_not_allowed(address):
    assert net.is_allowed(address) is False


@pytest.mark.parametrize(
    "address",
    [
        "8.8.8.8",
        "1.1.1.1",
        "93.184.215.14",
        "2606:4700:4700::1111",
        "::ffff:8.8.8.8",
        "2002:808:808::1",
        "64:ff9b::808:808",
    ],
)
def test_a_global_address_is_allowed_and_so_is_one_that_carries_a_global_address(address):
    assert net.is_allowed(address) is True


@pytest.mark.parametrize(
    "host, address",
    [
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("017700000001", "127.0.0.1"),
        ("0251.0376.0251.0376", "169.254.169.254"),
        ("[::1]", "::1"),
    ],
)
def test_a_host_written_as_a_number_is_read_as_the_address_it_names(host, address):
    assert str(net.literal(host)) == address
    with pytest.raises(net.PrivateAddress) as caught:
        net.checked_addresses(host, 80)
    assert str(caught.value) == refusal(host.strip("[]"), address)


def test_every_address_a_name_resolves_to_is_checked():
    def two_faced(host: str, port: int) -> list[str]:
        return ["93.184.215.14", "10.0.0.7"]

    with pytest.raises(net.PrivateAddress) as caught:
        net.checked_addresses("shop.example", 80, two_faced)
    assert str(caught.value) == refusal("shop.example", "10.0.0.7")
    assert net.checked_addresses("shop.example", 80, lambda h, p: ["93.184.215.14"]) == ["93.184.215.14"]


@pytest.mark.parametrize("role", HTTPX_ROLES)
def test_every_role_refuses_every_non_public_form_at_connect_time_with_one_sentence(role, site, guarded):
    client = net.client(role)
    said = {}
    for url, (host, address) in private_urls(site.port).items():
        with pytest.raises(net.PrivateAddress) as caught:
            client.get(url)
        said[url] = str(caught.value)
        assert said[url] == refusal(host, address), url
    assert site.seen == []


@pytest.mark.parametrize("role", HTTPX_ROLES)
def test_a_name_that_re_resolves_to_loopback_after_a_public_answer_is_refused_at_its_connect(role, site, guarded):
    answers = iter([["93.184.215.14"], ["127.0.0.1"]])
    net.configure(resolver=lambda host, port: next(answers))
    url = f"http://rebind.example:{site.port}/hook"
    assert net.check_url(url) == ["93.184.215.14"]  # the save-time look: a public answer
    with pytest.raises(net.PrivateAddress) as caught:
        net.client(role).get(url)  # the connect looks again, and checks what it connects to
    assert str(caught.value) == refusal("rebind.example", "127.0.0.1")
    assert site.seen == []


def test_the_install_s_opt_in_reaches_loopback(site):
    old = net.configure(allow_private=True)
    try:
        assert net.client("webhook", deadline=8).post(f"{site.url}/hook", content=b"{}").status_code == 200
    finally:
        net.restore(old)
    assert site.seen == ["POST /hook"]


@pytest.mark.parametrize("role", HTTPX_ROLES)
def test_a_cookie_one_call_was_given_never_rides_on_the_next_call_of_the_shared_client(role, site):
    old = net.configure(allow_private=True)
    try:
        for _ in range(2):
            assert net.client(role).get(f"{site.url}/page").headers["set-cookie"] == "sid=first-caller; Path=/"
    finally:
        net.restore(old)
    assert site.cookies == [None, None]


def test_a_role_that_does_not_exist_is_named():
    with pytest.raises(ValueError, match="'carrier-pigeon' is not a network role; the roles are webhook, model"):
        net.client("carrier-pigeon")


def test_a_refusal_is_an_httpx_error_so_no_caller_lets_it_out_as_a_crash(site, guarded):
    with pytest.raises(httpx.HTTPError):
        net.client("http_tool").get(f"{site.url}/x")


# ------------------------------------------------------------------ the webhook role


def test_a_webhook_to_any_non_public_form_is_refused_with_the_one_sentence(site, guarded):
    errors = {url: post_once(url, b"{}", {}).error for url in private_urls(site.port)}
    assert errors == {url: refusal(host, address) for url, (host, address) in private_urls(site.port).items()}
    assert site.seen == []


def test_a_webhook_whose_name_re_resolves_to_loopback_is_refused(site, guarded):
    answers = iter([["93.184.215.14"], ["127.0.0.1"]])
    net.configure(resolver=lambda host, port: next(answers))
    url = f"http://rebind.example:{site.port}/hook"
    assert net.check_url(url) == ["93.184.215.14"]
    assert post_once(url, b"{}", {}).error == refusal("rebind.example", "127.0.0.1")
    assert site.seen == []
