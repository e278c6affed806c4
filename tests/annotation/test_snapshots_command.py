"""The export_snapshot command: the same snapshot as the site, built inline, copied to --out."""

from __future__ import annotations

import hashlib
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import SampleStatus, Snapshot
from tests.annotation.factories import mmooc_dataset, mmooc_sample

pytestmark = pytest.mark.django_db


def test_command_exports_and_copies_the_release(tmp_path: Path) -> None:
    """The command builds the snapshot, writes it to --out and prints its hash and counts."""
    dataset = mmooc_dataset(name="mmooc-cli")
    for _ in range(2):
        mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    mmooc_sample(dataset, status=SampleStatus.REJECTED)
    out = tmp_path / "release.parquet"
    stdout = StringIO()
    call_command(
        "export_snapshot",
        "--dataset=mmooc-cli",
        "--name=v1",
        "--format=parquet",
        f"--out={out}",
        "--category=VFP",
        stdout=stdout,
    )
    summary = json.loads(stdout.getvalue().strip().splitlines()[-1])
    assert summary["counts"]["samples"] == 2
    assert summary["sha256"] == hashlib.sha256(out.read_bytes()).hexdigest()
    snapshot = Snapshot.objects.get(dataset=dataset, name="v1")
    assert snapshot.filter == {"statuses": ["verified"], "categories": ["VFP"]}


def test_command_refuses_bad_input_with_readable_errors(tmp_path: Path) -> None:
    """Unknown datasets, codes, duplicate names and missing folders are CommandErrors."""
    dataset = mmooc_dataset(name="cli")
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    call_command(
        "export_snapshot", "--dataset=cli", "--name=v1", "--format=jsonl", stdout=StringIO()
    )
    cases = [
        (["--dataset=nope", "--name=x", "--format=jsonl"], "No dataset named"),
        (["--dataset=cli", "--name=v1", "--format=jsonl"], "already has a snapshot"),
        (["--dataset=cli", "--name=x", "--format=jsonl", "--scenario=moon"], "moon"),
        (["--dataset=cli", "--name=x", "--format=tsv", f"--out={tmp_path}/no/x"], "does not exist"),
    ]
    for args, text in cases:
        with pytest.raises(CommandError, match=text):
            call_command("export_snapshot", *args, stdout=StringIO())
