"""The OpenAPI schema a client can trust: the error body every refusal has, the statuses every view can
answer without saying so, and JSON fields that take only what they document.

`AutoSchema` (REST_FRAMEWORK's DEFAULT_SCHEMA_CLASS) adds to each operation the refusals its shape implies —
401 without a valid token and 503 when the token cannot be checked, 403 for a role that may not (any view
under `ScopedAPIView`, which sets `openapi_scoped`), 404 for a path that names something, 400/413/415 for a
request body, 400 for query parameters, 429 for a throttled view — so a view's `extend_schema` names only what is its own (409, 422…).
The `Strict*` fields refuse what DRF would coerce: `"message": 5` is not a string, `"prune": "yes"` not a
boolean, so a body is validated exactly against the schema it is documented with.
"""

from __future__ import annotations

import inspect
import re
from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import get_doc
from drf_spectacular.utils import OpenApiResponse, PolymorphicProxySerializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from foldrun.api import ApiError


class ErrorSerializer(serializers.Serializer):
    """Every refusal: a stable code, one sentence for a person, and details (the field, the findings…)."""

    code = serializers.CharField(help_text="stable, for programs: invalid, not_found, forbidden, …")
    message = serializers.CharField(help_text="one sentence that says what to do next")
    details = serializers.DictField(
        help_text="what the refusal is about: the field or parameter (with `choices` when "
        "it refused a value not among them), the findings"
    )

    class Meta:
        ref_name = "Error"


ERROR_SENTENCES: dict[str, str] = {
    "400": "The request is malformed; `message` names the field or parameter.",
    "401": "No valid API token (send `Authorization: Bearer frt_…`).",
    "403": "Your role may not do this, or you are a member of no account.",
    "404": "Not found — or another account's (the two answer alike).",
    "409": "It conflicts with the object's state; `message` says which.",
    "410": "It has expired.",
    "413": "The request body is too large.",
    "415": "The request body is not JSON (send `Content-Type: application/json`).",
    "422": "The files were refused; `details.findings` lists why.",
    "429": "Too many requests; wait a minute.",
    "503": "A service this needs is not available; `message` says which.",
}


def error(code: int | str, description: str | None = None) -> OpenApiResponse:
    code = str(code)
    return OpenApiResponse(ErrorSerializer, description=description or ERROR_SENTENCES[code])


def errors(*codes: int | str) -> dict[int, OpenApiResponse]:
    """`{409: error(409), …}` for an `extend_schema(responses=…)`."""
    return {int(code): error(code) for code in codes}


SCALARS = {"integer", "number", "boolean", "string"}
_BLANK = {"type": "string", "maxLength": 0}


def _blank_once(schema: Any) -> Any:
    """drf-spectacular writes a blank-allowed string with a pattern as oneOf [the pattern, maxLength 0]. When
    the pattern takes "" as well, "" fits both and oneOf calls it invalid (the API takes it): the pattern's
    own schema says it all."""
    alternatives = schema.get("oneOf") if isinstance(schema, dict) else None
    if (
        alternatives
        and len(alternatives) == 2
        and alternatives[1] == _BLANK
        and re.search(alternatives[0].get("pattern", "(?!)"), "")
    ):
        return {**alternatives[0], **{k: v for k, v in schema.items() if k != "oneOf"}}
    return schema


class AutoSchema(SpectacularAutoSchema):
    def _implied_errors(self, operation: dict) -> list[str]:
        view = self.view
        codes: list[str] = []
        if not any(isinstance(p, AllowAny) for p in view.get_permissions()):
            codes.append("401")
        if any(getattr(a, "openapi_unavailable", False) for a in view.get_authenticators()):
            # Any request with a Bearer token has it checked (DRF authenticates before the view), and a token the
            # database cannot be asked about is a 503 (accounts.auth) — AllowAny views included.
            codes.append("503")
        if getattr(view, "openapi_scoped", False):
            codes.append("403")
        if "{" in self.path:
            codes.append("404")
        if "requestBody" in operation:
            codes += ["400", "413", "415"]
        if any(p.get("in") == "query" for p in operation.get("parameters", [])):
            codes.append("400")
        if view.get_throttles():
            codes.append("429")
        return codes

    def get_description(self) -> str:
        # A view's own docstring or its method's — never one inherited from a base (ScopedAPIView's would
        # describe every operation as "the base of every API view").
        method = getattr(self.view, self.method.lower(), None)
        own = self.view.__class__.__dict__.get("__doc__")
        return get_doc(method) if getattr(method, "__doc__", None) else (inspect.cleandoc(own) if own else "")

    def get_operation_id(self) -> str:
        # A GET of a plural path that names no one item (`/runs`, not `/runs/{run_id}` or `/me`) lists: so a
        # collection and its items never share an operationId (drf-spectacular guesses "retrieve" for both).
        operation_id = super().get_operation_id()
        path = self.path.rstrip("/")
        if (
            self.method == "GET"
            and operation_id.endswith("_retrieve")
            and not path.endswith("}")
            and path.endswith("s")
        ):
            return operation_id[: -len("_retrieve")] + "_list"
        return operation_id

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        for name, field_schema in schema.get("properties", {}).items():
            schema["properties"][name] = _blank_once(field_schema)
            if isinstance(field_schema, dict) and field_schema.get("type") == "array":  # a list of such strings
                field_schema["items"] = _blank_once(field_schema.get("items"))
        if getattr(serializer, "openapi_closed", None):  # validated() refuses a field it does not name
            schema["additionalProperties"] = False
        return schema

    def get_operation(self, path, path_regex, path_prefix, method, registry):
        operation = super().get_operation(path, path_regex, path_prefix, method, registry)
        if operation is None:
            return None
        for parameter in operation.get("parameters", []):
            # A query value is one scalar: an object sent for it is `at=a,1` (a 400), not `a=1` (no `at` at all).
            if parameter.get("in") == "query" and parameter.get("schema", {}).get("type") in SCALARS:
                parameter["explode"] = False
        if "requestBody" in operation and isinstance(self.get_request_serializer(), PolymorphicProxySerializer):
            # One of several shapes (a secret's value or oauth, a preset or custom connect): never no body.
            operation["requestBody"]["required"] = True
        responses = operation["responses"]
        for code in self._implied_errors(operation):
            if code not in responses:
                responses[code] = self._get_response_for_code(error(code), code)
        operation["responses"] = dict(sorted(responses.items()))
        return operation


NO_NUL = r"^[^\x00]*$"


class StrictCharField(serializers.CharField):
    """A string and nothing else (DRF's CharField turns 5 into "5"), kept as sent (no trimming), and held
    to `regex_pattern` — which the schema documents as the field's `pattern` — or else to "no NUL", which
    no database column takes."""

    def __init__(self, *, regex_pattern: str = NO_NUL, pattern_message: str | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("trim_whitespace", False)
        super().__init__(**kwargs)
        # %% for a pattern's own %: Django fills the message with `message % params`.
        message = pattern_message or (
            "may not hold a NUL character."
            if regex_pattern == NO_NUL
            else f"does not match the pattern {regex_pattern.replace('%', '%%')} the API documents."
        )
        self.validators.append(RegexValidator(regex_pattern, message=message))

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictIntegerField(serializers.IntegerField):
    """A JSON integer and nothing else (DRF's IntegerField takes "5" and 5.0)."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, bool) or not isinstance(data, int):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictBooleanField(serializers.BooleanField):
    """true or false (DRF's BooleanField takes "yes", 1 and "on")."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


class QueryBooleanField(serializers.BooleanField):
    """A query-string boolean: true, false, 1 or 0 (any case) — what a boolean looks like in a URL."""

    WORDS = {"true": True, "1": True, "false": False, "0": False}

    def to_internal_value(self, data: Any) -> bool:
        value = self.WORDS.get(str(data).strip().lower())
        if value is None:
            self.fail("invalid")
        return value


def _first_error(errors: Any, where: str = "") -> tuple[str, str]:
    """The first refusal in a serializer's errors, with the dotted field it is about."""
    if isinstance(errors, dict) and errors:
        key, value = next(iter(errors.items()))
        inner = where if key == "non_field_errors" else (f"{where}.{key}" if where else str(key))
        return _first_error(value, inner)
    if isinstance(errors, list) and errors:
        return _first_error(errors[0], where)
    return where, errors if isinstance(errors, str) else str(errors)  # DRF's ErrorDetail, a str, keeps its .code


def _choices(serializer: serializers.Serializer, field: str, message: str) -> list[str] | None:
    """The values a top-level choice field takes, when `message` refused one it does not."""
    chosen = serializer.fields.get(field) if field else None
    if getattr(message, "code", None) != "invalid_choice" or not isinstance(chosen, serializers.ChoiceField):
        return None
    return [str(value) for value in chosen.choices]


def validated(serializer_class: type[serializers.Serializer], data: Any, **kwargs: Any) -> dict:
    """`data` read through `serializer_class`, the serializer that documents it: a 400 naming the first field
    that does not fit (`{"code": "invalid", "message": "role: …", "details": {"field": "role"}}`)."""
    if not isinstance(data, dict):
        raise ApiError("The request body must be a JSON object.", code="invalid")
    closed = getattr(serializer_class, "openapi_closed", None)
    unknown = sorted(set(data) - set(serializer_class().fields)) if closed else []
    if unknown:
        raise ApiError(f"{unknown[0]} {closed}", code="invalid", details={"field": unknown[0]})
    serializer = serializer_class(data=data, **kwargs)
    if not serializer.is_valid():
        field, message = _first_error(serializer.errors)
        details: dict[str, Any] = {"field": field} if field else {}
        choices = _choices(serializer, field, message)
        if choices is not None:
            # A refused choice lists the ones that would do (a field's own message may list them already).
            details["choices"] = choices
            if not all(choice in message for choice in choices):
                message = f"{message.rstrip('.')}; use one of: {', '.join(choices)}."
        raise ApiError(f"{field}: {message}" if field else message, code="invalid", details=details)
    return serializer.validated_data
