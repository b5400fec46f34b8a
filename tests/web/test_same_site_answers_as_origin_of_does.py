"""site.same_site(url, origin) reads the URL's head instead of splitting it, and answers as
`site.origin_of(url) == origin` does for every URL: each row is written with that answer, and checked against
both."""

from __future__ import annotations

import pytest

from foldrun.web import site

A = "https://a.com"

ROWS = [
    # the origin itself, and where its host ends
    (A, "https://a.com", True),
    (A, "https://a.com/", True),
    (A, "https://a.com/p/4?q=1#top", True),
    (A, "https://a.com?q", True),
    (A, "https://a.com#top", True),
    # a scheme and host in any case are the same origin_of
    (A, "HTTPS://A.COM/x", True),
    (A, "https://A.com/x", True),
    (A, "hTTpS://a.CoM", True),
    # a host that only begins like it
    (A, "https://a.com.evil.com/", False),
    (A, "https://a.comevil.com/", False),
    (A, "https://a.com./", False),
    (A, "https://a.co", False),
    (A, "https://a.com\\evil.com/", False),
    (A, "https://a.com;x/", False),
    (A, "https://a.com%2F/", False),
    (A, "https://\u0430.com/", False),  # a Cyrillic a
    # a port, the default one too, and userinfo are kept in origin_of's netloc
    (A, "https://a.com:443/", False),
    (A, "https://a.com:/", False),
    (A, "https://user@a.com/", False),
    (A, "https://user:pw@a.com/", False),
    (A, "https://a.com@evil.com/", False),
    (A, "https://a.com:pw@evil.com/", False),
    # another scheme, or no host
    (A, "http://a.com/", False),
    (A, "https:a.com/", False),
    (A, "https:/a.com/", False),
    (A, "//a.com/", False),
    (A, "/a.com", False),
    (A, "", False),
    # the origin further on
    (A, "https://evil.com/https://a.com/", False),
    (A, "https://evil.com/?u=https://a.com", False),
    # what urlsplit strips (leading blanks and controls, tabs and newlines anywhere) before it reads
    (A, " https://a.com/", True),
    (A, "\x00https://a.com/", True),
    (A, "\thttps://a.com/", True),
    (A, "https://a.\tcom/", True),
    (A, "https://a.com\n/", True),
    (A, "https://a.com\r\n", True),
    (A, "https://a.com\t.evil.com/", False),
    (A, "https://a.com/\tpath", True),
    (A, " https://evil.com/", False),
    # brackets and non-ASCII past the host
    (A, "https://a.com/[x]", True),
    (A, "https://a.com/?a[]=1", True),
    (A, "https://evil.com/?a[]=1", False),
    (A, "https://a.com/\u00fc", True),
    (A, "https://evil.com/\u00fc", False),
    # a Kelvin sign lowercases to k
    ("https://k.com", "https://\u212a.com/", True),
    ("https://k.com", "https://K.com/", True),
    # a non-ASCII host
    ("https://\u00fc.com", "https://\u00dc.com/", True),
    ("https://\u00fc.com", "https://\u00fc.com.evil/", False),
    # ports
    ("http://127.0.0.1:8000", "http://127.0.0.1:8000/x", True),
    ("http://127.0.0.1:8000", "http://127.0.0.1:80001/", False),
    ("http://127.0.0.1:8000", "http://127.0.0.1:800/", False),
    ("http://127.0.0.1:8000", "http://127.0.0.1/", False),
    ("https://a.com:443", "https://a.com:443/x", True),
    ("https://a.com:443", "https://a.com/x", False),
    # an IPv6 host
    ("http://[::1]:8000", "http://[::1]:8000/", True),
    ("http://[::1]:8000", "http://[::1]:8000", True),
    ("http://[::1]:8000", "http://[::1]:8000.evil/", False),
    ("http://[::1]:8000", "http://[::2]:8000/", False),
    # an origin origin_of never writes matches nothing
    ("https://A.com", "https://A.com/", False),
    ("https://a.com/", "https://a.com/", False),
    ("https://", "https:x", True),  # an empty host: origin_of writes `https://` for any https URL without one
    ("https://", "https://", True),
    ("", "", False),
]


@pytest.mark.parametrize(("origin", "url", "answer"), ROWS)
def test_same_site_answers_as_origin_of_does(origin: str, url: str, answer: bool) -> None:
    assert (site.origin_of(url) == origin) is answer
    assert site.same_site(url, origin) is answer


# every URL these pieces make, against each origin; a piece is one of the rows' tricks
SCHEMES = ["https://", "HTTPS://", "http://", "https:", "https:/", " https://", "ht\ttps://", "//", ""]
HOSTS = [
    "a.com",
    "A.COM",
    "a.com.evil.com",
    "a.co",
    "a.com:443",
    "user@a.com",
    "a.com@evil.com",
    "a.\tcom",
    "\u212a.com",
    "k.com",
    "127.0.0.1:8000",
    "127.0.0.1:80001",
    "[::1]:8000",
    "[::1]",
    "\u00dc.com",
    "",
]
TAILS = ["", "/", "/p?q#f", "?q", "#f", "\t/x", "\n", ".evil/", "\\x", ";x", "/[x]", "/\u00fc", " "]
ORIGINS = [
    "https://a.com",
    "https://k.com",
    "http://127.0.0.1:8000",
    "https://a.com:443",
    "http://[::1]:8000",
    "https://\u00fc.com",
    "https://",
    "https://A.com",
]


def test_same_site_answers_as_origin_of_does_for_every_url_the_pieces_make() -> None:
    differ = []
    for url in (scheme + host + tail for scheme in SCHEMES for host in HOSTS for tail in TAILS):
        for origin in ORIGINS:
            try:
                before: bool | str = site.origin_of(url) == origin
            except ValueError:
                before = "refused"
            try:
                now: bool | str = site.same_site(url, origin)
            except ValueError:
                now = "refused"
            if now != before:
                differ.append((url, origin, before, now))
    assert differ == []


# urlsplit refuses these hosts; same_site lets its error through as it did
REFUSED = [
    "https://[a.com/",
    "https://a.com]/",
    "https://a.com[/",
    "https://a.com]x[/",
    "https://[a.com]/",
    "https://a.com\u2100/",
]


@pytest.mark.parametrize("url", REFUSED)
def test_a_url_urlsplit_refuses_is_refused_by_same_site_too(url: str) -> None:
    with pytest.raises(ValueError):
        site.origin_of(url)
    with pytest.raises(ValueError):
        site.same_site(url, A)
