"""Which links a crawl follows: its scope (host, subdomains, a list of hosts) and its include/exclude globs."""

from __future__ import annotations

import pytest

from foldrun.mcp.quick.crawl import Plan


@pytest.mark.parametrize(
    ("scope", "url", "inside"),
    [
        ("host", "https://docs.example.com/guide", True),
        ("host", "https://docs.example.com:8443/guide", False),
        ("host", "https://api.docs.example.com/", False),
        ("subdomains", "https://api.docs.example.com/v1", True),
        ("subdomains", "https://docs.example.com/", True),
        ("subdomains", "https://example.com/", False),
        ("subdomains", "https://evildocs.example.com/", False),
        (["blog.example.com", "*.cdn.example.net"], "https://blog.example.com/post", True),
        (["blog.example.com", "*.cdn.example.net"], "https://img.cdn.example.net/a.png", True),
        (["blog.example.com", "*.cdn.example.net"], "https://cdn.example.net/", True),
        (["blog.example.com", "*.cdn.example.net"], "https://docs.example.com/", False),
    ],
)
def test_the_scope_decides_which_hosts_a_crawl_follows(scope, url, inside):
    plan = Plan.of("https://docs.example.com/", {"scope": scope})
    assert plan.in_scope(url) is inside


def test_subdomains_of_a_www_start_are_the_whole_site():
    plan = Plan.of("https://www.example.com/", {"scope": "subdomains"})
    assert plan.in_scope("https://shop.example.com/") and plan.in_scope("https://example.com/")


@pytest.mark.parametrize(
    ("args", "url", "why"),
    [
        ({"include": ["/blog/*"]}, "https://docs.example.com/blog/first", None),
        ({"include": ["/blog/*"]}, "https://docs.example.com/pricing", "matches no include pattern"),
        ({"exclude": ["*.pdf"]}, "https://docs.example.com/brochure.pdf", "matches an exclude pattern"),
        (
            {"exclude": ["/private/*"], "include": ["/*"]},
            "https://docs.example.com/private/x",
            "matches an exclude pattern",
        ),
        ({"include": ["https://docs.example.com/guide*"]}, "https://docs.example.com/guide/start", None),
        ({"include": ["/search?q=*"]}, "https://docs.example.com/search?q=bond", None),
        ({}, "https://other.example.org/", "outside the scope (host)"),
    ],
)
def test_include_and_exclude_are_globs_on_the_url_or_on_its_path(args, url, why):
    assert Plan.of("https://docs.example.com/", args).why_not(url) == why
