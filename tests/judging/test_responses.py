"""Tests for judging.services.responses: model responses from JSONL and LogicVista files."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.exceptions import ValidationError

from judging import services
from judging.models import ModelResponse
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import LOGICVISTA, bulk_samples, jsonl, logicvista_dataset

pytestmark = pytest.mark.django_db


def test_all_21_real_logicvista_answer_files_import_and_reimport_unchanged() -> None:
    """160 valid items x 21 models = 3,360 responses; the answer to the one invalid item
    (v1_382, refused as a sample) is rejected with its line; a second run changes nothing."""
    dataset = logicvista_dataset()
    files = sorted((LOGICVISTA / "answers").glob("*-answers.json"))
    assert len(files) == 21
    for path in files:
        summary = services.response_import(dataset=dataset, source=path, format="logicvista")
        assert (summary.imported, len(summary.rejected)) == (160, 1), path.name
        (rejected,) = summary.rejected
        assert rejected.external_id == "v1_382" and "v1_382" in rejected.message
        assert f"line {rejected.row}:" in rejected.message
    assert ModelResponse.objects.filter(dataset=dataset).count() == 160 * 21
    again = services.response_import(
        dataset=dataset, source=files[0], format="logicvista", model=""
    )
    assert (again.imported, again.unchanged, again.updated) == (0, 160, 0)
    gpt4 = ModelResponse.objects.get(model_name="GPT4", sample__external_id="v1_287")
    assert gpt4.response == "C" and gpt4.extra == {"reasoning": "none"}


def test_unknown_samples_and_repeated_rows_are_rejected_with_their_line(tmp_path: Path) -> None:
    """Each bad row names its line and why; good rows still go in; a change is an update."""
    dataset = mmooc_dataset()
    bulk_samples(dataset, 2)
    path = jsonl(
        tmp_path / "r.jsonl",
        [
            {"id": "bulk-0", "response": "A"},
            {"id": "ghost", "response": "B"},
            {"id": "bulk-0", "response": "again"},
            {"id": "bulk-1"},
        ],
    )
    summary = services.response_import(dataset=dataset, source=path, format="jsonl", model="m")
    assert summary.imported == 1
    messages = [r.message for r in summary.rejected]
    assert len(messages) == 3
    assert any("line 2" in m and "ghost" in m for m in messages)
    assert any("line 3" in m and "second response" in m for m in messages)
    assert any("line 4" in m for m in messages)
    changed = jsonl(tmp_path / "c.jsonl", [{"id": "bulk-0", "response": "B"}])
    update = services.response_import(dataset=dataset, source=changed, format="jsonl", model="m")
    assert update.updated == 1 and ModelResponse.objects.get().response == "B"


def test_a_file_that_is_not_the_format_is_refused_as_a_whole(tmp_path: Path) -> None:
    """A LogicVista file with no model in its name and none given is a readable error."""
    dataset = mmooc_dataset()
    path = tmp_path / "answers.json"
    path.write_text("{}", encoding="utf-8")
    with pytest.raises(ValidationError, match="model"):
        services.response_import(dataset=dataset, source=path, format="logicvista")
    with pytest.raises(ValidationError, match="format"):
        services.response_import(dataset=dataset, source=path, format="csv")
