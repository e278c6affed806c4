"""The reader of an import (annotation.imports.reader): the same outcome whether the rows are
parsed, checked and decoded in the importing process or in a forked reader process."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from annotation.formats.records import FormatError, MediaRef, ParsedSample, RowError
from annotation.formats.validate import TaxonomyView
from annotation.imports import reader
from annotation.imports.pipeline import CHUNK_ROWS
from annotation.media_checks import sha256_hex
from annotation.models import ImportRowError, Sample
from tests.annotation.imports_support import (
    b64,
    dataset_for,
    huge_header_png,
    image,
    mmooc_record,
    run_import,
    truncated_png,
    write_lines,
)

pytestmark = pytest.mark.django_db


def children() -> set[int]:
    """The process ids of this process's children."""
    pid = os.getpid()
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as handle:
            found.update(int(p) for p in handle.read().split())
    return found


def mixed_file(tmp_path: Path) -> Path:
    """A chunk and a half with every kind of bad row: a damaged image, a decompression bomb,
    a bad question type, an unknown category, a repeated id, broken JSON, and one image
    shared by two rows."""
    records: list[Any] = [mmooc_record(n) for n in range(CHUNK_ROWS + CHUNK_ROWS // 2)]
    records[2] = mmooc_record(2, image=b64(truncated_png()))
    records[5] = mmooc_record(5, image=b64(huge_header_png()))
    records[9] = mmooc_record(9, question_type="bogus")
    records[11] = mmooc_record(11, ooc_type="no_such_category")
    records[13] = mmooc_record(12)
    records[17] = "{not json"
    records[CHUNK_ROWS + 3] = mmooc_record(CHUNK_ROWS + 3, image=b64(image(4)))
    return write_lines(tmp_path / "mixed.jsonl", records)


def outcome(job: Any) -> tuple[Any, ...]:
    return (
        job.status,
        job.imported,
        job.rejected,
        sorted(ImportRowError.objects.filter(job=job).values_list("row", "message")),
        sorted(
            Sample.objects.filter(dataset=job.dataset).values_list(
                "external_id", "content_hash", "media__sha256"
            )
        ),
    )


def test_a_forked_reader_imports_exactly_what_the_importing_process_would(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Same counts, same row errors (in the same words), same samples and media."""
    path = mixed_file(tmp_path)
    before = children()  # (a fixture may run a server as a child of the test process)
    in_process = run_import(dataset_for("mmooc", "mmooc", name="in-process"), "mmooc", path)
    monkeypatch.setattr(reader, "PARALLEL_MIN_ROWS", 0)
    forked = run_import(dataset_for("mmooc", "mmooc", name="forked"), "mmooc", path)
    assert forked.rejected == 6 and forked.imported == CHUNK_ROWS + CHUNK_ROWS // 2 - 6
    assert outcome(forked) == outcome(in_process)
    assert children() == before


EMPTY_TAXONOMY = TaxonomyView(
    groups=set(), categories={}, formats=set(), scenarios=set(), safety_categories={}
)


def rows(count: int) -> Any:
    for n in range(count):
        yield RowError(n + 1, "", "bad") if n % 2 else ParsedSample(row=n + 1, external_id=str(n))


def test_closing_the_chunks_early_ends_the_reader_process() -> None:
    """An import that stops (a cancel, a crash) leaves no reader process behind."""
    before = children()
    checker = reader.RowChecker(False, EMPTY_TAXONOMY)
    chunks = reader.read_checked(lambda: rows(10_000), checker, 10, parallel=True)
    first = next(chunks)
    assert [type(item) for item in first.items[:2]] == [ParsedSample, RowError]
    assert len(first.items) == 10 and len(children() - before) == 1
    chunks.close()
    assert children() == before


def test_receiving_chunks_leaves_the_garbage_collector_as_it_was() -> None:
    """Chunks are unpickled with the collector paused; it is running again after each one,
    and stays off for a caller that had turned it off."""
    import gc

    checker = reader.RowChecker(False, EMPTY_TAXONOMY)
    assert gc.isenabled()
    for chunk in reader.read_checked(lambda: rows(30), checker, 10, parallel=True):
        assert len(chunk.items) == 10 and gc.isenabled()
    gc.disable()
    try:
        for _chunk in reader.read_checked(lambda: rows(30), checker, 10, parallel=True):
            assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_error_inside_the_reader_reaches_the_importing_process() -> None:
    def broken() -> Any:
        yield from rows(25)
        raise FormatError("the file ends in the middle of a record")

    before = children()
    checker = reader.RowChecker(False, EMPTY_TAXONOMY)
    chunks = reader.read_checked(broken, checker, 10, parallel=True)
    assert len(next(chunks).items) == 10 and len(next(chunks).items) == 10
    with pytest.raises(FormatError, match="middle of a record"):
        next(chunks)
    assert children() == before


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"generator_models": ["m1"], "predicate": ["IF a THEN b"], "extra": {"k": "é"}},
        {"options": [], "extra": {"": []}},
    ],
)
def test_the_json_texts_the_reader_encodes_are_the_values_json_encodes(
    fields: dict[str, Any],
) -> None:
    """Each JSON field's text (empty ones taken as known, without encoding) is the JSON of
    its value."""
    import json

    parsed = ParsedSample(row=1, external_id="e", **fields)
    encoded = reader.Encoded.of(parsed)
    assert set(encoded.fields) == {"options", "generator_models", "predicate", "extra"}
    for name, text in encoded.fields.items():
        assert json.loads(text) == getattr(parsed, name)
        assert text == json.dumps(getattr(parsed, name))


def image_rows(count: int) -> Any:
    for n in range(count):
        media = [MediaRef("image", 0, data=image(n))]
        yield ParsedSample(row=n + 1, external_id=str(n), media=media)


@pytest.mark.parametrize("parallel", [False, True])
def test_the_reader_decodes_only_the_files_not_stored_yet(parallel: bool) -> None:
    """Once a chunk is read, the reader asks which of its files are stored (once per chunk)
    and decodes the others; in a forked reader the question is answered by the importing
    process."""
    held = {sha256_hex(image(n)) for n in range(0, 30, 2)}
    asked: list[list[str]] = []

    def stored(hashes: list[str]) -> set[str]:
        asked.append(hashes)
        return held & set(hashes)

    checker = reader.RowChecker(False, EMPTY_TAXONOMY)
    before = children()
    chunks = list(
        reader.read_checked(lambda: image_rows(30), checker, 10, parallel=parallel, stored=stored)
    )
    assert [len(chunk.items) for chunk in chunks] == [10, 10, 10]
    decoded = {sha: found for chunk in chunks for sha, found in chunk.media.items()}
    assert set(decoded) == {sha256_hex(image(n)) for n in range(1, 30, 2)}
    assert all(found.fields is not None for found in decoded.values())
    assert [len(hashes) for hashes in asked] == [10, 10, 10]
    assert children() == before


@pytest.mark.parametrize("parallel", [False, True])
def test_a_failed_lookup_of_stored_files_decodes_every_file(parallel: bool) -> None:
    """The lookup is advice: when it fails, every file is decoded, as without it."""

    def stored(hashes: list[str]) -> set[str]:
        raise RuntimeError("the database is away")

    checker = reader.RowChecker(False, EMPTY_TAXONOMY)
    chunks = reader.read_checked(
        lambda: image_rows(20), checker, 10, parallel=parallel, stored=stored
    )
    assert sum(len(chunk.media) for chunk in chunks) == 20


def test_closing_the_chunks_early_ends_the_reader_and_its_relay() -> None:
    """A stopped import leaves neither the reader process nor the thread answering it."""
    import threading

    before = children()
    checker = reader.RowChecker(False, EMPTY_TAXONOMY)
    chunks = reader.read_checked(
        lambda: image_rows(10_000), checker, 10, parallel=True, stored=lambda hashes: set()
    )
    assert len(next(chunks).media) == 10
    chunks.close()
    assert children() == before
    assert not [t for t in threading.enumerate() if t.name == "import-reader-relay"]
