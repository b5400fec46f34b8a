"""The workspace page's "Secrets this desk needs", in real Chromium: a flow's signed `webhook:` puts its secret
on the card beside the provider's key, missing with the command that sets it, and set once the vault holds it."""

from __future__ import annotations

import pytest

from foldrun.cli.cmd_desk import scaffold_files
from tests.runs.helpers import push
from vault.actions import do_set_secret

INTAKE = (
    "---\nname: intake\nwebhook: {signature: stripe, secret: STRIPE_SIGNING_KEY}\n---\n"
    "1. [[assistant]] — Say what the event {{inputs}} needs.\n"
)


def card_rows(page) -> list[list[str]]:
    # A cell's words as read: the fix column wraps its command onto a line of its own inside the card.
    return [
        [" ".join(cell.split()) for cell in row.locator("td").all_inner_texts()]
        for row in page.locator("#secrets-needed tbody tr").all()
    ]


@pytest.mark.e2e
def test_the_card_lists_the_webhooks_signing_secret_until_the_vault_holds_it(live_server, signed_in, workspace, alice):
    push(workspace, {**scaffold_files("rank-desk"), "flows/intake.md": INTAKE})
    do_set_secret(workspace.account, workspace, "ANTHROPIC_API_KEY", value="sk-ant-x")
    page = signed_in(alice, width=1366, height=900)
    page.goto(f"{live_server.url}/w/rank-desk/")
    assert card_rows(page) == [
        ["ANTHROPIC_API_KEY", "the model provider of agent assistant", "set"],
        [
            "STRIPE_SIGNING_KEY",
            "the webhook of flow intake",
            "missing foldrun secrets set STRIPE_SIGNING_KEY --to rank-desk",
        ],
    ]
    do_set_secret(workspace.account, None, "STRIPE_SIGNING_KEY", value="whsec_x")  # the account's vault counts too
    page.reload()
    assert card_rows(page)[1] == ["STRIPE_SIGNING_KEY", "the webhook of flow intake", "set"]
