"""The pure release writers: each format reads back with the project's readers, row groups
stay bounded, media are read lazily, and the manifest helpers count and hash what was written.
"""

from __future__ import annotations

import base64
import hashlib
import json
import zipfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import yaml

from annotation.formats.jsonl import iter_jsonl
from annotation.formats.mmooc import iter_mmooc
from annotation.formats.records import LABEL_FIELDS, ParsedSample
from annotation.formats.vlmevalkit import iter_vlmevalkit
from annotation.snapshots.exports.files import file_sha256, store_media, tree_files, zip_folder
from annotation.snapshots.exports.hf import HfCard, split_name, write_hf_folder
from annotation.snapshots.exports.jsonl import record_to_dict, write_jsonl
from annotation.snapshots.exports.manifest import Tally, file_hashes
from annotation.snapshots.exports.mmooc_layout import IC_FILE, OOC_FILE, write_mmooc_layout
from annotation.snapshots.exports.parquet import RowGroupWriter, iter_release_parquet, write_parquet
from annotation.snapshots.exports.records import ExportMedia, ExportRecord
from annotation.snapshots.exports.review import RevisionInfo, review_trail
from annotation.snapshots.exports.tsv import option_columns, write_tsv


class Reads:
    """Counts how often each media file's bytes were read."""

    def __init__(self) -> None:
        self.count: dict[str, int] = {}

    def media(self, role: str, data: bytes, position: int = 0, ext: str = ".png") -> ExportMedia:
        sha = hashlib.sha256(data).hexdigest()

        def read() -> bytes:
            self.count[sha] = self.count.get(sha, 0) + 1
            return data

        return ExportMedia(
            role=role,
            position=position,
            sha256=sha,
            mime_type="image/png" if role == "image" else "audio/wav",
            extension=ext,
            read=read,
            licence="CC-BY-4.0",
            source_url="https://example.org/x",
        )


def image_bytes(n: int) -> bytes:
    """Stand-in image bytes, long enough that a TSV reader never takes them for a row index."""
    return f"image-{n}-".encode() * 20


def record(reads: Reads, n: int, **labels: Any) -> ExportRecord:
    values: dict[str, Any] = {
        "question": f"Question {n}?\tWith a tab\nand a line break",
        "question_format": "mcq",
        "options": [{"label": "A", "text": "yes"}, {"label": "B", "text": "no"}],
        "reference_answer": "A",
        "explanation": "Because.",
        "answerability_group": "ooc",
        "category_code": "VFP",
        "scenario": "math",
        "split": "test",
        "pipeline": "human_designed",
        "source_dataset": "MMOOC",
        "generator_models": ["gpt-4o"],
        "predicate": [],
    }
    values.update(labels)
    return ExportRecord(
        external_id=f"q{n}",
        labels=values,
        content_hash=f"hash{n}",
        status="verified",
        media=[reads.media("image", image_bytes(n))],
        review={"reviewers": ["ann"]},
        extra={"note": n},
    )


def _same_labels(parsed: ParsedSample, original: ExportRecord, names: list[str]) -> None:
    for name in names:
        assert getattr(parsed, name) == original.labels[name], name


# The label fields up to ``generator_models``: the ones ``record`` fills and every writer keeps.
ALL_LABELS = list(LABEL_FIELDS[: LABEL_FIELDS.index("generator_models") + 1])


def test_jsonl_reads_back_with_the_projects_own_reader(tmp_path: Path) -> None:
    """Every label, the media bytes, provenance and custom fields come back; the review trail,
    status and content hash are the release's state, not custom fields of the sample."""
    reads = Reads()
    records = [record(reads, n) for n in range(3)]
    path = tmp_path / "out.jsonl"
    assert write_jsonl(iter(records), path) == 3
    parsed = list(iter_jsonl(str(path)))
    assert [p.external_id for p in parsed] == ["q0", "q1", "q2"]
    for sample, original in zip(parsed, records, strict=True):
        assert isinstance(sample, ParsedSample)
        _same_labels(sample, original, ALL_LABELS)
        assert sample.media[0].data == original.media[0].read()
        assert sample.licence == "CC-BY-4.0"
        assert sample.extra == original.extra
        assert not {"review", "status", "revision", "content_hash"} & set(sample.extra)


def test_jsonl_with_a_media_folder_stores_each_file_once(tmp_path: Path) -> None:
    """Tri-modal releases point at media/ files; the same content is written only once."""
    reads = Reads()
    shared = reads.media("audio", b"RIFF-same-audio", ext=".wav")
    records = [record(reads, n) for n in range(2)]
    for item in records:
        item.media.append(shared)
    write_jsonl(records, tmp_path / "data.jsonl", media_dir=tmp_path)
    lines = [json.loads(line) for line in (tmp_path / "data.jsonl").read_text().splitlines()]
    paths = [m["path"] for m in lines[0]["media"]]
    assert f"media/audio/{shared.sha256}.wav" in paths
    assert all(m["data_base64"] is None for m in lines[0]["media"])
    assert reads.count[shared.sha256] == 1
    assert (tmp_path / f"media/audio/{shared.sha256}.wav").read_bytes() == b"RIFF-same-audio"


def test_parquet_writes_bounded_row_groups_and_reads_back(tmp_path: Path) -> None:
    """Row groups hold at most the configured rows; the reader returns labels and bytes."""
    reads = Reads()
    path = tmp_path / "out.parquet"
    records = [record(reads, n) for n in range(5)]
    assert write_parquet(records, path, max_rows=2) == 5
    meta = pq.ParquetFile(path).metadata
    assert (meta.num_rows, meta.num_row_groups) == (5, 3)
    parsed = list(iter_release_parquet(path))
    for sample, original in zip(parsed, records, strict=True):
        assert isinstance(sample, ParsedSample)
        _same_labels(sample, original, ALL_LABELS)
        assert sample.media[0].data == original.media[0].read()
        assert sample.media[0].role == "image"


def test_row_group_writer_flushes_by_rows_and_by_bytes(tmp_path: Path) -> None:
    """A row group is written as soon as it holds max_rows rows or max_bytes of media."""
    import pyarrow as pa

    schema = pa.schema([pa.field("x", pa.int64())])
    by_rows = RowGroupWriter(tmp_path / "rows.parquet", schema, max_rows=3, max_bytes=10**9)
    for n in range(7):
        by_rows.add({"x": n})
    by_rows.close()
    assert pq.ParquetFile(tmp_path / "rows.parquet").metadata.num_row_groups == 3
    by_bytes = RowGroupWriter(tmp_path / "bytes.parquet", schema, max_rows=1000, max_bytes=100)
    for n in range(4):
        by_bytes.add({"x": n}, size=60)
    by_bytes.close()
    assert pq.ParquetFile(tmp_path / "bytes.parquet").metadata.num_row_groups == 2


def test_tsv_reads_back_with_the_vlmevalkit_reader(tmp_path: Path) -> None:
    """Options become columns, images base64 (a JSON list for several), ids and answers kept."""
    reads = Reads()
    one = record(reads, 1, options=[{"label": "A", "text": "x"}, {"label": "C", "text": "z"}])
    two = record(reads, 2)
    two.media.append(reads.media("image", b"second image" * 10, position=1))
    path = tmp_path / "out.tsv"
    assert write_tsv([one, two], path, option_labels=["C", "A", "B", "a"]) == 2
    header = path.read_text().splitlines()[0].split("\t")
    assert header[:6] == ["index", "image", "question", "A", "B", "C"]
    parsed = list(iter_vlmevalkit(str(path), source_dataset="MMOOC"))
    assert isinstance(parsed[0], ParsedSample) and isinstance(parsed[1], ParsedSample)
    assert parsed[0].options == one.labels["options"]
    assert parsed[0].question == one.labels["question"].strip()
    assert parsed[0].category_code == "VFP" and parsed[0].scenario == "math"
    assert [m.data for m in parsed[1].media] == [image_bytes(2), b"second image" * 10]
    assert option_columns(["b", "A"]) == ["A", "B"]


def test_hf_folder_has_a_card_that_declares_configs_splits_and_features(tmp_path: Path) -> None:
    """README front matter is valid YAML naming the split files and the image feature."""
    reads = Reads()
    records = [record(reads, 1, split="test"), record(reads, 2, split="dev set"), record(reads, 3)]
    counts = write_hf_folder(records, tmp_path, card=HfCard(title="Demo"), with_audio=False)
    assert counts == {"dev_set": 1, "test": 2}
    text = (tmp_path / "README.md").read_text()
    front = yaml.safe_load(text.split("---")[1])
    data_files = front["configs"][0]["data_files"]
    assert {"split": "test", "path": "data/test-*.parquet"} in data_files
    features = {f["name"]: f for f in front["dataset_info"]["features"]}
    assert features["image"]["dtype"] == "image"
    assert features["generator_models"]["sequence"] == "string"
    assert [f["name"] for f in features["options"]["list"]] == ["label", "text"]
    assert {s["name"]: s["num_examples"] for s in front["dataset_info"]["splits"]} == counts
    table = pq.read_table(tmp_path / "data" / "test-00000-of-00001.parquet")
    image = table.column("image")[0].as_py()
    assert image["bytes"] == image_bytes(1) and image["path"].endswith(".png")
    assert str(table.schema.field("image").type) == "struct<bytes: binary, path: string>"
    assert split_name("") == "train" and split_name("a/b c") == "a_b_c"


def test_mmooc_layout_splits_ooc_and_ic_with_the_released_field_names(tmp_path: Path) -> None:
    """OOC rows go to data/ooc.parquet, shifted IC to data/ic.parquet; others are counted."""
    reads = Reads()
    ooc = record(reads, 1)
    ic = record(reads, 2, answerability_group="shifted_ic", category_code="PA")
    other = record(reads, 3, answerability_group="", category_code="")
    counts = write_mmooc_layout([ooc, ic, other], tmp_path)
    assert (counts.ooc, counts.ic, counts.skipped) == (1, 1, 1)
    names = pq.read_schema(tmp_path / OOC_FILE).names
    for column in ("question_id", "image", "question", "answer", "reasoning"):
        assert column in names
    for column in ("question_type", "ooc_type", "category"):
        assert column in names
    row = pq.read_table(tmp_path / OOC_FILE).to_pylist()[0]
    assert row["ooc_type"] == "visual_false_premises" and row["reasoning"] == "Because."
    assert pq.read_table(tmp_path / IC_FILE).to_pylist()[0]["ic_type"] == "partial_answerability"
    back = [s for f in (OOC_FILE, IC_FILE) for s in iter_mmooc(str(tmp_path / f))]
    assert all(isinstance(s, ParsedSample) for s in back)
    for sample, original in zip(back, [ooc, ic], strict=True):
        _same_labels(sample, original, ALL_LABELS)  # type: ignore[arg-type]


def test_review_trail_merges_history_with_other_apps_notes() -> None:
    """Reviewers come from the review summary, else the history; adjudication from either."""
    history = [
        RevisionInfo(1, "import", "lead", "2025-01-01T00:00:00"),
        RevisionInfo(2, "review", "ann", "2025-01-02T00:00:00"),
        RevisionInfo(3, "adjudication", "lead", "2025-01-03T00:00:00"),
    ]
    trail = review_trail(history, None, {"gpt-4o": "refuse"})
    assert trail["reviewers"] == ["ann", "lead"] and trail["adjudicated"] is True
    assert trail["changes"] == {"adjudication": 1, "import": 1, "review": 1}
    assert trail["judge_votes"] == {"gpt-4o": "refuse"}
    assert trail["last_changed_at"] == "2025-01-03T00:00:00"
    noted = review_trail(history[:2], {"reviewers": ["x", "y"], "agreement": 0.5}, None)
    assert noted["reviewers"] == ["x", "y"] and noted["agreement"] == 0.5
    assert noted["adjudicated"] is False


def test_tally_counts_and_file_hashes_match_the_bytes(tmp_path: Path) -> None:
    """Counts per category, format and scenario; sha256 of every file; zips hold them all."""
    reads = Reads()
    tally = Tally()
    list(tally.counted([record(reads, 1), record(reads, 2, category_code="MA", scenario="")]))
    counts = tally.as_dict()
    assert counts["samples"] == 2 and counts["category"] == {"MA": 1, "VFP": 1}
    assert counts["scenario"] == {"": 1, "math": 1} and "safety_label" not in counts
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x.txt").write_bytes(b"hello")
    store_media(tmp_path, reads.media("image", b"img"))
    names = tree_files(tmp_path)
    hashes = file_hashes(tmp_path, names)
    assert hashes["a/x.txt"] == {"sha256": hashlib.sha256(b"hello").hexdigest(), "bytes": 5}
    zip_folder(tmp_path, names, tmp_path.parent / "out.zip")
    with zipfile.ZipFile(tmp_path.parent / "out.zip") as archive:
        assert sorted(archive.namelist()) == names
        assert archive.read("a/x.txt") == b"hello"
    assert file_sha256(tmp_path / "a" / "x.txt") == hashlib.sha256(b"hello").hexdigest()


def test_record_to_dict_reads_media_only_when_writing() -> None:
    """Building a record never touches storage; writing reads each media file once."""
    reads = Reads()
    item = record(reads, 9)
    assert reads.count == {}
    data = record_to_dict(item)
    assert base64.b64decode(data["media"][0]["data_base64"]) == image_bytes(9)
    assert list(reads.count.values()) == [1]


@pytest.mark.parametrize("value", ["train", "validation"])
def test_split_names_that_are_already_valid_are_kept(value: str) -> None:
    """Split names that datasets accepts pass through unchanged."""
    assert split_name(value) == value


def _with_extra(reads: Reads, n: int, extra: dict[str, Any], **labels: Any) -> ExportRecord:
    rec = record(reads, n, **labels)
    rec.extra = extra
    return rec


def test_tsv_carries_custom_fields_as_extra_columns_that_read_back(tmp_path: Path) -> None:
    """Each `extra` key is a column (JSON for non-text); the reader puts them back in extra;
    a key that would shadow one of the format's columns is left out."""
    reads = Reads()
    one = _with_extra(reads, 1, {"hint": "Look left.", "difficulty": 3, "category": "shadow"})
    two = _with_extra(reads, 2, {"tags": ["a", "b"]})
    path = tmp_path / "out.tsv"
    write_tsv(
        [one, two],
        path,
        option_labels=["A", "B"],
        extra_keys=["hint", "difficulty", "category", "tags"],
    )
    header = path.read_text().splitlines()[0].split("\t")
    assert header[-3:] == ["hint", "difficulty", "tags"] and header.count("category") == 1
    first, second = list(iter_vlmevalkit(str(path)))
    assert isinstance(first, ParsedSample) and isinstance(second, ParsedSample)
    assert first.extra == {"hint": "Look left.", "difficulty": 3}
    assert first.category_code == "VFP"
    assert second.extra == {"tags": ["a", "b"]}


def test_mmooc_layout_carries_custom_fields_as_extra_columns(tmp_path: Path) -> None:
    """Both split files get the custom fields as string columns; the reader keeps them."""
    reads = Reads()
    ooc = _with_extra(reads, 1, {"source_file": "batch-7.json"})
    ic = _with_extra(
        reads, 2, {"votes": {"a": 1}}, answerability_group="shifted_ic", category_code="PA"
    )
    write_mmooc_layout([ooc, ic], tmp_path, extra_keys=["source_file", "votes", "question"])
    assert pq.read_schema(tmp_path / IC_FILE).names[-2:] == ["source_file", "votes"]
    rows = [pq.read_table(tmp_path / f).to_pylist()[0] for f in (OOC_FILE, IC_FILE)]
    assert (rows[0]["source_file"], rows[0]["votes"]) == ("batch-7.json", "")
    assert rows[1]["votes"] == '{"a": 1}'
    [back] = list(iter_mmooc(str(tmp_path / OOC_FILE)))
    assert isinstance(back, ParsedSample) and back.extra == {"source_file": "batch-7.json"}
    [nested] = list(iter_mmooc(str(tmp_path / IC_FILE)))
    assert isinstance(nested, ParsedSample) and nested.extra == {"votes": {"a": 1}}


def test_hf_folder_carries_custom_fields_as_a_json_column(tmp_path: Path) -> None:
    """The Hugging Face files hold `extra` as one JSON string, declared in the card."""
    reads = Reads()
    write_hf_folder(
        [_with_extra(reads, 1, {"hint": "Look left.", "difficulty": 3})],
        tmp_path,
        card=HfCard(title="Demo"),
        with_audio=False,
    )
    table = pq.read_table(tmp_path / "data" / "test-00000-of-00001.parquet")
    assert json.loads(table.column("extra")[0].as_py()) == {"difficulty": 3, "hint": "Look left."}
    front = yaml.safe_load((tmp_path / "README.md").read_text().split("---")[1])
    features = {f["name"]: f for f in front["dataset_info"]["features"]}
    assert features["extra"] == {"name": "extra", "dtype": "string"}
    [back] = list(iter_release_parquet(tmp_path / "data" / "test-00000-of-00001.parquet"))
    assert isinstance(back, ParsedSample)
    assert back.extra == {"difficulty": 3, "hint": "Look left."}
