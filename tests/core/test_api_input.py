"""Request bodies checked by a serializer's fields bound once (core/api_input.py): the same
values, defaults and 400s as the serializer itself."""

from __future__ import annotations

import uuid
from typing import Any

import pytest
from django.http import QueryDict
from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from core.api_input import validated
from review.apis import ClaimApi, ReviewCreateApi

SUBMIT = ReviewCreateApi.ReviewInputSerializer
CLAIM = ClaimApi.ClaimInputSerializer
KEY = str(uuid.uuid4())
GOOD = {"client_uuid": KEY, "sample": 3, "decision": "accept"}

BODIES: list[Any] = [
    GOOD,
    {**GOOD, "values": {"scenario": "math"}, "clarity": "4", "note": "  fine ", "seconds_spent": 2},
    {**GOOD, "image_aligned": "true", "audio_aligned": None, "naturalness": None},
    {**GOOD, "decision": "reject", "reject_reason": "duplicate"},
    {**GOOD, "sample": "12", "seconds_spent": "1.5"},
    {},
    {"decision": "accept"},
    {**GOOD, "client_uuid": "not-a-uuid"},
    {**GOOD, "sample": None},
    {**GOOD, "sample": "three"},
    {**GOOD, "decision": "perhaps", "reject_reason": "bored"},
    {**GOOD, "values": "text"},
    {**GOOD, "values": ["scenario"]},
    {**GOOD, "clarity": 2.5},
    {**GOOD, "clarity": True},
    {**GOOD, "image_aligned": "maybe"},
    {**GOOD, "note": "x" * 5001},
    {**GOOD, "note": {"a": 1}},
    {**GOOD, "seconds_spent": -1},
    {**GOOD, "seconds_spent": "soon"},
    [GOOD],
    "text",
    None,
    7,
]


def _serializer_answer(serializer_class: Any, body: Any) -> tuple[str, Any]:
    serializer = serializer_class(data=body)
    if serializer.is_valid():
        return "valid", dict(serializer.validated_data)
    return "invalid", serializer.errors


def _answer(serializer_class: Any, body: Any) -> tuple[str, Any]:
    try:
        return "valid", validated(serializer_class, body)
    except ValidationError as exc:
        return "invalid", exc.detail


@pytest.mark.parametrize("body", BODIES)
def test_a_body_gets_the_serializers_values_or_errors(body: Any) -> None:
    """Valid or not, every body gets what the submit's serializer answers: the same values
    (coerced, defaults filled) or the same messages for every bad field."""
    assert _answer(SUBMIT, body) == _serializer_answer(SUBMIT, body)


@pytest.mark.parametrize(
    "body", [{}, {"skipped": True}, {"sample": 4}, {"sample": "x"}, {"skipped": "no"}]
)
def test_the_claim_body_alike(body: Any) -> None:
    """The claim's optional fields: defaults when left out, the same 400 when bad."""
    assert _answer(CLAIM, body) == _serializer_answer(CLAIM, body)


def test_a_form_body_is_read_as_the_serializer_reads_it() -> None:
    """A form-encoded body (a QueryDict) gives the same values as through the serializer."""
    body = QueryDict(f"client_uuid={KEY}&sample=5&decision=accept&clarity=3")
    assert _answer(SUBMIT, body) == _serializer_answer(SUBMIT, body)
    assert validated(SUBMIT, body)["clarity"] == 3


def test_defaults_are_fresh_for_every_body() -> None:
    """A default dict is made anew each time: one request's values never leak to the next."""
    first = validated(SUBMIT, GOOD)
    first["values"]["scenario"] = "math"
    assert validated(SUBMIT, GOOD)["values"] == {}


def test_a_serializer_with_checks_of_its_own_is_refused() -> None:
    """A serializer with a ``validate_<field>`` method would be bypassed: refused outright."""

    class Checked(serializers.Serializer[Any]):
        name = serializers.CharField()

        def validate_name(self, value: str) -> str:
            return value

    with pytest.raises(TypeError, match="checks besides its fields"):
        validated(Checked, {"name": "a"})
