"""Vault API: secrets in the account and workspace vaults, the daily key
probe's table, dashboard OAuth connects, and `foldrun probe` server-side.
Thin: scope through ScopedAPIView, call one action."""

from __future__ import annotations

from django.http import Http404, HttpResponseRedirect
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.response import Response

from accounts.access import ScopedAPIView
from foldrun.api import ApiError
from foldrun.openapi import error, validated
from vault import actions, connect, logins, probe
from vault.crypto import UndecryptableSecret, VaultKeyError
from vault import serializers as s
from vault.serializers import secret_data

_VAULT_DOWN = {503: error(503, "The vault's keys (FOLDRUN_VAULT_KEYS) are missing or do not open a value.")}
_NAME = OpenApiParameter(
    "name",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    pattern=s.SECRET_NAME_PATTERN,
    description="the secret's name: capitals, digits and _, starting with a capital",
)


class VaultView(ScopedAPIView):
    """A vault whose keys are missing or malformed, or a value no key opens,
    answers a sentence naming FOLDRUN_VAULT_KEYS (or the secret) — never a 500."""

    def handle_exception(self, exc):
        if isinstance(exc, (VaultKeyError, UndecryptableSecret)):
            exc = ApiError(str(exc)[0].upper() + str(exc)[1:] + ".", code="vault_unavailable", status_code=503)
        return super().handle_exception(exc)


def _body(request) -> dict:
    if not isinstance(request.data, dict):
        raise ApiError("The request body must be a JSON object.", code="invalid")
    return request.data


def _listing(rows) -> list[dict]:
    rows = list(rows)
    in_workspace = {r.name for r in rows if r.workspace_id}
    return [secret_data(r, overridden=(not r.workspace_id and r.name in in_workspace)) for r in rows]


class AccountSecretsView(VaultView):
    @extend_schema(responses={200: s.SecretListOut, **_VAULT_DOWN})
    def get(self, request):
        return Response({"results": _listing(actions.secrets_for(self.account))})


class WorkspaceSecretsView(VaultView):
    @extend_schema(responses={200: s.SecretListOut, **_VAULT_DOWN})
    def get(self, request, ws: str):
        workspace = self.get_workspace(ws)
        return Response({"results": _listing(actions.secrets_for(self.account, workspace))})


class _SecretDetail(VaultView):
    def _workspace(self, kwargs):
        return self.get_workspace(kwargs["ws"]) if "ws" in kwargs else None

    @extend_schema(parameters=[_NAME], responses={200: s.SecretOut, **_VAULT_DOWN})
    def get(self, request, name: str, **kwargs):
        workspace = self._workspace(kwargs)
        row = (
            actions.Secret.objects.filter(account=self.account, workspace=workspace, name=name)
            .select_related("workspace", "created_by", "updated_by")
            .first()
        )
        if row is None:
            raise Http404
        return Response(secret_data(row))

    @extend_schema(
        parameters=[_NAME],
        request=s.SECRET_IN,
        responses={200: s.SecretOut, **_VAULT_DOWN},
        description="Set the secret: a `value`, or an `oauth` recipe — one of them.",
    )
    def put(self, request, name: str, **kwargs):
        workspace = self._workspace(kwargs)
        self.require_write()
        body = _body(request)
        if "hosts" in body and not isinstance(body["hosts"], list):
            raise ApiError(
                'hosts: give a list of host names, e.g. ["api.example.com"].',
                code="invalid_hosts",
                details={"field": "hosts"},
            )
        row = actions.check_set_secret(self.membership, workspace, name, body)
        return Response(secret_data(row))

    @extend_schema(parameters=[_NAME], responses={204: None, **_VAULT_DOWN})
    def delete(self, request, name: str, **kwargs):
        workspace = self._workspace(kwargs)
        self.require_write()
        actions.check_delete_secret(self.membership, workspace, name)
        return Response(status=204)


class AccountSecretView(_SecretDetail):
    pass


class WorkspaceSecretView(_SecretDetail):
    pass


class ProvidersView(VaultView):
    """GET: the last check and what would be checked. POST: check now."""

    @extend_schema(responses={200: s.ProvidersOut, **_VAULT_DOWN})
    def get(self, request):
        return Response(probe.providers_table(self.account))

    @extend_schema(request=None, responses={200: s.ProvidersOut, **_VAULT_DOWN})
    def post(self, request):
        self.require_write()
        probe.check_account_providers(self.account.pk, report=True)
        return Response(probe.providers_table(self.account))


class ProbeView(VaultView):
    """`foldrun probe MODEL [--provider P] [--to WS]`: a real tool loop, server-side,
    with the key from the workspace (or account) vault."""

    @extend_schema(
        request=s.ProbeIn,
        responses={
            200: OpenApiResponse(s.ProbeOut, description="The probe ran: `ok` says whether the loop closed."),
            409: error(409, "The provider's key is not in the vault (`details.secret` names it)."),
            **_VAULT_DOWN,
        },
    )
    def post(self, request, ws: str | None = None):
        workspace = self.get_workspace(ws) if ws else None
        self.require_write()
        result = probe.check_probe(self.account, workspace, validated(s.ProbeIn, request.data))
        return Response(result)


class OAuthStartView(VaultView):
    """Begin a dashboard Connect; answers the consent URL and the exact redirect URL."""

    @extend_schema(
        request=s.OAUTH_START_IN, responses={200: s.OAuthStartOut, 404: error(404, "No such workspace."), **_VAULT_DOWN}
    )
    def post(self, request):
        self.require_write()
        data = request.data if isinstance(request.data, dict) else None
        shape = (
            s.OAuthPresetStartIn
            if data is not None and data.get("provider") not in (None, "", "custom")
            else s.OAuthCustomStartIn
        )
        return Response(connect.check_start(self.membership, validated(shape, data)))


class OAuthRedirectView(VaultView):
    @extend_schema(responses=s.RedirectUriOut)
    def get(self, request):
        return Response({"redirect_uri": connect.dashboard_redirect_uri()})


class OAuthCallbackView(VaultView):
    """The provider sends the browser here with ?code&state (or ?error)."""

    @extend_schema(
        parameters=[
            OpenApiParameter("state", OpenApiTypes.STR, required=True, description="the connect's state"),
            OpenApiParameter("code", OpenApiTypes.STR, description="the provider's code"),
            OpenApiParameter("error", OpenApiTypes.STR, description="the provider's refusal"),
        ],
        responses={
            302: OpenApiResponse(description="Back to the Secrets page, which says what happened."),
            404: error(404, "No connect of this account has that state."),
            **_VAULT_DOWN,
        },
    )
    def get(self, request):
        from django.contrib import messages

        pending = connect.pending_for(self.membership, request.query_params.get("state") or "")
        target = f"/w/{pending.workspace.name}/settings/secrets" if pending.workspace_id else "/settings/secrets"
        try:
            row, _ = connect.check_callback(self.membership, request.query_params)
        except ApiError as exc:
            messages.error(request._request, exc.message)
            return HttpResponseRedirect(target)
        return HttpResponseRedirect(f"{target}?connected={row.name}")


_LOGIN_ID = OpenApiParameter("login_id", OpenApiTypes.STR, OpenApiParameter.PATH, description="the login's id (vlg_…)")


class LoginsView(VaultView):
    """Logins by host, for browser sessions opened with `credentials`: the password is never answered."""

    @extend_schema(responses={200: s.SiteLoginListOut, **_VAULT_DOWN})
    def get(self, request):
        return Response({"results": [logins.login_data(row) for row in logins.logins_of(self.account)]})

    @extend_schema(
        request=s.SiteLoginIn,
        responses={200: s.SiteLoginOut, **_VAULT_DOWN},
        description="Set the login of a host (and namespace), replacing the one set before.",
    )
    def post(self, request):
        return Response(logins.login_data(logins.check_set_login(self.membership, _body(request), user=request.user)))


class LoginView(VaultView):
    @extend_schema(parameters=[_LOGIN_ID], responses={204: None, 404: error(404, "No such login in this account.")})
    def delete(self, request, login_id: str):
        logins.check_delete_login(self.membership, login_id)
        return Response(status=204)
