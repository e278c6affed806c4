"""The ``gold`` key and column of this site's own formats (JSON lines and Parquet)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from annotation.formats.jsonl import iter_jsonl
from annotation.formats.records import ParsedSample, RowError
from annotation.snapshots.exports.parquet import iter_release_parquet


def test_the_jsonl_gold_key_is_kept_in_extra_and_checked() -> None:
    stream = io.StringIO(
        '{"external_id": "a", "gold": true}\n'
        '{"external_id": "b", "gold": "false"}\n'
        '{"external_id": "c", "gold": "maybe"}\n'
    )
    first, second, bad = list(iter_jsonl(stream))
    assert isinstance(first, ParsedSample) and first.extra == {"gold": True}
    assert isinstance(second, ParsedSample) and second.extra == {"gold": False}
    assert isinstance(bad, RowError)
    assert bad.message == "line 3: the record is malformed ('gold' is neither true nor false)"


def test_the_parquet_gold_column_is_kept_in_extra_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "release.parquet"
    table = pa.table(
        {
            "external_id": ["a", "b", "c"],
            "gold": ["true", None, "maybe"],
            "extra": [json.dumps({"k": 1}), "{}", "{}"],
        }
    )
    pq.write_table(table, path)
    first, second, bad = list(iter_release_parquet(path))
    assert isinstance(first, ParsedSample) and isinstance(second, ParsedSample)
    assert isinstance(bad, ParsedSample)
    assert first.extra == {"k": 1, "gold": True} and not first.problems
    assert second.extra == {} and not second.problems
    assert bad.problems == ["'gold' is neither true nor false"]
