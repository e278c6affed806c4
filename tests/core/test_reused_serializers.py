"""One serializer instance serves every request (core/reused_serializers.py): DRF's
``to_representation`` and ``run_validation`` keep nothing on the instance, so its answers and
its errors are a fresh serializer's, in any order and from any thread."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from django.utils import timezone
from rest_framework import serializers

from core.reused_serializers import ReusedSerializer
from tests.support.threads import run_threads


class ItemSerializer(serializers.Serializer[Any]):
    class PartSerializer(serializers.Serializer[Any]):
        role = serializers.CharField()
        size = serializers.IntegerField(source="bytes")

    id = serializers.IntegerField(source="item.id")
    at = serializers.DateTimeField()
    kind = serializers.ChoiceField(choices=["a", "b"])
    values = serializers.DictField()
    parts = PartSerializer(many=True)
    name = serializers.SerializerMethodField()

    def get_name(self, value: dict[str, Any]) -> str:
        return f"{value['kind']}-{value['item']['id']}"


class InputSerializer(serializers.Serializer[Any]):
    decision = serializers.ChoiceField(choices=["accept", "reject"])
    count = serializers.IntegerField(min_value=0, required=False, default=0)
    note = serializers.CharField(required=False, allow_blank=True, default="", max_length=5)
    values = serializers.DictField(required=False, default=dict)


def _item(n: int) -> dict[str, Any]:
    return {
        "item": {"id": n},
        "at": dt.datetime(2026, 12, 2, 18, n % 60, tzinfo=dt.UTC),
        "kind": "ab"[n % 2],
        "values": {"n": n, "nested": [n, None]},
        "parts": [{"role": "image", "bytes": n}, {"role": "audio", "bytes": n + 1}],
    }


GOOD = [{"decision": "accept"}, {"decision": "reject", "count": 3, "note": "ok", "values": {}}]
BAD: list[Any] = [
    None,
    [],
    "text",
    {},
    {"decision": "maybe", "count": -1, "note": "too long", "values": []},
    {"decision": "accept", "count": "x"},
]


def _errors(data: Any) -> Any:
    fresh = InputSerializer(data=data)
    assert not fresh.is_valid()
    return fresh.errors


def test_a_reused_serializer_answers_as_a_fresh_one() -> None:
    """Nested, many, sourced, method and datetime fields alike, in the time zone active at
    the call."""
    reused = ReusedSerializer(ItemSerializer)
    for n in range(4):
        assert reused.represent(_item(n)) == ItemSerializer(_item(n)).data
    with timezone.override("Asia/Shanghai"):
        assert reused.represent(_item(5)) == ItemSerializer(_item(5)).data


def test_a_reused_serializer_validates_and_refuses_as_a_fresh_one() -> None:
    """Good input gives a fresh serializer's validated data (defaults filled); bad input
    raises the errors its ``is_valid`` gives, JSON null included ("No data provided"), and
    a refusal leaves nothing behind for the next input."""
    reused = ReusedSerializer(InputSerializer)
    for data in [*GOOD, *BAD, *GOOD]:
        fresh = InputSerializer(data=data)
        if fresh.is_valid():
            assert reused.validate(data) == fresh.validated_data
            continue
        with pytest.raises(serializers.ValidationError) as refused:
            reused.validate(data)
        assert refused.value.detail == fresh.errors
    assert _errors(None) == {"non_field_errors": ["No data provided"]}


def test_one_reused_serializer_serves_threads_at_once() -> None:
    """Eight threads validating good and bad input and answering items through the same two
    instances each get their own answers."""
    inputs, outputs = ReusedSerializer(InputSerializer), ReusedSerializer(ItemSerializer)
    expected = {i: InputSerializer(data=d) for i, d in enumerate([*GOOD, *BAD])}
    for fresh in expected.values():
        fresh.is_valid()

    def work(index: int) -> None:
        for round_ in range(40):
            key = (index + round_) % len(expected)
            fresh = expected[key]
            try:
                answer = ("valid", inputs.validate(fresh.initial_data))
            except serializers.ValidationError as exc:
                answer = ("errors", exc.detail)
            assert answer == (
                ("valid", fresh.validated_data) if not fresh.errors else ("errors", fresh.errors)
            )
            assert outputs.represent(_item(index + round_))["name"] == (
                f"{'ab'[(index + round_) % 2]}-{index + round_}"
            )

    assert run_threads(8, work) == []
