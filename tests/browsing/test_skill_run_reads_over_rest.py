"""GET /v1/skill-runs/<id>: a skill run as get_skill_run returns it, scoped to its account."""

from __future__ import annotations

from runs.skill_procedure import do_deny_skill


def denied_run(account):
    return do_deny_skill(
        account,
        skill="header-probe",
        version="3",
        inputs={"url": "https://example.com"},
        reason="The skill header-probe needs the grant active_scan, which was not given; ask the "
        "user before granting it.",
    )


def test_a_skill_run_reads_as_the_skill_result(alice_api, account):
    run = denied_run(account)
    body = alice_api.get(f"/v1/skill-runs/{run.public_id}").json()
    assert (body["runId"], body["skill"], body["version"], body["status"]) == (
        run.public_id,
        "header-probe",
        "3",
        "denied",
    )
    assert body["sessionId"] is None and body["hasReport"] is True
    assert body["reason"].startswith("The skill header-probe needs the grant active_scan")
    assert body["reportUrl"].startswith("/reports/")


def test_a_skill_run_of_another_account_is_not_found(charlie_api, account):
    run = denied_run(account)
    answer = charlie_api.get(f"/v1/skill-runs/{run.public_id}")
    assert answer.status_code == 404 and answer.json()["code"] == "not_found"
