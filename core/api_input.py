"""A request body checked by a serializer's fields without building the serializer.

DRF builds a serializer's fields anew for every instance (a deep copy of the declared fields,
then binding each): on the review loop's submit that cost more than the checks themselves.
:func:`validated` binds a plain input serializer's fields once per class and runs each field's
own validation on the body, as ``Serializer.to_internal_value`` does, so values, defaults and
coercions are the serializer's. When anything is wrong it runs the serializer itself, so a bad
body gets exactly the serializer's 400 (every field's messages, in its words and language).

Only for flat input serializers whose checks are their fields': no ``validate`` or
``validate_<field>`` methods, no serializer validators, no ``source`` other than the name.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.fields import Field, SkipField


@cache
def _fields(
    serializer_class: type[serializers.Serializer[Any]],
) -> tuple[tuple[str, Field[Any, Any, Any, Any]], ...]:
    """The serializer's writable fields, bound once to an instance that is never validated
    (the fields keep no state of a validation: they may be shared between threads)."""
    template = serializer_class()
    plain = (
        type(template).validate is serializers.Serializer.validate
        and not template.validators
        and not any(
            name.startswith("validate_") and not hasattr(serializers.Serializer, name)
            for name in dir(serializer_class)
        )
    )
    fields = tuple((str(field.field_name), field) for field in template._writable_fields)
    if not plain or any(field.source_attrs != [name] for name, field in fields):
        raise TypeError(f"{serializer_class.__name__} has checks besides its fields")
    return fields


def validated(serializer_class: type[serializers.Serializer[Any]], data: Any) -> dict[str, Any]:
    """The body's validated values, as ``serializer_class(data=data).validated_data``; raises
    the serializer's own ``ValidationError`` when the body is not valid."""
    if isinstance(data, Mapping):
        values: dict[str, Any] = {}
        try:
            for name, field in _fields(serializer_class):
                try:  # noqa: SIM105 - cheaper than contextlib.suppress on the hot path
                    values[name] = field.run_validation(field.get_value(data))
                except SkipField:
                    pass
        except (ValidationError, DjangoValidationError):
            pass  # the serializer below reports every field's errors
        else:
            return values
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return dict(serializer.validated_data)
