"""Tests for the MMOOC reader (Parquet and JSON lines)."""

import base64
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from annotation.formats.mmooc import category_code, iter_mmooc
from annotation.formats.records import FormatError, NotThisFormat, ParsedSample, RowError


def png_bytes(colour: str = "red") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (4, 3), colour).save(buffer, format="PNG")
    return buffer.getvalue()


def record(**overrides: object) -> dict[str, object]:
    values: dict[str, object] = {
        "question_id": "ooc-1",
        "image": base64.b64encode(png_bytes()).decode(),
        "question": "Who painted this? (A) Monet (B) Manet (C) Degas (D) Renoir",
        "answer": "i can't answer",
        "reasoning": "No signature or caption is visible.",
        "question_type": "mcq",
        "ooc_type": "missing_knowledge_background",
        "category": "coarse_perception",
    }
    values.update(overrides)
    return values


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_parquet_file_is_read_in_batches(tmp_path: Path) -> None:
    """A Parquet file written with pyarrow yields one sample per row with decoded images."""
    # Base64 text here; raw bytes in the stream test below.
    rows = [record(question_id=f"q{i}") for i in range(600)]
    path = tmp_path / "ooc.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=100)
    samples = list(iter_mmooc(path))
    assert len(samples) == 600
    first = samples[0]
    assert isinstance(first, ParsedSample)
    assert first.row == 1
    assert first.external_id == "q0"
    assert first.category_code == "MKB"
    assert first.answerability_group == "ooc"
    assert first.scenario == "coarse_perception"
    assert first.question_format == "mcq"
    assert [o["label"] for o in first.options] == ["A", "B", "C", "D"]
    assert first.explanation == "No signature or caption is visible."
    assert first.media[0].data == png_bytes()
    assert samples[-1].row == 600


def test_parquet_stream_is_detected_by_magic() -> None:
    """An open binary stream holding Parquet with raw image bytes is recognised by its magic."""
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([record(image=png_bytes())]), buffer)
    buffer.seek(0)
    [sample] = list(iter_mmooc(buffer))
    assert isinstance(sample, ParsedSample)
    assert sample.media[0].data == png_bytes()


def test_not_a_parquet_file_is_a_format_error(tmp_path: Path) -> None:
    """A file forced to Parquet that is not one is refused as a whole."""
    path = tmp_path / "fake.parquet"
    path.write_bytes(b"PAR1 but not really")
    with pytest.raises(FormatError, match="not a readable Parquet file"):
        list(iter_mmooc(path, container="parquet"))


def test_jsonl_with_one_broken_line_keeps_the_others(tmp_path: Path) -> None:
    """A broken JSON line is a RowError; broken base64 is a problem of its image (reported
    with the row's other problems); the other lines still parse."""
    path = write_jsonl(
        tmp_path / "ic.jsonl",
        [
            json.dumps(record(question_id="a")),
            '{"question_id": "b", "question": ',
            json.dumps(record(question_id="c", image="not base64!!")),
            json.dumps(record(question_id="d")),
        ],
    )
    results = list(iter_mmooc(path))
    assert [type(r).__name__ for r in results] == [
        "ParsedSample",
        "RowError",
        "ParsedSample",
        "ParsedSample",
    ]
    assert results[1].row == 2
    assert isinstance(results[2], ParsedSample)
    assert [m.problem for m in results[2].media] == ["the image is not valid base64"]
    assert results[2].external_id == "c"
    assert results[3].external_id == "d"


def test_shifted_ic_options_columns_and_provenance() -> None:
    """IC types map to codes and the shifted_ic group; A-F columns become options."""
    line = record(
        id="ic-7",
        question_id=None,
        ooc_type=None,
        ic_type="partial_answerability",
        question="What is on the table?",
        answer="b",
        A="a cup",
        B="a plate",
        C=None,
        source="human",
        generator="GPT-4o, o1",
        source_dataset="MMStar",
        image="images/ic-7.jpg",
        difficulty="hard",
    )
    [sample] = list(iter_mmooc(io.BytesIO(json.dumps(line).encode())))
    assert isinstance(sample, ParsedSample)
    assert sample.external_id == "ic-7"
    assert sample.category_code == "PA"
    assert sample.answerability_group == "shifted_ic"
    assert sample.options == [{"label": "A", "text": "a cup"}, {"label": "B", "text": "a plate"}]
    assert sample.reference_answer == "B"
    assert sample.pipeline == "human_designed"
    assert sample.generator_models == ["GPT-4o", "o1"]
    assert sample.source_dataset == "MMStar"
    assert sample.media[0].path == "images/ic-7.jpg"
    assert sample.media[0].data is None
    assert sample.extra == {"difficulty": "hard"}


def test_options_list_and_dict_forms() -> None:
    """`options` may be a list of texts or a dict keyed by label."""
    as_list = record(options=["x", "y"], question="Pick")
    as_dict = record(options={"A": "x", "B": "y"}, question="Pick")
    for line in (as_list, as_dict):
        [sample] = list(iter_mmooc(io.BytesIO(json.dumps(line).encode())))
        assert isinstance(sample, ParsedSample)
        assert sample.options == [{"label": "A", "text": "x"}, {"label": "B", "text": "y"}]


def test_missing_id_is_a_row_error() -> None:
    """A record without question_id or id is refused with its line number."""
    [error] = list(iter_mmooc(io.BytesIO(json.dumps(record(question_id=None)).encode())))
    assert isinstance(error, RowError)
    assert error.message == "line 1: the record has no question_id or id"


def test_category_code_accepts_names_and_codes() -> None:
    """Category names and codes both give the code; unknown values keep their spelling."""
    assert category_code("uncertain_spatial_physical_context") == "USPC"
    assert category_code("vfp") == "VFP"
    assert category_code("Image Question Mismatch") == "IQM"
    assert category_code("xyz") == "XYZ"
    assert category_code(None) == ""
    assert category_code("none") == ""


def test_question_type_and_ooc_type_outside_mmooc_are_problems_of_the_row(tmp_path: Path) -> None:
    """MMOOC's own vocabularies are checked by the reader: the row carries the problems and
    leaves the unknown values out of its fields."""
    path = write_jsonl(
        tmp_path / "m.jsonl",
        [json.dumps(record(question_type="essay", ooc_type="spooky_type"))],
    )
    [sample] = list(iter_mmooc(path))
    assert isinstance(sample, ParsedSample)
    assert (sample.question_format, sample.category_code) == ("", "")
    assert sample.problems[0] == "unknown question_type 'essay' (known: mcq, vqa, yesno)"
    assert sample.problems[1].startswith("unknown category code 'spooky_type' in ooc_type")
    [known] = list(iter_mmooc(write_jsonl(tmp_path / "k.jsonl", [json.dumps(record())])))
    assert isinstance(known, ParsedSample) and known.problems == []


def test_records_without_mmooc_fields_are_another_kind_of_file(tmp_path: Path) -> None:
    """A first record with no question is not MMOOC: one NotThisFormat naming the fields."""
    path = write_jsonl(tmp_path / "s.jsonl", [json.dumps({"id": "s1", "S": "hello", "R": "safe"})])
    with pytest.raises(NotThisFormat, match="its first record has no field question"):
        list(iter_mmooc(path))
