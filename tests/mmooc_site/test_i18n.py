"""The interface in English and Simplified Chinese: every visible string is translatable and
translated, and a user's language choice is remembered."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import polib
import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import Client

ROOT = Path(settings.BASE_DIR)
CATALOGUE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
TEMPLATE_DIRS = [ROOT / "templates"]

_BLOCKS = [
    re.compile(r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}", re.S),
    re.compile(r"{#.*?#}", re.S),
    re.compile(r"{%\s*blocktrans(late)?\b.*?{%\s*endblocktrans(late)?\s*%}", re.S),
    re.compile(r"<script\b.*?</script>", re.S | re.I),
    re.compile(r"<style\b.*?</style>", re.S | re.I),
    # Key names in shortcut hints are the keys themselves, the same in every language.
    re.compile(r"<kbd\b[^>]*>.*?</kbd>", re.S | re.I),
]
_TAGS = re.compile(r"{%.*?%}|{{.*?}}", re.S)
_TRANSLATED_ATTRS = ("alt", "title", "placeholder", "aria-label", "label")
_ATTR = re.compile(r"\b(" + "|".join(_TRANSLATED_ATTRS) + r')\s*=\s*"([^"]*)"', re.I)
_HTML_TAG = re.compile(r"<[^>]*>", re.S)
_ENTITY = re.compile(r"&[#\w]+;")
_WORDS = re.compile(r"[A-Za-z\u4e00-\u9fff]")


def untranslated_text(source: str) -> list[str]:
    """Visible text in a template that is outside the translation tags."""
    for block in _BLOCKS:
        source = block.sub(" ", source)
    problems = [
        f'{name}="{value}"'
        for name, value in _ATTR.findall(source)
        if _WORDS.search(_TAGS.sub("", value))
    ]
    text = _ENTITY.sub(" ", _HTML_TAG.sub(" ", _TAGS.sub(" ", source)))
    problems += [chunk.strip() for chunk in re.split(r"\s{2,}|\n", text) if _WORDS.search(chunk)]
    return problems


def _templates() -> list[Path]:
    found = [p for folder in TEMPLATE_DIRS for p in folder.rglob("*.html")]
    for app in ("annotation", "review", "judging", "accounts", "mmooc_site"):
        found += list((ROOT / app / "templates").rglob("*.html"))
    return sorted(found)


def test_the_lint_finds_text_outside_translation_tags() -> None:
    """The lint flags bare text and attributes, and accepts translated ones."""
    bad = '<h1>Datasets</h1><img alt="Thumbnail"><p>{{ sample.question }}</p>'
    assert untranslated_text(bad) == ['alt="Thumbnail"', "Datasets"]
    good = (
        '{% load i18n %}<h1>{% translate "Datasets" %}</h1>'
        "<img alt=\"{% translate 'Thumbnail' %}\">"
        "{% blocktranslate with n=1 %}Page {{ n }}{% endblocktranslate %}"
        "<script>const x = 'code';</script>{# a comment #}"
    )
    assert untranslated_text(good) == []


def test_no_template_shows_text_outside_the_translation_tags() -> None:
    """Every user-visible string in every template goes through the translation tags."""
    problems = {
        str(path.relative_to(ROOT)): found
        for path in _templates()
        if (found := untranslated_text(path.read_text(encoding="utf-8")))
    }
    assert problems == {}


def test_the_chinese_catalogue_is_complete() -> None:
    """Every message is translated into Simplified Chinese; none is fuzzy."""
    catalogue = polib.pofile(str(CATALOGUE))
    untranslated = [e.msgid for e in catalogue.untranslated_entries()]
    fuzzy = [e.msgid for e in catalogue.fuzzy_entries()]
    assert untranslated == [] and fuzzy == []
    assert len(catalogue.translated_entries()) > 50


@pytest.mark.skipif(not shutil.which("xgettext"), reason="GNU gettext's xgettext is missing")
def test_makemessages_finds_no_string_missing_from_the_catalogue(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Running makemessages adds nothing: the committed catalogue holds every string.

    makemessages writes into the project's own ``locale`` folder (it finds it while walking
    the tree), so the fresh catalogue is read there and the committed file put back after.
    """
    monkeypatch.chdir(ROOT)
    committed_text = CATALOGUE.read_bytes()
    committed = {e.msgid for e in polib.pofile(str(CATALOGUE)) if not e.obsolete}
    try:
        call_command(
            "makemessages",
            locale=["zh_Hans"],
            ignore_patterns=[".venv/*", "var/*", "tests/*", "bench/*", "node_modules/*"],
            verbosity=0,
            no_obsolete=True,
        )
        fresh = polib.pofile(str(CATALOGUE))
    finally:
        CATALOGUE.write_bytes(committed_text)
    missing = sorted({e.msgid for e in fresh if not e.obsolete} - committed)
    assert missing == []


@pytest.mark.django_db
def test_a_users_language_choice_is_remembered_at_the_next_login(annotator: Any) -> None:
    """Choosing Chinese once brings the interface back in Chinese on a new browser."""
    browser = Client()
    browser.force_login(annotator)
    browser.post("/i18n/setlang/", {"language": "zh-hans", "next": "/datasets/"})
    fresh = Client()
    response = fresh.post("/login/", {"username": annotator.username, "password": "pw-for-tests-1"})
    assert response.status_code == 302
    assert response.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    page = fresh.get("/datasets/")
    assert page.headers["Content-Language"] == "zh-hans"


@pytest.mark.django_db
def test_the_browser_language_is_the_default(annotator: Any) -> None:
    """Without a saved choice, the browser's Accept-Language decides."""
    client = Client(headers={"accept-language": "zh-CN,zh;q=0.9"})
    client.force_login(annotator)
    assert client.get("/datasets/").headers["Content-Language"] == "zh-hans"
    english = Client(headers={"accept-language": "en-GB"})
    english.force_login(annotator)
    assert english.get("/datasets/").headers["Content-Language"] == "en"


def test_parser_and_media_messages_follow_the_active_language() -> None:
    """Row errors of the Django-free parsers and media checks are shown in the user's language,
    with their values filled in."""
    from django.utils import translation

    from annotation.formats.records import ParsedSample
    from annotation.formats.validate import TaxonomyView, validate_sample
    from annotation.media_checks import MediaError, inspect_audio, inspect_image

    sample = ParsedSample(row=3, external_id="q1", question="Q?", category_code="XYZ")
    taxonomy = TaxonomyView(categories={"VFP": "ooc"})
    with translation.override("zh-hans"):
        problems = validate_sample(sample, taxonomy)
        with pytest.raises(MediaError) as refused:
            inspect_image(b"not an image", max_bytes=1000, max_pixels=1000)
    assert any("未知的类别编码“XYZ”" in problem for problem in problems)
    assert "图像" in str(refused.value)
    with translation.override("zh-hans"):
        with pytest.raises(MediaError) as empty:
            inspect_audio(b"", max_bytes=1000)
        with pytest.raises(MediaError) as big:
            inspect_image(b"x" * 2000, max_bytes=1000, max_pixels=1000)
    assert str(empty.value) == "音频文件为空"  # the kind is part of the translated sentence
    assert "audio" not in str(empty.value) and "image" not in str(big.value)
    assert "图像文件大小为 2000 字节" in str(big.value)
    with translation.override("en"):
        assert any("unknown category code 'XYZ'" in p for p in validate_sample(sample, taxonomy))
