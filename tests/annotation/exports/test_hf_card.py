"""The Hugging Face folder's dataset card (annotation/snapshots/exports/hf_card.py): its YAML
is what ``datasets`` and huggingface_hub expect, so loading the folder prints no warning.
"""

from __future__ import annotations

import io
import logging
import warnings
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from annotation.snapshots.exports.hf import HfCard, write_hf_folder
from annotation.snapshots.exports.hf_card import (
    HUB_LICENCES,
    hub_licence,
    size_category,
)
from tests.annotation.exports.test_writers import Reads, record


@pytest.fixture
def offline_hf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))


@pytest.fixture
def hf_log() -> Iterator[io.StringIO]:
    """Everything ``datasets`` and huggingface_hub log at WARNING or above (their loggers do
    not propagate to the root logger, so pytest's caplog would not see them)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setLevel(logging.WARNING)
    loggers = [logging.getLogger(name) for name in ("datasets", "huggingface_hub")]
    for logger in loggers:
        logger.addHandler(handler)
    yield stream
    for logger in loggers:
        logger.removeHandler(handler)


def write_folder(tmp_path: Path, *, with_audio: bool = False) -> Path:
    reads = Reads()
    records = [record(reads, 1, split="test"), record(reads, 2, split="dev set"), record(reads, 3)]
    if with_audio:
        for item in records:
            item.media.append(reads.media("audio", b"RIFF" * 50, ext=".wav"))
    out = tmp_path / "hf"
    write_hf_folder(records, out, card=HfCard(title='Demo: "v1"'), with_audio=with_audio)
    return out


@pytest.mark.parametrize("with_audio", [False, True])
@pytest.mark.usefixtures("offline_hf")
def test_loading_the_folder_prints_no_warning_and_checks_the_declared_splits(
    tmp_path: Path, hf_log: io.StringIO, with_audio: bool
) -> None:
    """`datasets.load_dataset(folder)` reads the card whole (its splits with their sizes, so
    it verifies the row counts) without a logged or raised warning."""
    import datasets

    out = write_folder(tmp_path, with_audio=with_audio)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = datasets.load_dataset(str(out), cache_dir=str(tmp_path / "cache"))
    assert hf_log.getvalue() == ""
    assert {name: len(split) for name, split in loaded.items()} == {"dev_set": 1, "test": 2}
    declared = loaded["test"].info.splits
    assert declared is not None and declared["test"].num_examples == 2
    assert declared["test"].num_bytes > 0
    assert loaded["test"].features["image"] == datasets.Image()


def test_the_card_parses_as_huggingface_hub_dataset_card_data(tmp_path: Path) -> None:
    """huggingface_hub reads the front matter into DatasetCardData with the Hub's own names:
    a licence id, a task category, a size category, the title; `datasets` reads the configs
    and features, and the features' Arrow types are the Parquet files' own."""
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs
    from huggingface_hub import DatasetCard

    out = write_folder(tmp_path)
    card = DatasetCard.load(out / "README.md")
    data = card.data
    assert data.license == "cc-by-4.0"
    assert data.task_categories == ["visual-question-answering"]
    assert data.size_categories == ["n<1K"]
    assert data.pretty_name == 'Demo: "v1"'
    configs = MetadataConfigs.from_dataset_card_data(data)
    assert configs["default"]["data_files"] == [
        {"split": "dev_set", "path": "data/dev_set-*.parquet"},
        {"split": "test", "path": "data/test-*.parquet"},
    ]
    info = DatasetInfosDict.from_dataset_card_data(data)["default"]
    assert info.features is not None and info.splits is not None
    schema = pq.read_schema(out / "data" / "test-00000-of-00001.parquet")
    assert info.features.arrow_schema.remove_metadata().equals(schema.remove_metadata())
    file_bytes = sum(path.stat().st_size for path in (out / "data").iterdir())
    assert info.download_size == file_bytes
    assert info.dataset_size == sum(split.num_bytes for split in info.splits.values())
    assert "# Demo" in card.text


@pytest.mark.parametrize(
    ("licences", "expected"),
    [
        (["CC-BY-4.0", "cc by 4.0", ""], "cc-by-4.0"),
        (["MIT"], "mit"),
        (["CC-BY-4.0", "MIT"], "other"),
        (["All rights reserved"], "other"),
        (["", " "], "unknown"),
        ([], "unknown"),
    ],
)
def test_the_licence_is_an_id_the_hub_knows(licences: list[str], expected: str) -> None:
    """One known licence is named by its Hub id; several or unknown ones are `other`."""
    assert hub_licence(licences) == expected
    assert expected in HUB_LICENCES | {"other", "unknown"}


def test_size_categories_follow_the_hubs_bounds() -> None:
    assert [size_category(n) for n in (0, 999, 1000, 42_000, 2_000_000)] == [
        "n<1K",
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "1M<n<10M",
    ]
