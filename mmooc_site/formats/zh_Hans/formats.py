"""Dates and times in Chinese: the same style as in English (``mmooc_site.formats.en``)."""

from mmooc_site.formats.en.formats import (
    DATE_FORMAT,
    DATETIME_FORMAT,
    SHORT_DATE_FORMAT,
    SHORT_DATETIME_FORMAT,
    TIME_FORMAT,
)

__all__ = [
    "DATETIME_FORMAT",
    "DATE_FORMAT",
    "SHORT_DATETIME_FORMAT",
    "SHORT_DATE_FORMAT",
    "TIME_FORMAT",
]
