"""Tests for the response readers, including all 21 real LogicVista answer files."""

import io
import json
from pathlib import Path

import pytest

from annotation.formats.records import FormatError, RowError
from judging.formats.responses import (
    ParsedResponse,
    iter_logicvista_answers,
    iter_responses_jsonl,
    model_from_filename,
)

# CI keeps ../shared beside the clone.
ANSWERS = Path(__file__).resolve().parents[4] / "shared" / "data" / "logicvista" / "answers"


@pytest.mark.shared_data
def test_all_real_answer_files_parse_without_losing_a_row() -> None:
    """Each of the 21 answer files gives one response per item, text kept exactly."""
    files = sorted(ANSWERS.glob("*-answers.json"))
    assert len(files) == 21
    total = 0
    for path in files:
        raw = json.loads(path.read_text(encoding="utf-8-sig"))
        responses = list(iter_logicvista_answers(path))
        assert all(isinstance(r, ParsedResponse) for r in responses)
        assert len(responses) == len(raw) == 161
        model = path.name.removesuffix("-answers.json")
        for response in responses:
            assert isinstance(response, ParsedResponse)
            assert response.model == model
            assert response.response == raw[response.external_id]["answer"]
        total += len(responses)
    assert total == 21 * 161


def test_answer_file_needs_a_model(tmp_path: Path) -> None:
    """Without a caller's model or a "<MODEL>-answers.json" name the file is refused."""
    path = tmp_path / "answers.json"
    path.write_text('{"a": {"answer": "B"}}')
    with pytest.raises(FormatError, match="model is unknown"):
        list(iter_logicvista_answers(path))
    [response] = list(iter_logicvista_answers(path, model="GPT4"))
    assert isinstance(response, ParsedResponse)
    assert response.model == "GPT4"


def test_jsonl_responses_keep_text_exactly_and_report_bad_lines() -> None:
    """Whitespace and templates in responses survive; bad lines are RowErrors only."""
    lines = [
        json.dumps({"id": "1", "response": "  USER: <image>\nASSISTANT: (B) \n"}),
        json.dumps({"question_id": "2", "model": "other", "prediction": ""}),
        "{broken",
        json.dumps({"sample_id": "4"}),
        json.dumps({"response": "no id"}),
        json.dumps({"index": 6, "answer": None, "score": 1}),
    ]
    stream = io.BytesIO(("\ufeff" + "\n".join(lines)).encode())
    results = list(iter_responses_jsonl(stream, model="llava"))
    first, second, broken, no_response, no_id, null = results
    assert isinstance(first, ParsedResponse)
    assert first.response == "  USER: <image>\nASSISTANT: (B) \n"
    assert first.model == "llava"
    assert isinstance(second, ParsedResponse)
    assert (second.model, second.response) == ("other", "")
    assert isinstance(broken, RowError)
    assert isinstance(no_response, RowError)
    assert no_response.message == "line 4: the line has no response, answer or prediction"
    assert isinstance(no_id, RowError)
    assert isinstance(null, ParsedResponse)
    assert (null.external_id, null.response, null.extra) == ("6", "", {"score": 1})


def test_jsonl_response_without_any_model_is_a_row_error() -> None:
    """A line that names no model is refused when the caller gave none either."""
    [error] = list(iter_responses_jsonl(io.BytesIO(b'{"id": "1", "response": "A"}')))
    assert isinstance(error, RowError)
    assert "names no model" in error.message


def test_model_from_filename() -> None:
    """The model is the part before "-answers.json"."""
    assert model_from_filename("LLAVANEXT-7B-mistral-answers.json") == "LLAVANEXT-7B-mistral"
    assert model_from_filename("results.json") == ""
