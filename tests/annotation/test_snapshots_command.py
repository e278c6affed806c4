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


def test_out_may_be_a_folder_that_receives_the_release_and_its_manifest(tmp_path: Path) -> None:
    """--out naming a folder (existing, or new with a trailing slash) gets the release file
    under its own name and manifest.json beside it; the manifest names the release's hash."""
    dataset = mmooc_dataset(name="mmooc-folder")
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    for name, out in (("v1", tmp_path), ("v2", tmp_path / "new")):
        stdout = StringIO()
        call_command(
            "export_snapshot",
            "--dataset=mmooc-folder",
            f"--name={name}",
            "--format=parquet",
            f"--out={out}/",
            stdout=stdout,
        )
        summary = json.loads(stdout.getvalue().strip().splitlines()[-1])
        release = out / f"{name}.parquet"
        assert summary["out"] == str(release)
        assert summary["manifest"] == str(out / "manifest.json")
        manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
        assert manifest["artifact"]["sha256"] == hashlib.sha256(release.read_bytes()).hexdigest()
        assert manifest["snapshot"]["name"] == name


def test_an_mmooc_layout_that_leaves_samples_out_says_so_with_the_count(tmp_path: Path) -> None:
    """Samples in neither the OOC nor the shifted-IC group have no file in the MMOOC layout:
    the command warns with their number and the summary counts them."""
    dataset = mmooc_dataset(name="mmooc-left")
    mmooc_sample(dataset, status=SampleStatus.VERIFIED)
    for _ in range(2):
        mmooc_sample(dataset, status=SampleStatus.VERIFIED, answerability_group="")
    stdout, stderr = StringIO(), StringIO()
    call_command(
        "export_snapshot",
        "--dataset=mmooc-left",
        "--name=v1",
        "--format=mmooc",
        f"--out={tmp_path}",
        stdout=stdout,
        stderr=stderr,
    )
    summary = json.loads(stdout.getvalue().strip().splitlines()[-1])
    assert summary["left_out"] == 2 and summary["counts"]["samples"] == 3
    assert "2 samples were left out" in stderr.getvalue()
    assert Snapshot.objects.get(dataset=dataset).left_out == 2
    quiet = StringIO()
    call_command(
        "export_snapshot", "--dataset=mmooc-left", "--name=v2", "--format=jsonl", stderr=quiet
    )
    assert quiet.getvalue() == ""
