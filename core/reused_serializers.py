"""DRF serializers built once and reused, for the API calls of the review loop.

Why: a serializer instance deep-copies its class's declared fields the first time it is used
(``Serializer.get_fields``, then binds each copy): measured with ``bench/profile_review.py``,
about 900 Python calls for the claim's answer, 700 for a review's answer and 750 for a
review's input, a fifth of a claim and submit's calls. ``to_representation`` and
``run_validation`` read the instance's bound fields and keep nothing on it, so one instance
serves every request and thread (``tests/core/test_reused_serializers.py`` pins both, and that
the answers are those of a fresh serializer). A bad input is worded by a fresh serializer's
``is_valid``, so its 400 says exactly what DRF says.
"""

from __future__ import annotations

from typing import Any

from rest_framework import serializers


class ReusedSerializer:
    """One instance of ``serializer_class`` (built without data, instance or context), for
    answers (:meth:`represent`) and for input (:meth:`validate`)."""

    def __init__(self, serializer_class: type[serializers.Serializer[Any]]) -> None:
        self._class = serializer_class
        self._serializer = serializer_class()

    def represent(self, instance: Any) -> Any:
        """What ``serializer_class(instance).data`` holds."""
        return self._serializer.to_representation(instance)

    def validate(self, data: Any) -> Any:
        """What ``serializer_class(data=data)``'s ``validated_data`` holds once valid; raises
        the ``ValidationError`` of its ``is_valid(raise_exception=True)`` otherwise."""
        try:
            return self._serializer.run_validation(data)
        except serializers.ValidationError:
            self._class(data=data).is_valid(raise_exception=True)
            raise
