"""Tests for the project's own JSON-lines export format."""

import io

from annotation.formats.jsonl import iter_jsonl, write_jsonl
from annotation.formats.records import MediaRef, ParsedSample, RowError


def test_round_trip_keeps_every_field() -> None:
    """Writing samples and reading them back gives equal samples."""
    samples = [
        ParsedSample(
            row=1,
            external_id="q1",
            question="Qué? (A) sí (B) no",
            question_format="mcq",
            options=[{"label": "A", "text": "sí"}, {"label": "B", "text": "no"}],
            reference_answer="A",
            explanation="why",
            answerability_group="ooc",
            category_code="MKB",
            scenario="math",
            pipeline="human_designed",
            generator_models=["GPT-4o"],
            licence="CC-BY-4.0",
            media=[
                MediaRef("image", 0, data=b"\x89PNG\x00\xff"),
                MediaRef("image", 1, path="a/b.png"),
                MediaRef("image", 2, same_as="q0"),
            ],
            extra={"nested": {"k": [1, 2]}},
        ),
        ParsedSample(
            row=2,
            external_id="s1",
            speech_utterance="hello",
            safety_label="safe",
            predicate=["a", "b"],
            media=[MediaRef("audio", 0, path="x.ogg")],
        ),
    ]
    buffer = io.StringIO()
    assert write_jsonl(samples, buffer) == 2
    buffer.seek(0)
    assert list(iter_jsonl(buffer)) == samples


def test_malformed_record_is_a_row_error() -> None:
    """A record with a wrongly typed field fails alone; unknown keys go to extra."""
    stream = io.StringIO(
        '{"external_id": "a", "options": "A"}\n{"external_id": "b", "future_field": 1}\n'
    )
    error, sample = list(iter_jsonl(stream))
    assert isinstance(error, RowError)
    assert error.message == "line 1: the record is malformed ('options' is not a list)"
    assert isinstance(sample, ParsedSample)
    assert sample.extra == {"future_field": 1}
