from django.core import mail

from accounts.actions import do_accept_invite
from accounts.models import Invite, Membership


def test_members_lists_roles_by_public_id(alice_api, bob):
    members = alice_api.get("/api/members").json()
    assert {(m["email"], m["role"]) for m in members} == {("alice@example.com", "owner"), ("bob@example.com", "viewer")}
    assert all(m["id"].startswith("mem_") for m in members)


def test_alice_makes_bob_an_editor(alice_api, bob):
    member_id = Membership.objects.get(user=bob).public_id
    response = alice_api.patch(f"/api/members/{member_id}", {"role": "editor"}, format="json")
    assert response.status_code == 200
    assert Membership.objects.get(user=bob).role == "editor"


def test_an_unknown_role_is_refused_with_the_roles_that_exist(alice_api, bob):
    member_id = Membership.objects.get(user=bob).public_id
    response = alice_api.patch(f"/api/members/{member_id}", {"role": "boss"}, format="json")
    assert response.status_code == 400
    assert (
        response.json()["message"] == "role: 'boss' is not a role; use one of owner, admin, editor, approver, viewer."
    )


def test_the_last_owner_cannot_step_down(alice_api, alice):
    member_id = Membership.objects.get(user=alice).public_id
    response = alice_api.patch(f"/api/members/{member_id}", {"role": "viewer"}, format="json")
    assert response.status_code == 409
    assert response.json()["message"] == "role: an account needs at least one owner; make someone else owner first."


def test_bob_cannot_change_roles(bob_api, alice):
    member_id = Membership.objects.get(user=alice).public_id
    assert bob_api.patch(f"/api/members/{member_id}", {"role": "viewer"}, format="json").status_code == 403


def test_charlie_gets_404_for_alices_member(charlie_api, alice):
    member_id = Membership.objects.get(user=alice).public_id
    assert charlie_api.get(f"/api/members/{member_id}").status_code == 404
    assert charlie_api.delete(f"/api/members/{member_id}").status_code == 404


def test_an_invite_is_mailed_and_stored_hashed(alice_api, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        response = alice_api.post("/api/invites", {"email": "dana@example.com", "role": "approver"}, format="json")
    assert response.status_code == 201
    assert response.json()["id"].startswith("inv_")
    assert mail.outbox[-1].to == ["dana@example.com"]
    assert "/invites/inv_" in mail.outbox[-1].body
    invite = Invite.objects.get(email="dana@example.com")
    assert invite.token_hash not in mail.outbox[-1].body


def test_an_invite_to_a_bad_address_names_the_field(alice_api):
    response = alice_api.post("/api/invites", {"email": "not-an-address"}, format="json")
    assert response.status_code == 400
    assert response.json()["message"] == "email: 'not-an-address' is not an email address."


def test_bob_cannot_invite(bob_api):
    assert bob_api.post("/api/invites", {"email": "dana@example.com"}, format="json").status_code == 403


def test_charlie_accepting_an_invite_for_someone_else_is_refused(alice, charlie, django_capture_on_commit_callbacks):
    from accounts.actions import do_invite
    from foldrun.api import ApiError
    import pytest

    _invite, raw = do_invite(Membership.objects.get(user=alice), "dana@example.com", "viewer")
    with pytest.raises(ApiError) as refused:
        do_accept_invite(charlie, raw)
    assert refused.value.message == "This invite was sent to dana@example.com; sign in with that address to accept it."


def test_signing_up_with_an_invited_address_joins_that_account(alice, client):
    from accounts.actions import do_invite, do_set_up_new_user
    from django.contrib.auth import get_user_model

    do_invite(Membership.objects.get(user=alice), "dana@example.com", "approver")
    dana = get_user_model().objects.create_user(username="dana", email="dana@example.com", password="x" * 12)
    membership = do_set_up_new_user(dana)
    assert membership.account == Membership.objects.get(user=alice).account
    assert membership.role == "approver"


def test_a_member_removed_while_their_role_is_changed_is_a_404_not_a_server_error(alice, bob):
    import pytest

    from accounts.actions import do_change_role, do_remove_member
    from foldrun.api import NotFound

    owner = Membership.objects.get(user=alice)
    seen = Membership.objects.get(user=bob)  # what the view looked up, just before another request removed it
    Membership.objects.filter(pk=seen.pk).delete()
    with pytest.raises(NotFound):
        do_change_role(seen, "editor", owner)
    with pytest.raises(NotFound):
        do_remove_member(seen, owner)
