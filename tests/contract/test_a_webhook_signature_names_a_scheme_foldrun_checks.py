"""`webhook: {signature: …}` names how an inbound webhook proves its sender — none, hmac, standard, github or
stripe — and a signed one names its secret; `foldrun check` refuses anything else with a sentence, so a
misspelt scheme never quietly means an unsigned hook."""

from .support import lines

AGENTS = {"agents/writer.md": "---\ntools: [read]\n---\n"}


def flow(webhook: str) -> dict[str, str]:
    return {**AGENTS, "flows/f.md": f"---\nwebhook: {webhook}\n---\n1. [[writer]] — Write.\n"}


def test_each_scheme_with_its_secret_passes_the_check():
    for scheme in ("hmac", "standard", "github", "stripe", "HMAC"):
        assert lines(flow(f"{{signature: {scheme}, secret: INBOUND_KEY}}")) == [], scheme
    assert lines(flow("{signature: none}")) == []
    assert lines(flow("{}")) == []


def test_a_scheme_foldrun_does_not_check_is_refused_naming_the_ones_it_does():
    assert lines(flow("{signature: gitlab, secret: INBOUND_KEY}")) == [
        "flows/f.md:2: error: webhook: signature: gitlab is not a scheme foldrun checks; write one of none (unsigned); "
        "hmac (foldrun's x-signature, or X-Foldrun-Signature with X-Foldrun-Timestamp); standard (Standard Webhooks' "
        "webhook-id, webhook-timestamp and webhook-signature); github (GitHub's X-Hub-Signature-256); "
        "stripe (Stripe's Stripe-Signature)."
    ]


def test_a_signed_scheme_without_a_secret_is_refused():
    assert lines(flow("{signature: stripe}")) == [
        "flows/f.md:2: error: webhook: signature: stripe needs secret: — the NAME of the vault secret the sender "
        "signs with, such as secret: INBOUND_KEY."
    ]


def test_a_secret_with_no_scheme_to_check_it_is_refused():
    assert lines(flow("{secret: INBOUND_KEY}")) == [
        "flows/f.md:2: error: webhook: names secret: but no signature:, so nothing would check it; write "
        "signature: hmac (or standard, github, stripe), or drop secret:."
    ]
