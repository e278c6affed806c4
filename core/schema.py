"""The API schema's error answers, in one place: every operation documents the error statuses
its view can give, derived from the view's own parts rather than written per view.

- 400 (``ValidationError``): any request (bad query, body, parser refusals: size, depth, NUL);
- 401 and 403 (``Error``): a view that is not open to all (refused or missing credentials,
  then permission, CSRF for sessions);
- 404: an operation with path parameters or a body naming other objects;
- 409: an action on a named object (a service refusing it in the object's present state,
  ``core.api.CONFLICT_CODES``);
- 405 is left out (schemathesis checks it on undocumented methods, with ``Allow``);
- 406: any (an ``Accept`` the view cannot render);
- 413: an operation with a body (the upload limits);
- 415: an operation with a body in a media type its parsers do not read;
- 429: a view with throttles (with ``Retry-After``);
- 503: any (the database or the queue away, with ``Retry-After``).

Statuses a view states itself (``@extend_schema(responses={409: ...})``) keep their
description, and get the error body when they gave none.
"""

from __future__ import annotations

from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.plumbing import ResolvedComponent
from rest_framework.permissions import AllowAny

ERROR = "Error"
VALIDATION_ERROR = "ValidationError"

# ``detail`` is a message, or a list of them (a service's refusals).
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "detail": {
            "oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}],
        }
    },
    "required": ["detail"],
}
# A field's messages by field name (nested for nested input), ``detail`` or
# ``non_field_errors`` for the whole request; or a bare list of messages.
VALIDATION_ERROR_SCHEMA: dict[str, Any] = {
    "oneOf": [
        {"type": "object", "additionalProperties": {}},
        {"type": "array", "items": {"type": "string"}},
    ],
}

DESCRIPTIONS = {
    "400": "The request is malformed or breaks a rule (the messages say which).",
    "401": "No credentials, or a token that is unknown, revoked or expired.",
    "403": "The caller's role or membership does not allow this.",
    "404": "The object named does not exist or is not visible to the caller.",
    "406": "The Accept header names no media type this operation answers in.",
    "409": "The object's state does not allow this now.",
    "413": "The request body is larger than the upload limit.",
    "415": "The body's media type is not one this operation reads.",
    "429": "Too many requests: wait for Retry-After seconds.",
    "503": "A service the site depends on is away: retry after Retry-After seconds.",
}
RETRY_AFTER = {
    "Retry-After": {
        "schema": {"type": "integer"},
        "description": "Seconds to wait before retrying.",
    }
}
LOCATION = {
    "Location": {
        "schema": {"type": "string"},
        "description": "A started job's URL, to follow its progress at.",
    }
}
WWW_AUTHENTICATE = {
    "WWW-Authenticate": {
        "schema": {"type": "string"},
        "description": "The scheme to authenticate with: Token.",
    }
}


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's AutoSchema, adding the error answers the view can give."""

    def _error_statuses(self) -> list[str]:
        view = self.view
        has_body = self.method in ("POST", "PUT", "PATCH")
        has_path_parameters = "{" in self.path
        open_to_all = all(isinstance(permission, AllowAny) for permission in view.get_permissions())
        statuses = ["400", "406", "503"]
        if not open_to_all:
            statuses += ["401", "403"]
        if has_path_parameters or has_body:
            statuses.append("404")
        if has_body:
            statuses += ["413", "415"]
        if has_path_parameters and self.method != "GET":
            statuses.append("409")
        if view.get_throttles():
            statuses.append("429")
        return sorted(statuses)

    def _error_ref(self, code: str) -> dict[str, Any]:
        name, schema = (
            (VALIDATION_ERROR, VALIDATION_ERROR_SCHEMA) if code == "400" else (ERROR, ERROR_SCHEMA)
        )
        component = ResolvedComponent(  # type: ignore[no-untyped-call]
            name=name, type=ResolvedComponent.SCHEMA, object=name, schema=schema
        )
        self.registry.register_on_missing(component)
        ref: dict[str, Any] = component.ref
        return ref

    def _error_response(self, code: str) -> dict[str, Any]:
        response: dict[str, Any] = {
            "description": DESCRIPTIONS.get(code, ""),
            "content": {"application/json": {"schema": self._error_ref(code)}},
        }
        if code in ("429", "503"):
            response["headers"] = RETRY_AFTER
        elif code == "401":
            response["headers"] = WWW_AUTHENTICATE
        return response

    def _get_request_for_media_type(self, serializer: Any, direction: Any = "request") -> Any:
        """A PATCH body is described as partial only where the view reads it so (its
        ``patch_is_partial``); elsewhere its serializer's required fields are required."""
        if self.method != "PATCH" or getattr(self.view, "patch_is_partial", False):
            return super()._get_request_for_media_type(serializer, direction)  # type: ignore[no-untyped-call]
        self.method = "PUT"
        try:
            return super()._get_request_for_media_type(serializer, direction)  # type: ignore[no-untyped-call]
        finally:
            self.method = "PATCH"

    def _get_response_bodies(self, direction: Any = "response") -> dict[str, Any]:
        responses: dict[str, Any] = super()._get_response_bodies(direction)
        for code, response in responses.items():
            if code[0] == "4" and not response.get("content"):
                error = self._error_response(code)
                responses[code] = error
        if "202" in responses:
            responses["202"].setdefault("headers", {}).update(LOCATION)
        for code in self._error_statuses():
            responses.setdefault(code, self._error_response(code))
        return responses
