"""Tests for the LogicVista reader, on the real 161 licensed items."""

from pathlib import Path

import pytest

from annotation.formats.logicvista import iter_logicvista
from annotation.formats.records import FormatError, ParsedSample
from annotation.formats.validate import TaxonomyView, validate_sample
from annotation.media_checks import inspect_image

# CI keeps ../shared beside the clone.
DATA = Path(__file__).resolve().parents[4] / "shared" / "data" / "logicvista"

pytestmark = pytest.mark.shared_data


def test_all_161_items_parse_and_their_images_are_valid() -> None:
    """Every real item parses, and every image it names passes inspect_image."""
    samples = list(iter_logicvista(DATA / "dataset.json"))
    assert len(samples) == 161
    assert all(isinstance(s, ParsedSample) for s in samples)
    assert len({s.external_id for s in samples}) == 161
    for sample in samples:
        assert isinstance(sample, ParsedSample)
        [image] = sample.media
        assert image.path is not None
        data = (DATA / image.path).read_bytes()
        info = inspect_image(data, max_bytes=20 * 1024 * 1024, max_pixels=40_000_000)
        assert info.format == "PNG"


def test_real_items_validate_except_the_empty_one() -> None:
    """Answers are checked against the options in the text; only the empty item fails."""
    problems = {
        s.external_id: validate_sample(s, TaxonomyView())
        for s in iter_logicvista(DATA / "dataset.json")
        if isinstance(s, ParsedSample)
    }
    failing = {key: value for key, value in problems.items() if value}
    assert failing == {"v1_382": ["the question is empty", "the reference answer is empty"]}


def test_item_fields_are_mapped() -> None:
    """Skill, reasoning, source link and options of a real item are kept."""
    samples = {
        s.external_id: s
        for s in iter_logicvista(DATA / "dataset.json")
        if isinstance(s, ParsedSample)
    }
    item = samples["v1_287"]
    assert item.question_format == "mcq"
    assert item.category_code == "deductive"
    assert item.reference_answer == "A"
    assert item.explanation.startswith("Here are the necessary calculations")
    assert item.source_url.startswith("https://member.assessmentday.com")
    assert [o["text"] for o in item.options] == ["True", "False", "Insufficient Information"]
    assert item.media[0].path == "images/v1_287.png"
    assert item.extra["broad_capability"] == ["ocr"]
    # Spatial items draw their options in the image.
    assert samples["v1_373"].options == []


def test_multi_letter_answers_are_normalised_and_checked(tmp_path: Path) -> None:
    """An answer "a,c" becomes "A, C" and each letter is checked against the options."""
    path = tmp_path / "dataset.json"
    path.write_text(
        '{"x1": {"imagename": "x1.png", "question": "Which? (A) one (B) two (C) three",'
        ' "answer": "a,c", "skill": ["spatial"]},'
        ' "x2": {"imagename": "x2.png", "question": "Which? (A) one (B) two",'
        ' "answer": "A, D", "skill": []}}',
        encoding="utf-8",
    )
    first, second = list(iter_logicvista(path))
    assert isinstance(first, ParsedSample) and isinstance(second, ParsedSample)
    assert first.reference_answer == "A, C"
    assert validate_sample(first, TaxonomyView()) == []
    assert validate_sample(second, TaxonomyView()) == [
        "the answer 'D' is not one of the options A, B"
    ]


def test_a_list_is_not_a_logicvista_file(tmp_path: Path) -> None:
    """A JSON list instead of an id-keyed object is refused as a whole."""
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(FormatError, match="not a JSON object"):
        list(iter_logicvista(path))
