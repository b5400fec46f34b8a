from .access import current_membership


def current_account(request) -> dict:
    if not hasattr(request, "user"):
        return {}
    membership = current_membership(request)
    return {"membership": membership, "account": membership.account if membership else None}
