from accounts.actions import do_invite
from accounts.models import Membership


def _invite_dana(alice) -> str:
    _invite, raw = do_invite(Membership.objects.get(user=alice), "charlie@example.com", "approver")
    return raw


def test_opening_an_invite_link_does_not_accept_it(alice, charlie, client):
    raw = _invite_dana(alice)
    client.force_login(charlie)
    response = client.get(f"/invites/{raw}")
    assert response.status_code == 200
    assert b"Accept the invite" in response.content
    assert Membership.objects.filter(user=charlie).count() == 1


def test_posting_the_invite_form_joins_the_account(alice, charlie, client):
    raw = _invite_dana(alice)
    client.force_login(charlie)
    response = client.post(f"/invites/{raw}")
    assert response.status_code == 302
    assert Membership.objects.get(user=charlie, account=Membership.objects.get(user=alice).account).role == "approver"


def test_a_used_invite_link_says_so(alice, charlie, client):
    raw = _invite_dana(alice)
    client.force_login(charlie)
    client.post(f"/invites/{raw}")
    response = client.get(f"/invites/{raw}")
    assert response.status_code == 404
    assert b"This invite link is not valid or was already used." in response.content
