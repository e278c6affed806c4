"""Dates read the same everywhere, in English and Chinese: "2026-12-02 18:58", 24-hour."""

from __future__ import annotations

import datetime as dt

import pytest
from django.template import Context, Template
from django.utils import translation

WHEN = dt.datetime(2026, 12, 2, 18, 58, tzinfo=dt.UTC)


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_every_named_format_is_the_sites_one_style(language: str) -> None:
    """The named formats templates use and the literal one give the same text; no "p.m."."""
    template = Template(
        '{{ w|date:"SHORT_DATETIME_FORMAT" }}|{{ w|date:"DATETIME_FORMAT" }}|'
        '{{ w|date:"Y-m-d H:i" }}|{{ w|date:"SHORT_DATE_FORMAT" }}|{{ w|time }}'
    )
    with translation.override(language):
        shown = template.render(Context({"w": WHEN}))
    assert shown == "2026-12-02 18:58|2026-12-02 18:58|2026-12-02 18:58|2026-12-02|18:58"


def test_a_sentence_ending_with_a_time_has_one_full_stop() -> None:
    """The amend notice ("You reviewed this sample on …") once ended in "p.m.."."""
    template = Template(
        '{% load i18n %}{% blocktranslate with when=w|date:"SHORT_DATETIME_FORMAT" %}'
        "You reviewed this sample on {{ when }}. Until the other reviews settle it you can "
        "change your review here.{% endblocktranslate %}"
    )
    with translation.override("en"):
        shown = template.render(Context({"w": WHEN}))
    assert "on 2026-12-02 18:58. Until" in shown and ".." not in shown
