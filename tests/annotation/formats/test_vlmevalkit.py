"""Tests for the VLMEvalKit TSV reader."""

import base64
import csv
import io
import json
from pathlib import Path

import pytest
from PIL import Image

from annotation.formats.records import FormatError, ParsedSample, RowError
from annotation.formats.vlmevalkit import iter_vlmevalkit

HEADER = [
    "index",
    "image",
    "question",
    "hint",
    "A",
    "B",
    "C",
    "D",
    "answer",
    "category",
    "l2-category",
    "split",
]


def png_b64(size: int = 300) -> str:
    buffer = io.BytesIO()
    # Noise keeps the PNG big, so the cell exceeds csv's default 128 KiB field limit.
    Image.effect_noise((size, size), 64).convert("RGB").save(buffer, format="PNG")
    return base64.b64encode(buffer.getvalue()).decode()


def write_tsv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t", quotechar='"', lineterminator="\n")
        writer.writerow(header)
        writer.writerows(rows)
    return path


def test_reused_image_multi_image_and_options(tmp_path: Path) -> None:
    """A short image cell reuses an earlier row's image; a list cell gives several images."""
    big = png_b64()
    assert len(big) > 131072
    small = png_b64(8)
    rows = [
        [
            "10",
            big,
            "What is shown?",
            "",
            "a cat",
            "a dog",
            "nan",
            "",
            "A",
            "VR",
            "visual_recog",
            "val",
        ],
        [
            "11",
            "10",
            'Which "animal"?\nThink.',
            "Look left",
            "cat",
            "dog",
            "cow",
            "None",
            "c",
            "VR",
            "visual_recog",
            "val",
        ],
        [
            "12",
            json.dumps([small, small]),
            "Same?",
            "",
            "yes",
            "no",
            "",
            "",
            "A",
            "MI",
            "multi",
            "val",
        ],
        ["13", "12", "Reuse of a multi?", "", "x", "y", "", "", "B", "MI", "multi", "val"],
    ]
    path = write_tsv(tmp_path / "mmt.tsv", HEADER, rows)
    samples = list(iter_vlmevalkit(path))
    assert all(isinstance(s, ParsedSample) for s in samples)
    first, second, third, fourth = samples
    assert isinstance(first, ParsedSample) and isinstance(second, ParsedSample)
    assert first.external_id == "10"
    assert first.options == [{"label": "A", "text": "a cat"}, {"label": "B", "text": "a dog"}]
    assert base64.b64encode(first.media[0].data or b"").decode() == big
    assert first.category_code == "VR"
    assert first.scenario == "visual_recog"
    assert first.split == "val"
    assert first.question_format == "mcq"
    assert second.media[0].same_as == "10"
    assert second.media[0].data is None
    assert second.question == 'Which "animal"?\nThink.'
    assert second.reference_answer == "C"
    assert second.options[3] == {"label": "D", "text": "None"}
    assert second.extra == {"hint": "Look left"}
    assert second.row == 3
    assert isinstance(third, ParsedSample) and isinstance(fourth, ParsedSample)
    assert [m.position for m in third.media] == [0, 1]
    assert third.row == 5  # the quoted question of row 11 spans two lines
    assert fourth.media[0].same_as == "12"


def test_broken_base64_and_unknown_reuse_are_problems_of_their_rows(tmp_path: Path) -> None:
    """Broken base64 and a reference to a row without an image are problems of their own
    row's image (reported with its other problems); the other rows are unaffected."""
    broken = "#" * 100
    rows = [
        ["1", broken, "Q1", "", "a", "b", "", "", "A", "c", "l2", "test"],
        ["2", "1", "Q2", "", "a", "b", "", "", "A", "c", "l2", "test"],
        ["3", png_b64(8), "Q3", "", "a", "b", "", "", "B", "c", "l2", "test"],
    ]
    results = list(iter_vlmevalkit(write_tsv(tmp_path / "bad.tsv", HEADER, rows)))
    assert isinstance(results[0], ParsedSample) and isinstance(results[1], ParsedSample)
    assert [m.problem for m in results[0].media] == ["the image is not valid base64"]
    assert "no image earlier in the file" in str(results[1].media[0].problem)
    assert isinstance(results[2], ParsedSample) and results[2].media[0].problem is None


def test_image_path_column_without_image(tmp_path: Path) -> None:
    """Rows may point at image files instead of embedding them."""
    path = write_tsv(
        tmp_path / "paths.tsv",
        ["index", "image_path", "question", "A", "B", "answer"],
        [["1", "imgs/1.jpg", "Q", "x", "y", "A"]],
    )
    [sample] = list(iter_vlmevalkit(path))
    assert isinstance(sample, ParsedSample)
    assert sample.media[0].path == "imgs/1.jpg"


def test_missing_required_column_is_a_format_error(tmp_path: Path) -> None:
    """A TSV without a question column is refused as a whole."""
    path = write_tsv(tmp_path / "noq.tsv", ["index", "image", "A"], [["1", "x", "y"]])
    with pytest.raises(FormatError, match="no 'question' column"):
        list(iter_vlmevalkit(path))


def test_empty_and_non_utf8_files_are_format_errors(tmp_path: Path) -> None:
    """An empty TSV and a Latin-1 TSV are refused."""
    empty = tmp_path / "empty.tsv"
    empty.write_bytes(b"")
    with pytest.raises(FormatError, match="empty"):
        list(iter_vlmevalkit(empty))
    latin = tmp_path / "latin.tsv"
    latin.write_bytes("index\timage_path\tquestion\n1\ta.png\tcafé\n".encode("latin-1"))
    with pytest.raises(FormatError, match="not UTF-8"):
        list(iter_vlmevalkit(latin))


def test_bom_header_is_understood(tmp_path: Path) -> None:
    """A TSV saved with a BOM still finds its `index` column."""
    path = tmp_path / "bom.tsv"
    path.write_bytes(b"\xef\xbb\xbfindex\timage_path\tquestion\n1\ta.png\tQ\n")
    [sample] = list(iter_vlmevalkit(path))
    assert isinstance(sample, ParsedSample)
    assert sample.external_id == "1"


def test_row_with_wrong_cell_count_is_a_row_error(tmp_path: Path) -> None:
    """A row with missing cells is reported and the next row is still read."""
    path = tmp_path / "short.tsv"
    path.write_text("index\timage_path\tquestion\n1\ta.png\n2\tb.png\tQ\n", encoding="utf-8")
    first, second = list(iter_vlmevalkit(path))
    assert isinstance(first, RowError)
    assert first.message == "line 2: the row has 2 cells but the header has 3"
    assert isinstance(second, ParsedSample)
