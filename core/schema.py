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
from drf_spectacular.plumbing import ResolvedComponent, force_instance
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from core.parsers import MAX_JSON_DEPTH

ERROR = "Error"
VALIDATION_ERROR = "ValidationError"
JSON_VALUE = "JsonValue"

# The parsers refuse a NUL character anywhere in a request (PostgreSQL stores none): every
# string a request carries, and every key of a free-form object, matches this.
NO_NUL = "^[^\\u0000]*$"
JSON_VALUE_REF = {"$ref": f"#/components/schemas/{JSON_VALUE}"}
# Any JSON value the parsers accept: no NUL in a string or key, at most MAX_JSON_DEPTH levels.
JSON_VALUE_SCHEMA: dict[str, Any] = {
    "description": f"Any JSON value without NUL characters, nested at most {MAX_JSON_DEPTH} "
    "levels deep.",
    "anyOf": [
        {"type": "null"},
        {"type": "boolean"},
        {"type": "number"},
        {"type": "string", "pattern": NO_NUL},
        {"type": "array", "items": JSON_VALUE_REF},
        {
            "type": "object",
            "propertyNames": {"pattern": NO_NUL},
            "additionalProperties": JSON_VALUE_REF,
        },
    ],
}

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


def when(field: str, values: list[Any], then: dict[str, Any]) -> dict[str, Any]:
    """A cross-field rule for a serializer's ``schema_rules``: when ``field`` is one of
    ``values`` (or left out, if its default is among them), the body also matches ``then``."""
    return {"if": {"properties": {field: {"enum": values}}}, "then": then}


# A string that is not blank once trimmed.
NOT_BLANK: dict[str, Any] = {"type": "string", "pattern": "\\S"}


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's AutoSchema, adding the error answers the view can give, and the
    cross-field rules an input serializer states in ``schema_rules`` (JSON Schema ``if`` and
    ``then``, checked where the serializer's service checks them), and ``additionalProperties:
    false`` for one that ``refuses_unknown`` names."""

    def _map_basic_serializer(self, serializer: Any, direction: Any) -> dict[str, Any]:
        schema: dict[str, Any] = super()._map_basic_serializer(  # type: ignore[no-untyped-call]
            serializer, direction
        )
        # A rule that depends on a setting is a function, called as the schema is built.
        rules = [r() if callable(r) else r for r in getattr(serializer, "schema_rules", ())]
        if direction == "request" and rules:
            schema["allOf"] = rules
        # An input serializer that refuses names it does not have says so.
        if direction == "request" and getattr(serializer, "refuses_unknown", False):
            schema["additionalProperties"] = False
        return schema

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

    def _map_serializer_field(
        self, field: Any, direction: Any, bypass_extensions: bool = False
    ) -> dict[str, Any]:
        """A list that may not be empty says so (``minItems``), as its ``min_length`` would."""
        schema: dict[str, Any] = super()._map_serializer_field(  # type: ignore[no-untyped-call]
            field, direction, bypass_extensions
        )
        if (
            isinstance(field, serializers.ListField)
            and not field.allow_empty
            and schema.get("type") == "array"
        ):
            schema.setdefault("minItems", 1)
        return schema

    def map_parsers(self) -> list[Any]:
        """One media type per body, the one clients send: multipart for a body with a file,
        JSON otherwise. (The form parsers stay for the pages' posts; a form cannot carry the
        typed values, lists and objects the bodies describe.)"""
        media_types: list[Any] = super().map_parsers()
        serializer = force_instance(self.get_request_serializer())  # type: ignore[no-untyped-call]
        uploads = isinstance(serializer, serializers.Serializer) and any(
            isinstance(field, serializers.FileField) for field in serializer.fields.values()
        )
        wanted = "multipart/form-data" if uploads else "application/json"
        return [wanted] if wanted in media_types else media_types


def describe_request_limits(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """Postprocessing hook: state the parsers' limits in every request's schema (strings and
    keys without NUL, free-form values as ``JsonValue``), so a request the schema calls valid
    is one the parsers accept. Unknown body fields are ignored, and described so."""
    components: dict[str, Any] = result.setdefault("components", {}).setdefault("schemas", {})
    seen: set[str] = set()
    used = False
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict):
                continue
            for parameter in operation.get("parameters", []):
                if parameter.get("in") == "query":
                    used |= _harden(parameter.get("schema", {}), components, seen, form=True)
            content = operation.get("requestBody", {}).get("content", {})
            for media_type, body in content.items():
                form = media_type != "application/json"
                used |= _harden(body.get("schema", {}), components, seen, form=form)
    if used:
        components[JSON_VALUE] = JSON_VALUE_SCHEMA
    return result


def _is_untyped(schema: Any) -> bool:
    return isinstance(schema, dict) and not (
        {"type", "$ref", "enum", "allOf", "anyOf", "oneOf", "const"} & set(schema)
    )


def _harden(schema: Any, components: dict[str, Any], seen: set[str], *, form: bool) -> bool:
    """Add the NUL and free-form rules to one request schema (in place); True when it now
    refers to ``JsonValue``."""
    if not isinstance(schema, dict):
        return False
    ref = schema.get("$ref")
    if isinstance(ref, str):
        name = ref.rsplit("/", 1)[-1]
        if name in seen or name not in components:
            return name == JSON_VALUE
        seen.add(name)
        return _harden(components[name], components, seen, form=form)
    used = False
    types = schema.get("type")
    types = types if isinstance(types, list) else [types]
    if "string" in types and not {"enum", "format", "pattern", "const"} & set(schema):
        schema["pattern"] = NO_NUL
    if "object" in types:
        for name, field in schema.get("properties", {}).items():
            if _is_untyped(field):
                schema["properties"][name] = {**field, **JSON_VALUE_REF}
                used = True
            else:
                used |= _harden(field, components, seen, form=form)
        extra = schema.get("additionalProperties", True)
        if extra is True or _is_untyped(extra):
            schema["additionalProperties"] = (
                {"type": "string", "pattern": NO_NUL} if form else JSON_VALUE_REF
            )
            used |= not form
        else:
            used |= _harden(extra, components, seen, form=form)
        schema.setdefault("propertyNames", {"pattern": NO_NUL})
    if "array" in types:
        if _is_untyped(schema.get("items", {})):
            schema["items"] = JSON_VALUE_REF
            used = True
        else:
            used |= _harden(schema["items"], components, seen, form=form)
    for key in ("allOf", "anyOf", "oneOf"):
        for part in schema.get(key, []):
            used |= _harden(part, components, seen, form=form)
    return used
