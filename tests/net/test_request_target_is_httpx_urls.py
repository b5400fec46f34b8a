"""A crawl's GET names its target as httpx.URL would (foldrun.net.target): the origin's parse is kept across
a site's pages, and every URL whose path or query httpx would rewrite or refuse is parsed whole."""

from __future__ import annotations

import httpx
import pytest

from foldrun.net.target import request_target

URLS = [
    "http://127.0.0.1:8080/p/4",
    "https://Example.COM/a/b?q=1&r=2",
    "HTTP://example.com:80/",
    "https://example.com:443/x",
    "http://user:pw@h.example/private",
    "http://bücher.example/straße?ä=1",
    "http://[::1]:9/v6",
    "http://h.example/a b",
    "http://h.example/a%20b%zz%",
    "http://h.example/a/./b",
    "http://h.example/a/../../b",
    "http://h.example/.well-known/x",
    "http://h.example/a?x=/../y",
    "http://h.example/p?`{}|^",
    "http://h.example/p`{}",
    "http://h.example/p#frag",
    "http://h.example?only=query",
    "http://h.example",
    "http://h.example/[x]\\y",
    'http://h.example/"q"<a>',
    "https://h.example/p?",
    "http://h.example/é",
    "http://a b/p",
]


@pytest.mark.parametrize("url", URLS)
def test_a_target_is_the_scheme_host_port_and_path_httpx_makes_of_the_url(url):
    parsed = httpx.URL(url)
    assert request_target(url) == (parsed.scheme, parsed.raw_scheme, parsed.raw_host, parsed.port, parsed.raw_path)
    assert request_target(url) == (parsed.scheme, parsed.raw_scheme, parsed.raw_host, parsed.port, parsed.raw_path)


@pytest.mark.parametrize("url", ["http://h:bad/p", "http://h\t/p", "http://h.example/p\n", "http://999.1.1.1/p"])
def test_a_url_httpx_refuses_is_refused_in_httpxs_words(url):
    with pytest.raises(httpx.InvalidURL) as theirs:
        httpx.URL(url)
    with pytest.raises(httpx.InvalidURL) as ours:
        request_target(url)
    assert str(ours.value) == str(theirs.value)
