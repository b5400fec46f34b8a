"""A flow's `webhook: {signature: …, secret: NAME}` makes NAME a secret the desk needs: `check` and `deploy` list
it with the rest, and until the vault holds it a correctly signed request hears that the secret is not set —
not that its signature is wrong. The curl line docs/inbound-webhooks.md shows is run as written, against a
real server."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from runs.models import Run

pytestmark = pytest.mark.django_db(transaction=True)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "inbound-webhooks.md"
INTAKE = (
    "---\nname: intake\nwebhook: {signature: hmac, secret: INBOUND_KEY}\ninputs: {order: the order}\n---\n"
    "1. [[assistant]] — Say what order {{order}} needs.\n"
)
NEEDED = [
    "This desk needs 2 secrets:",
    "  ANTHROPIC_API_KEY  for the model provider of agent assistant  MISSING from the rank-desk vault — "
    "foldrun secrets set ANTHROPIC_API_KEY --to rank-desk",
    "  INBOUND_KEY  for the webhook of flow intake  MISSING from the rank-desk vault — "
    "foldrun secrets set INBOUND_KEY --to rank-desk",
]
NOT_SET = (
    "This flow's webhook secret INBOUND_KEY is not set in the workspace's vault, so no signature can be "
    "checked; set it (foldrun secrets set INBOUND_KEY) and send again. Nothing was started."
)


@pytest.fixture
def desk(cli, tmp_path, alice, signed_in_as, workspace) -> Path:
    signed_in_as(alice)
    path = tmp_path / "desk"
    assert cli("init", path, "--name", "rank-desk").code == 0
    (path / "flows" / "intake.md").write_text(INTAKE)
    return path


def curl_from_the_docs(url: str, secret: str) -> dict:
    """The page's curl block, as a reader would paste it with their own URL and secret."""
    block = re.search(r"```bash\n(.*?)```", DOCS.read_text(), re.S).group(1)
    block = re.sub(r"^SECRET=.*$", f"SECRET='{secret}'", block, flags=re.M)
    block = re.sub(r"^URL=.*$", f"URL='{url}'", block, flags=re.M)
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", block], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_check_lists_the_webhooks_secret_with_the_flow_that_needs_it(cli, desk):
    assert cli("push", desk, "--to", "rank-desk").code == 0
    result = cli("check", desk)
    assert result.code == 0
    assert result.err_lines == NEEDED
    as_json = cli("check", desk, "--json").json
    assert as_json["missing"] == ["ANTHROPIC_API_KEY", "INBOUND_KEY"]
    assert as_json["secrets"][1]["for"] == ["the webhook of flow intake"]


def test_deploy_lists_the_secrets_the_desk_needs_once_it_went_through(cli, desk, workspace):
    from vault.actions import do_set_secret

    result = cli("deploy", desk, "--to", "rank-desk")
    assert result.code == 0
    assert result.err_lines[-3:] == NEEDED
    do_set_secret(workspace.account, workspace, "INBOUND_KEY", value="inbound-secret")
    again = cli("deploy", desk, "--to", "rank-desk", "-m", "again")
    assert again.err_lines[-1] == "  INBOUND_KEY  for the webhook of flow intake  (set)"


def test_a_signed_request_hears_the_secret_is_not_set_until_it_is_then_the_docs_curl_line_starts_the_run(
    cli, desk, workspace, live_server
):
    from vault.actions import do_set_secret

    assert cli("deploy", desk, "--to", "rank-desk").code == 0
    url = f"{live_server.url}/api/hooks/{workspace.public_id}/intake"
    refused = curl_from_the_docs(url, "inbound-secret")
    assert refused == {"code": "secret_not_set", "message": NOT_SET, "details": {}}
    assert not Run.objects.exists()

    do_set_secret(workspace.account, workspace, "INBOUND_KEY", value="inbound-secret")
    started = curl_from_the_docs(url, "inbound-secret")
    assert started["duplicate"] is False
    run = Run.objects.get(public_id=started["run"])
    assert (run.trigger, run.inputs["order"]) == ("webhook", "A-17")

    wrong = curl_from_the_docs(url, "a-guess")  # set, and now a wrong signature is called wrong
    assert wrong["code"] == "bad_signature"
