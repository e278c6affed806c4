"""Releases read back through the site's own imports: every export format (JSON lines,
TSV, tri-modal, the Hugging Face folder, the MMOOC layout) gives back the samples it was built
from, open-ended items included, and a file that is not a release is refused readably."""

from __future__ import annotations

import hashlib
import json
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.urls import reverse

from annotation import services
from annotation.formats.jsonl import iter_jsonl
from annotation.formats.jsonl import write_jsonl as write_parsed_jsonl
from annotation.formats.labelstudio import release_mapping
from annotation.formats.mmooc import iter_mmooc
from annotation.formats.records import MediaRef, ParsedSample
from annotation.formats.vlmevalkit import iter_vlmevalkit
from annotation.imports import services as import_services
from annotation.models import (
    Dataset,
    DatasetKind,
    ImportSourceKind,
    JobStatus,
    MediaAsset,
    NoteKey,
    Sample,
    SampleStatus,
)
from annotation.snapshots import services as snapshot_services
from annotation.snapshots.exports.parquet import iter_release_parquet
from annotation.snapshots.services import EXPORT_FORMATS, IMAGE_ONLY_FORMATS
from core import roles
from tests.annotation.factories import (
    UserFactory,
    image_asset,
    mmooc_dataset,
    mmooc_sample,
    png_bytes,
    wav_bytes,
)
from tests.annotation.formats.test_vlmevalkit import HEADER as TSV_HEADER
from tests.annotation.formats.test_vlmevalkit import write_tsv
from tests.annotation.imports_support import (
    b64,
    dataset_for,
    logicvista_image,
    logicvista_subset,
    mmooc_record,
    needs_logicvista,
    run_import,
    stored_files,
    trimodal_record,
    write_lines,
)
from tests.annotation.test_snapshots import (
    build,
    download,
    entry_ids,
    fingerprint,
    import_with_service,
    mmooc_mixture,
    verified,
)
from tests.conftest import SHARED_DATA, client_for
from tests.review.factories import open_queue, submit

pytestmark = pytest.mark.django_db


def test_a_tsv_export_of_open_ended_items_imports_back_unchanged(tmp_path: Path) -> None:
    """Yes/no and free-answer items (no options) and a multiple-choice item, with custom
    fields, exported as TSV and imported into a new dataset give back the same samples."""
    source = mmooc_dataset(name="open-ended")
    common = {"status": SampleStatus.VERIFIED, "options": [], "source_dataset": "MMOOC"}
    mmooc_sample(
        source,
        question="Is the dog asleep?",
        question_format="yesno",
        reference_answer="no",
        answerability_group="shifted_ic",
        category_code="MP",
        scenario="math",
        extra={"hint": "Look at its eyes."},
        **common,
    )
    mmooc_sample(
        source,
        question="Which breed is the dog?",
        question_format="vqa",
        reference_answer="A beagle, probably.\nOr a basset.",
        explanation="",
        answerability_group="shifted_ic",
        category_code="PA",
        scenario="fine_grained_perception",
        split="test",
        **common,
    )
    mmooc_sample(source, status=SampleStatus.VERIFIED, extra={"difficulty": 3})
    path = download(build(source, "open", "tsv"), tmp_path)
    target = mmooc_dataset(name="open-ended-back")
    import_with_service(target, path, "vlmevalkit")
    assert fingerprint(target) == fingerprint(source)
    extras = list(target.samples.values_list("extra", flat=True))
    assert len(extras) == 3 and {} in extras
    assert {"hint": "Look at its eyes."} in extras and {"difficulty": 3} in extras


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "hf", "mmooc"])
def test_image_question_round_trip_gives_back_the_same_samples(
    fmt: str, tmp_path: Path, lead: Any
) -> None:
    """Importing a snapshot into an empty dataset gives back the same samples and labels."""
    source = mmooc_dataset()
    mmooc_mixture(source)
    snapshot = build(source, "release", fmt, by=lead)
    path = download(snapshot, tmp_path)
    target = mmooc_dataset(name=f"reimported-{fmt}")
    if fmt == "jsonl":
        import_with_service(target, path, "jsonl")
    elif fmt == "mmooc":
        import_with_service(target, path, "mmooc", file="data/ooc.parquet")
        import_with_service(target, path, "mmooc", file="data/ic.parquet")
    elif fmt == "hf":  # the zip as downloaded, one split's Parquet file at a time
        with zipfile.ZipFile(path) as archive:
            splits = [n for n in archive.namelist() if n.endswith(".parquet")]
        assert len(splits) >= 2
        for name in splits:
            import_with_service(target, path, "release", file=name)
    else:
        import_with_service(target, path, "release")
    expected = fingerprint(source)
    for external_id in list(expected):
        if external_id not in entry_ids(snapshot):
            del expected[external_id]
    assert len(expected) == 3
    assert fingerprint(target) == expected


def test_vlmevalkit_tsv_round_trip_gives_back_the_same_samples(tmp_path: Path) -> None:
    """A multiple-choice benchmark exported as TSV imports back with the same labels."""
    source = services.dataset_create(
        name="mmt", kind=DatasetKind.IMAGE_QUESTION, preset="mmt_bench"
    )
    common = {
        "answerability_group": "",
        "source_dataset": "MMT-Bench",
        "status": SampleStatus.VERIFIED,
    }
    verified_ids = []
    for n, answer in enumerate(["A", "D"]):
        sample = mmooc_sample(
            source,
            question=f"Which option is right? {n}",
            options=[{"label": letter, "text": f"text {letter}"} for letter in "ABCD"[: 2 + 2 * n]],
            reference_answer=answer,
            category_code="visual_recognition",
            scenario="object_detection",
            split="val" if n else "",
            explanation=f"Because of reason {n}." if n else "",
            **common,
        )
        verified_ids.append(sample.external_id)
    snapshot = build(source, "tsv", "tsv")
    target = services.dataset_create(
        name="mmt2", kind=DatasetKind.IMAGE_QUESTION, preset="mmt_bench"
    )
    import_with_service(target, download(snapshot, tmp_path), "vlmevalkit")
    assert fingerprint(target) == fingerprint(source)


def trimodal_pair(dataset: Dataset) -> tuple[Sample, Sample]:
    def scenario(n: int, label: str) -> Sample:
        return services.sample_create(
            dataset=dataset,
            external_id=f"s{n}",
            status=SampleStatus.VERIFIED,
            media=[
                (
                    "image",
                    services.media_asset_store(data=png_bytes(colour=(n, 2, 3)), kind="image"),
                ),
                (
                    "audio",
                    services.media_asset_store(data=wav_bytes(freq=300.0 + n), kind="audio"),
                ),
            ],
            image_description="A kitchen with a pan on the stove.",
            audio_description="Sizzling followed by a smoke alarm.",
            speech_utterance="Should I leave the house now?",
            safety_label=label,
            safety_category="physical_harm",
            safety_subcategory="bodily_injury",
            predicate=["the pan is on fire", "the alarm rings"],
        )

    unsafe, safe = scenario(1, "unsafe"), scenario(2, "safe")
    services.sample_link_pair(unsafe=unsafe, safe=safe)
    return unsafe, safe


@pytest.mark.parametrize("fmt", ["jsonl", "parquet", "hf"])
def test_trimodal_round_trip_carries_audio_and_pairs(fmt: str, tmp_path: Path) -> None:
    """Tri-modal releases carry their audio files; importing them restores scenarios and pairs."""
    source = services.dataset_create(name="mc", kind=DatasetKind.TRIMODAL, preset="mcbench")
    trimodal_pair(source)
    snapshot = build(source, "release", fmt)
    path = download(snapshot, tmp_path)
    target = services.dataset_create(name="mc2", kind=DatasetKind.TRIMODAL, preset="mcbench")
    if fmt == "jsonl":
        assert path.suffix == ".zip"
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
        assert "data.jsonl" in names and any(n.startswith("media/audio/") for n in names)
        import_with_service(target, path, "jsonl", file="data.jsonl")
    elif fmt == "hf":
        import_with_service(target, path, "release", file="data/train-00000-of-00001.parquet")
    else:
        import_with_service(target, path, "release")
    assert fingerprint(target) == fingerprint(source)


def test_the_hf_folder_loads_with_hugging_face_datasets(
    tmp_path: Path, lead: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Hugging Face folder loads with `datasets.load_dataset(folder)`, images decoded."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    import datasets

    source = mmooc_dataset()
    mmooc_mixture(source)
    snapshot = build(source, "release", "hf", by=lead)
    with zipfile.ZipFile(download(snapshot, tmp_path)) as archive:
        archive.extractall(tmp_path / "hf")
    loaded = datasets.load_dataset(str(tmp_path / "hf"), cache_dir=str(tmp_path / "cache"))
    rows = [row for split in loaded.values() for row in split]
    assert sorted(row["external_id"] for row in rows) == sorted(entry_ids(snapshot))
    first = rows[0]
    assert first["image"].size == (64, 48)  # a PIL image, decoded by the Image feature
    sample = Sample.objects.get(dataset=source, external_id=first["external_id"])
    assert first["reference_answer"] == sample.reference_answer


def test_a_file_that_is_not_a_release_parquet_is_refused_readably(tmp_path: Path) -> None:
    """Importing a text file as the site's Parquet export fails the job with a reason and
    leaves no sample behind."""
    bogus = tmp_path / "release.parquet"
    bogus.write_text('{"external_id": "x"}\n', encoding="utf-8")
    target = mmooc_dataset(name="target")
    job = import_services.import_job_create(
        dataset=target,
        format="release",
        source_kind=ImportSourceKind.SERVER_PATH,
        source=str(bogus),
        trusted=True,
        queue=False,
    )
    done = import_services.import_job_run(job_id=job.pk)
    assert done is not None and done.status == JobStatus.FAILED
    assert "Parquet" in done.message
    assert not Sample.objects.filter(dataset=target).exists()


def test_multi_image_samples_round_trip_through_the_hugging_face_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A multi-image sample keeps every image, in order, through the Hugging Face export:
    `datasets` loads the extra images as a sequence of images, and re-importing gives the
    same sample back."""
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
    import datasets

    source = services.dataset_create(name="multi", kind=DatasetKind.IMAGE_QUESTION)
    images = [image_asset(colour=(10 * i, 20, 30)) for i in range(3)]
    services.sample_create(
        dataset=source,
        external_id="m1",
        media=[("image", image) for image in images],
        question="Which image differs?",
        question_format="mcq",
        options=[{"label": "A", "text": "first"}, {"label": "B", "text": "third"}],
        reference_answer="B",
        status=SampleStatus.VERIFIED,
    )
    snapshot = build(source, "release", "hf")
    path = download(snapshot, tmp_path)
    target = services.dataset_create(name="multi2", kind=DatasetKind.IMAGE_QUESTION)
    import_with_service(target, path, "release", file="data/train-00000-of-00001.parquet")
    assert fingerprint(target) == fingerprint(source)
    with zipfile.ZipFile(path) as archive:
        archive.extractall(tmp_path / "hf")
    row = datasets.load_dataset(str(tmp_path / "hf"), cache_dir=str(tmp_path / "cache"))["train"][0]
    assert [image.size for image in row["more_images"]] == [(64, 48), (64, 48)]


def test_tsv_and_mmooc_layout_carry_custom_fields_but_not_other_apps_notes(
    tmp_path: Path,
) -> None:
    """An imported custom field becomes a column of the TSV and of the MMOOC layout; the notes
    review and judging keep in `extra` do not."""
    dataset = mmooc_dataset()
    verified(dataset, extra={"hint": "Look left.", "review_summary": {"round": 1}})
    verified(dataset, extra={"judge_votes": {"gpt-4o": "ooc"}, "difficulty": 2})
    tsv = download(build(dataset, "t", "tsv"), tmp_path)
    header = tsv.read_text(encoding="utf-8").splitlines()[0].split("\t")
    assert header[-2:] == ["hint", "difficulty"]
    assert "review_summary" not in header and "judge_votes" not in header
    archive = download(build(dataset, "m", "mmooc"), tmp_path)
    with zipfile.ZipFile(archive) as zipped:
        names = [n for n in zipped.namelist() if n.endswith("ooc.parquet")]
        zipped.extract(names[0], tmp_path / "m")
    table = pq.read_table(tmp_path / "m" / names[0])
    assert table.schema.names[-2:] == ["hint", "difficulty"]
    assert sorted(table.column("hint").to_pylist()) == ["", "Look left."]


def _release_licences(path: Path, fmt: str, folder: Path) -> dict[str, dict[str, str]]:
    """Each sample's licence per medium (role → licence) as the format's reader gives it."""
    folder.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".zip":
        with zipfile.ZipFile(path) as archive:
            archive.extractall(folder)
        data = [p for p in folder.rglob("*") if p.suffix in {".jsonl", ".parquet", ".tsv"}]
    else:
        data = [path]
    found: dict[str, dict[str, str]] = {}
    for file in data:
        if file.suffix == ".parquet" and pq.ParquetFile(file).metadata.num_rows == 0:
            continue  # the MMOOC layout's empty half (ic.parquet of out-of-context samples)
        if fmt == "jsonl":
            parsed: Any = iter_jsonl(file)
        elif fmt == "tsv":
            parsed = iter_vlmevalkit(file)
        elif fmt == "mmooc":
            parsed = iter_mmooc(file)
        else:
            parsed = iter_release_parquet(file)
        for sample in parsed:
            assert isinstance(sample, ParsedSample), sample
            found[sample.external_id] = {
                ref.role: ref.licence or sample.licence for ref in sample.media
            }
    return found


def test_defect_10_licences_per_medium_in_every_import_format_and_release(
    tmp_path: Path,
) -> None:
    """From an empty site: a tri-modal scenario's real image (LogicVista, Apache-2.0) and real
    audio clip (LibriSpeech, CC-BY-4.0) keep their own licences from the import
    (``image_licence``, ``audio_licence``) to every release (JSON lines, Parquet, Hugging
    Face); MMOOC and VLMEvalKit rows carry a ``licence`` of their own into the TSV and the
    MMOOC layout. Before, a release row carried one licence, the first medium's, and the
    MMOOC and VLMEvalKit formats none."""
    images = sorted((SHARED_DATA / "logicvista" / "images").glob("*.png"))
    clip = SHARED_DATA / "audio" / "198-209-0000.ogg"
    media = tmp_path / "tri" / "media"
    media.mkdir(parents=True)
    shutil.copy(images[0], media / "scene-1.png")
    shutil.copy(images[1], media / "scene-2.png")
    shutil.copy(clip, media / "sound-1.ogg")
    shutil.copy(SHARED_DATA / "audio" / "glacier-bay-humpback.ogg", media / "sound-2.ogg")
    scenarios = [
        trimodal_record(1, audio="media/sound-1.ogg", image_licence="Apache-2.0")
        | {"audio_licence": "CC-BY-4.0"},
        trimodal_record(2, audio="media/sound-2.ogg", licence="Public domain"),
    ]
    tri = dataset_for("trimodal", "mcbench")
    run_import(tri, "trimodal", write_lines(tmp_path / "tri" / "scenarios.jsonl", scenarios))
    expected_tri = {
        "tri-1": {"image": "Apache-2.0", "audio": "CC-BY-4.0"},
        "tri-2": {"image": "Public domain", "audio": "Public domain"},
    }
    stored = {
        s.external_id: {link.role: link.asset.licence for link in s.media_links.all()}
        for s in Sample.objects.filter(dataset=tri).prefetch_related("media_links__asset")
    }
    assert stored == expected_tri
    assert not any("licence" in s.extra for s in Sample.objects.filter(dataset=tri))

    question = dataset_for("mmooc", "mmooc")
    record = mmooc_record(5, image=b64(images[2].read_bytes()), licence="Apache-2.0")
    run_import(question, "mmooc", write_lines(tmp_path / "mm.jsonl", [record]))
    tsv_rows = [["7", b64(images[3].read_bytes()), "Which shape?", "", "A", "B", "", "", "A"]]
    tsv = write_tsv(
        tmp_path / "mmt.tsv",
        [*TSV_HEADER, "licence"],
        [[*row, "shapes", "l2", "dev", "CC-BY-4.0"] for row in tsv_rows],
    )
    table = dataset_for("vlmevalkit", "mmt_bench")
    run_import(table, "vlmevalkit", tsv)
    for dataset, licence in ((question, "Apache-2.0"), (table, "CC-BY-4.0")):
        sample = Sample.objects.get(dataset=dataset)
        assert sample.media_links.get().asset.licence == licence
        assert "licence" not in sample.extra

    for dataset in (tri, question, table):
        Sample.objects.filter(dataset=dataset).update(status=SampleStatus.VERIFIED)
    for fmt in ("jsonl", "parquet", "hf"):
        release = download(build(tri, f"tri-{fmt}", fmt), tmp_path)
        assert _release_licences(release, fmt, tmp_path / f"tri-{fmt}") == expected_tri, fmt
    for dataset, licence, fmts in (
        (question, "Apache-2.0", ("jsonl", "parquet", "mmooc", "tsv")),
        (table, "CC-BY-4.0", ("jsonl", "parquet", "tsv")),
    ):
        for fmt in fmts:
            release = download(build(dataset, f"{dataset.pk}-{fmt}", fmt), tmp_path)
            found = _release_licences(release, fmt, tmp_path / f"{dataset.pk}-{fmt}")
            assert [by_role["image"] for by_role in found.values()] == [licence], fmt


# -- the defects of issue 25 that a round trip showed ------------------------------------------


def _reviewed_logicvista(tmp_path: Path, ids: list[str], reviewers: list[Any]) -> Dataset:
    """Real LogicVista items imported into a blind dataset of an empty site, each accepted by
    every reviewer (so verified), with a judge's votes noted on them."""
    source = dataset_for("logicvista", name="logicvista-reviewed")
    run_import(source, "logicvista", logicvista_subset(tmp_path / "lv", ids), licence="Apache-2.0")
    open_queue(source, k=len(reviewers), blind=True, members=reviewers)
    services.samples_send_to_review(dataset=source, samples=source.samples.all(), by=None)
    for sample in source.samples.all():
        for reviewer in reviewers:
            submit(reviewer, sample)
    assert set(source.samples.values_list("status", flat=True)) == {SampleStatus.VERIFIED}
    pks = [sample.pk for sample in source.samples.all()]
    services.sample_set_note(
        sample_ids=pks,
        key=NoteKey.JUDGE_VOTES,
        values={pk: [{"judge": "gpt-4o", "label": SECRET_VOTE}] for pk in pks},
    )
    return source


SECRET_VOTE = "secret-judge-vote"


@needs_logicvista
def test_defect_5_a_reimported_jsonl_release_keeps_no_review_state_and_leaks_none(
    tmp_path: Path, lead: Any
) -> None:
    """Re-importing the site's own JSONL release stores neither its review trail (judge votes,
    reviewers) nor its status, revision and content hash as custom fields, and a blind
    annotator of the new dataset sees no vote and no reviewer through GET /api/samples/{id}/,
    not even in a sample that an older import left such keys in."""
    first, second = (UserFactory.create(role=roles.ANNOTATOR) for _ in range(2))
    source = _reviewed_logicvista(tmp_path, ["v1_287", "v1_288"], [first, second])
    release = download(build(source, "release", "jsonl", by=lead), tmp_path)
    line = json.loads(release.read_text(encoding="utf-8").splitlines()[0])
    assert sorted(line["review"]["reviewers"]) == sorted([first.username, second.username])
    assert SECRET_VOTE in json.dumps(line["review"]["judge_votes"])

    target = dataset_for("jsonl", name="logicvista-again")
    job = run_import(target, "jsonl", release)
    assert (job.imported, job.rejected) == (2, 0)
    for extra in target.samples.values_list("extra", flat=True):
        assert not {"review", "status", "revision", "content_hash"} & set(extra), extra
        assert extra["skills"]  # the real custom fields stay

    newcomer = UserFactory.create(role=roles.ANNOTATOR)
    open_queue(target, k=1, blind=True, members=[newcomer])
    older, newer = target.samples.order_by("external_id")
    # What an import before the fix left behind.
    Sample.objects.filter(pk=older.pk).update(extra={**older.extra, "review": line["review"]})
    for sample in (older, newer):
        body = client_for(newcomer).get(reverse("api_sample", args=[sample.pk]))
        assert body.status_code == 200
        shown = json.dumps(body.json())
        assert SECRET_VOTE not in shown
        assert first.username not in shown and second.username not in shown
        assert body.json()["extra"]["skills"] == sample.extra["skills"]
    lead_view = client_for(lead).get(reverse("api_sample", args=[older.pk])).json()
    assert lead_view["extra"]["review"]["reviewers"] == line["review"]["reviewers"]


# Custom fields of every JSON type, nested ones and text that reads like another type.
CUSTOM = {
    "meta": {"difficulty": 3, "tags": ["prices", "algebra"], "timed": True, "note": None},
    "subset": "hard",
    "number_as_text": "3",
    "count": 3,
    "ratio": 0.25,
    "flag": False,
    "nothing": None,
    "blank": "",
    "padded": " spaced ",
    "list": [1, "two", {"three": 3}],
}


def _group_rows(folder: Path) -> Path:
    """MMOOC-style items of each group and question format in this site's own JSONL, with
    real LogicVista images, a licence and source per item and custom fields of every type."""
    rows = [
        ParsedSample(
            row=0,
            external_id="ooc-mcq",
            question="What does the sign behind the bars say? (A) Stop (B) Go (C) none",
            question_format="mcq",
            options=[
                {"label": "A", "text": "Stop"},
                {"label": "B", "text": "Go"},
                {"label": "C", "text": "none"},
            ],
            reference_answer="C",
            explanation="No sign is visible.",
            answerability_group="ooc",
            category_code="VFP",
            scenario="coarse_perception",
            pipeline="human_designed",
            source_dataset="MMOOC",
            generator_models=["gpt-4o"],
            licence="CC-BY-4.0",
            source_url="https://example.org/ooc-mcq",
            media=[MediaRef("image", 0, data=logicvista_image("v1_289.png"))],
            extra=CUSTOM,
        ),
        ParsedSample(
            row=0,
            external_id="ic-yesno",
            question="Is the price of one FruitBar below £1?",
            question_format="yesno",
            reference_answer="yes",
            answerability_group="shifted_ic",
            category_code="MP",
            scenario="math",
            split="test",
            licence="CC-BY-SA-4.0",
            media=[MediaRef("image", 0, data=logicvista_image("v1_290.png"))],
            extra={"meta": {"difficulty": 1}},
        ),
        ParsedSample(
            row=0,
            external_id="ic-vqa",
            question="Which bar is the cheapest, and by how much?",
            question_format="vqa",
            reference_answer="The FruitBar,\\nby 25p.",
            answerability_group="shifted_ic",
            category_code="PA",
            scenario="fine_grained_perception",
            licence="CC0-1.0",
            media=[MediaRef("image", 0, data=logicvista_image("v1_291.png"))],
        ),
    ]
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "groups.jsonl", "w", encoding="utf-8") as handle:
        write_parsed_jsonl(rows, handle)
    return folder / "groups.jsonl"


def _release_source(tmp_path: Path) -> Dataset:
    """An empty site's dataset of real LogicVista items (licence, source, list-valued custom
    fields) and MMOOC-style items of every group and format."""
    source = dataset_for("logicvista", name="release-source")
    folder = logicvista_subset(tmp_path / "lv", ["v1_287", "v1_288"])
    assert run_import(source, "logicvista", folder, licence="Apache-2.0").imported == 2
    assert run_import(source, "jsonl", _group_rows(tmp_path / "groups")).imported == 3
    return source


def _everything(dataset: Dataset) -> dict[str, Any]:
    """Every field of every sample by external id: labels, custom fields, pair, content hash,
    and per medium its role, position, hash of the stored bytes, licence and source."""
    found: dict[str, Any] = {}
    for sample in Sample.objects.filter(dataset=dataset).select_related("pair"):
        media = []
        for link in sample.media_links.order_by("role", "position").select_related("asset"):
            with default_storage.open(link.asset.file.name, "rb") as handle:
                digest = hashlib.sha256(handle.read()).hexdigest()
            media.append(
                (link.role, link.position, digest, link.asset.licence, link.asset.source_url)
            )
        found[sample.external_id] = {
            "labels": {name: getattr(sample, name) for name in services.LABEL_FIELDS},
            "extra": sample.extra,
            "pair": sample.pair.external_id if sample.pair else "",
            "content_hash": sample.content_hash,
            "media": media,
        }
    return found


def _wipe_site() -> None:
    """Nothing of the source left: no dataset, no asset, no stored media file."""
    for asset in MediaAsset.objects.all():
        for name in (asset.file.name, asset.thumbnail.name):
            if name:
                default_storage.delete(name)
    Dataset.objects.all().delete()
    MediaAsset.objects.all().delete()
    assert not stored_files()


def _import_release(fmt: str, path: Path) -> Dataset:
    """Import a release as a lead would with the import command's defaults: a new dataset
    whose kind and preset come from the format and the release's rows."""
    files = {"jsonl": [""], "parquet": [""], "tsv": [""], "labelstudio": ["labelstudio.json"]}
    with_file: list[str] = []
    if fmt in ("hf", "mmooc"):
        with zipfile.ZipFile(path) as archive:
            with_file = sorted(n for n in archive.namelist() if n.endswith(".parquet"))
    reader = {"jsonl": "jsonl", "parquet": "release", "tsv": "vlmevalkit"}.get(fmt)
    reader = reader or {"mmooc": "mmooc", "labelstudio": "labelstudio"}.get(fmt, "release")
    # Label Studio's JSON is read by the mapping of the site's own release.
    mapping = release_mapping().as_options() if fmt == "labelstudio" else {}
    target: Dataset | None = None
    for name in files.get(fmt, with_file):
        options = {"file": name, **mapping} if name else {}
        if target is None:
            target, _created = import_services.import_dataset_prepare(
                name=f"back-{fmt}",
                format=reader,
                source_kind=ImportSourceKind.SERVER_PATH,
                source=str(path),
                options=options,
            )
        job = run_import(target, reader, path, **options)
        assert job.status == JobStatus.SUCCEEDED, job.message
        assert job.rejected == 0, list(job.row_errors.values_list("message", flat=True))
    assert target is not None
    return target


def _released(source: Dataset, snapshot: Any) -> dict[str, Any]:
    """``_everything`` of the samples a release holds (the MMOOC layout: OOC and IC only)."""
    held = entry_ids(snapshot)
    return {
        key: value
        for key, value in _everything(source).items()
        if key in held and (snapshot.format != "mmooc" or value["labels"]["answerability_group"])
    }


RELEASE_FORMATS = ["jsonl", "parquet", "hf", "mmooc", "tsv", "labelstudio"]


@needs_logicvista
@pytest.mark.parametrize("fmt", RELEASE_FORMATS)
def test_a_release_in_every_format_reimports_with_no_difference(
    fmt: str, tmp_path: Path, lead: Any
) -> None:
    """Built by the real snapshot service and imported into a new dataset of a site that has
    nothing of the source left, a release gives back every sample it holds with the same
    labels, custom fields (types and nesting kept), content hash and media bytes, and no
    review state as custom data, and every medium's licence and source."""
    source = _release_source(tmp_path)
    snapshot = build(source, "release", fmt, by=lead, filter={"statuses": ["imported"]})
    expected = _released(source, snapshot)
    assert len(expected) == (3 if fmt == "mmooc" else 5)
    path = download(snapshot, tmp_path)
    _wipe_site()
    target = _import_release(fmt, path)
    assert _everything(target) == expected


@needs_logicvista
@pytest.mark.parametrize("fmt", RELEASE_FORMATS)
def test_a_release_in_every_format_reimports_every_licence(
    fmt: str, tmp_path: Path, lead: Any
) -> None:
    """Every medium's licence and source come back from the release alone."""
    source = _release_source(tmp_path)
    snapshot = build(source, "release", fmt, by=lead, filter={"statuses": ["imported"]})
    expected = _released(source, snapshot)
    path = download(snapshot, tmp_path)
    _wipe_site()
    found = _everything(_import_release(fmt, path))
    licences = {k: [m[3:] for m in v["media"]] for k, v in found.items()}
    assert licences == {k: [m[3:] for m in v["media"]] for k, v in expected.items()}


@needs_logicvista
def test_defect_6_the_tsv_of_open_ended_items_imports_into_a_new_dataset(
    tmp_path: Path,
) -> None:
    """The site's TSV of yes/no and open-ended items, imported into a new dataset with the
    defaults, is not read as MMT-Bench (multiple choice only): every row comes back, its custom
    fields with their types and nesting (a number stays a number, text that reads as a number
    stays text)."""
    source = dataset_for("jsonl", name="open-ended")
    assert run_import(source, "jsonl", _group_rows(tmp_path / "groups")).imported == 3
    snapshot = build(source, "open", "tsv", filter={"statuses": ["imported"]})
    target = _import_release("tsv", download(snapshot, tmp_path))
    assert target.preset == "mmooc"
    back = {s.external_id: s for s in target.samples.all()}
    assert {k: s.question_format for k, s in back.items()} == {
        "ooc-mcq": "mcq",
        "ic-yesno": "yesno",
        "ic-vqa": "vqa",
    }
    assert back["ooc-mcq"].extra == CUSTOM
    assert back["ic-yesno"].extra == {"meta": {"difficulty": 1}}
    assert back["ic-vqa"].extra == {}


@needs_logicvista
def test_defect_6_the_mmooc_layout_with_an_empty_ooc_file_imports_with_nested_fields(
    tmp_path: Path,
) -> None:
    """A release of shifted-IC items only leaves the layout's ooc.parquet empty: that file
    imports as no rows (not refused), and ic.parquet gives back nested custom fields as
    values, not JSON strings."""
    source = dataset_for("jsonl", name="ic-only")
    assert run_import(source, "jsonl", _group_rows(tmp_path / "groups")).imported == 3
    snapshot = build(
        source, "ic", "mmooc", filter={"statuses": ["imported"], "groups": ["shifted_ic"]}
    )
    path = download(snapshot, tmp_path)
    target = dataset_for("mmooc", "mmooc", name="ic-back")
    empty = run_import(target, "mmooc", path, file="data/ooc.parquet")
    assert (empty.status, empty.imported, empty.rejected) == (JobStatus.SUCCEEDED, 0, 0)
    assert run_import(target, "mmooc", path, file="data/ic.parquet").imported == 2
    back = target.samples.get(external_id="ic-yesno")
    assert back.extra == {"meta": {"difficulty": 1}}


# -- a tri-modal dataset of real clips, released in every format that holds scenarios --------

TRIMODAL_FORMATS = [f for f in EXPORT_FORMATS if f not in IMAGE_ONLY_FORMATS]


def _trimodal_source(tmp_path: Path) -> Dataset:
    """An empty site's MCBench dataset of two safe/unsafe pairs: real LogicVista images
    (Apache-2.0) with real clips (LibriSpeech speech, CC-BY-4.0; a humpback whale, public
    domain; a robin, CC-BY-3.0), each scenario's image licence other than its audio's, a
    speech utterance, a source URL and nested custom fields."""
    images = sorted((SHARED_DATA / "logicvista" / "images").glob("*.png"))
    clips = [
        ("198-209-0000.ogg", "CC-BY-4.0"),
        ("glacier-bay-humpback.ogg", "Public domain"),
        ("456440__inspectorj__bird-whistling-robin-single-13.ogg", "CC-BY-3.0"),
        ("3436-172162-0000.ogg", "CC-BY-4.0"),
    ]
    media = tmp_path / "mc" / "media"
    media.mkdir(parents=True)
    scenarios = []
    for n, (clip, audio_licence) in enumerate(clips, start=1):
        shutil.copy(images[10 + n], media / f"scene-{n}.png")
        shutil.copy(SHARED_DATA / "audio" / clip, media / f"sound-{n}.ogg")
        scenarios.append(
            trimodal_record(
                n,
                audio=f"media/sound-{n}.ogg",
                S=f"Should I keep going? ({n})",
                image_licence="Apache-2.0",
                audio_licence=audio_licence,
                source_url=f"https://example.org/mc/{n}",
                split="test" if n > 2 else "",
                setting={"room": "kitchen", "noise_db": [40, 72.5], "night": n % 2 == 0},
                annotator_note=None if n == 1 else f"clip {clip}",
            )
        )
    source = dataset_for("trimodal", "mcbench", name="mc-real")
    job = run_import(
        source, "trimodal", write_lines(tmp_path / "mc" / "scenarios.jsonl", scenarios)
    )
    assert (job.imported, job.rejected) == (4, 0)
    return source


@pytest.mark.parametrize("fmt", TRIMODAL_FORMATS)
def test_a_trimodal_release_of_real_clips_reimports_with_no_difference(
    fmt: str, tmp_path: Path, lead: Any
) -> None:
    """A tri-modal release (image + audio + speech) in each format that holds scenarios,
    imported into a new dataset of a site that has nothing of the source left, gives back
    every scenario with the same labels, pair, custom fields (nested kept), content hash,
    image and audio bytes, and each medium's own licence and source."""
    source = _trimodal_source(tmp_path)
    snapshot = build(source, "release", fmt, by=lead, filter={"statuses": ["imported"]})
    expected = _released(source, snapshot)
    assert len(expected) == 4
    licences = {k: {m[0]: m[3] for m in v["media"]} for k, v in expected.items()}
    assert licences["tri-2"] == {"image": "Apache-2.0", "audio": "Public domain"}
    assert all(v["pair"] for v in expected.values())
    assert expected["tri-2"]["extra"] == {
        "setting": {"room": "kitchen", "noise_db": [40, 72.5], "night": True},
        "annotator_note": "clip glacier-bay-humpback.ogg",
        "predicate_text": "IF pan on stove AND smoke alarm THEN UNSAFE",
    }
    assert expected["tri-2"]["labels"]["speech_utterance"] == "Should I keep going? (2)"
    path = download(snapshot, tmp_path)
    _wipe_site()
    target = _import_release(fmt, path)
    assert target.kind == DatasetKind.TRIMODAL
    assert _everything(target) == expected


def test_the_image_only_formats_refuse_a_trimodal_dataset(tmp_path: Path) -> None:
    """The formats left out of the tri-modal round trip are those that hold no scenario."""
    source = services.dataset_create(name="mc", kind=DatasetKind.TRIMODAL, preset="mcbench")
    for fmt in sorted(IMAGE_ONLY_FORMATS):
        with pytest.raises(ValidationError, match="image questions only"):
            snapshot_services.snapshot_create(dataset=source, name=fmt, format=fmt, queue=False)
    assert set(TRIMODAL_FORMATS) == {"jsonl", "parquet", "hf"}
