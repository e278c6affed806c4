"""Services of the annotation app: datasets, samples of every benchmark, history and media."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotation import services
from annotation.models import (
    ChangeSource,
    DatasetKind,
    MediaAsset,
    Sample,
    SampleRevision,
    SampleStatus,
    TaxonomyTerm,
)
from annotation.services import media as media_services
from annotation.services.samples import sample_content_hash_of_json, sample_values_json
from tests.annotation.factories import (
    image_asset,
    mmooc_dataset,
    mmooc_sample,
    png_bytes,
    wav_bytes,
)

pytestmark = pytest.mark.django_db


def test_dataset_create_copies_the_preset_taxonomy() -> None:
    """A dataset made from the MMOOC preset carries its 8 categories, groups, formats, scenarios."""
    dataset = mmooc_dataset(name="MMOOC v1")
    codes = set(
        TaxonomyTerm.objects.filter(dataset=dataset, kind="category").values_list("code", flat=True)
    )
    assert codes == {"MA", "VFP", "USPC", "ULS", "MKB", "MP", "PA", "IQM"}
    vfp = TaxonomyTerm.objects.get(dataset=dataset, kind="category", code="VFP")
    assert vfp.parent_code == "ooc" and vfp.name_zh == "视觉错误前提"
    assert TaxonomyTerm.objects.filter(dataset=dataset, kind="scenario").count() == 6


@pytest.mark.parametrize(
    ("kwargs", "code"),
    [
        ({"name": "x", "kind": "video"}, "bad_kind"),
        ({"name": "x", "kind": DatasetKind.TRIMODAL, "preset": "nope"}, "bad_preset"),
        ({"name": "  ", "kind": DatasetKind.TRIMODAL}, "name_required"),
    ],
)
def test_dataset_create_refuses_bad_input_with_a_reason(kwargs: dict[str, Any], code: str) -> None:
    """A bad kind, preset or name is refused with a readable error and creates nothing."""
    with pytest.raises(ValidationError) as caught:
        services.dataset_create(**kwargs)
    assert caught.value.code == code
    assert not TaxonomyTerm.objects.exists()


def test_dataset_names_are_unique() -> None:
    """A second dataset with the same name is refused."""
    mmooc_dataset(name="same")
    with pytest.raises(ValidationError, match="already exists"):
        mmooc_dataset(name="same")


def test_one_sample_of_each_benchmark_fits_the_model() -> None:
    """MMOOC, MCBench and MMT-Bench samples are all created through services, unchanged model."""
    ooc = mmooc_sample()
    assert (ooc.answerability_group, ooc.category_code, ooc.question_format) == (
        "ooc",
        "VFP",
        "mcq",
    )
    assert [o["label"] for o in ooc.options] == ["A", "B", "C"]

    mcbench = services.dataset_create(name="mc", kind=DatasetKind.TRIMODAL, preset="mcbench")
    image = image_asset(colour=(1, 2, 3))
    unsafe = services.sample_create(
        dataset=mcbench,
        external_id="s1-unsafe",
        media=[
            ("image", image),
            ("audio", services.media_asset_store(data=wav_bytes(), kind="audio")),
        ],
        image_description="A pan smoking on a stove.",
        audio_description="A smoke alarm beeps.",
        speech_utterance="I'll have a nap now.",
        safety_label="unsafe",
        safety_category="physical_harm",
        safety_subcategory="health_hazard",
        predicate=["stove smoking (image)", "alarm (audio)", "going to sleep (speech)"],
    )
    safe = services.sample_create(
        dataset=mcbench,
        external_id="s1-safe",
        media=[
            ("image", image),
            ("audio", services.media_asset_store(data=wav_bytes(freq=220), kind="audio")),
        ],
        image_description="A cold stove.",
        audio_description="A fridge hums.",
        speech_utterance="I'll have a nap now.",
        safety_label="safe",
        safety_category="physical_harm",
        safety_subcategory="health_hazard",
        predicate=["stove off (image)", "no alarm (audio)", "going to sleep (speech)"],
    )
    services.sample_link_pair(unsafe=unsafe, safe=safe)
    unsafe.refresh_from_db()
    safe.refresh_from_db()
    assert unsafe.pair == safe and safe.pair == unsafe
    assert unsafe.media_links.get(role="audio").asset.duration_seconds == pytest.approx(1.0)
    assert len(unsafe.predicate) == 3

    mmt = services.dataset_create(name="mmt", kind=DatasetKind.IMAGE_QUESTION, preset="mmt_bench")
    question = services.sample_create(
        dataset=mmt,
        external_id="0",
        media=[("image", image)],
        question="Which object is the largest?",
        question_format="mcq",
        options=[
            {"label": k, "text": t} for k, t in zip("ABC", ["cat", "car", "cup"], strict=True)
        ],
        reference_answer="B",
        category_code="object_size",
        scenario="visual_recognition",
        split="test",
    )
    assert question.category_code == "object_size"
    assert Sample.objects.count() == 4
    assert MediaAsset.objects.filter(kind="image").count() == 2  # one image shared by three samples


def test_sample_create_refuses_codes_outside_the_taxonomy() -> None:
    """An unknown category code is refused with its reason and no sample is left behind."""
    dataset = mmooc_dataset()
    with pytest.raises(services.SampleInvalid, match="XYZ"):
        mmooc_sample(dataset, category_code="XYZ")
    assert not Sample.objects.filter(dataset=dataset).exists()


def test_sample_create_refuses_an_answer_outside_the_options() -> None:
    """A multiple-choice answer that is not among the options is refused."""
    with pytest.raises(services.SampleInvalid, match="E"):
        mmooc_sample(reference_answer="E", answerability_group="shifted_ic", category_code="MP")


def test_text_longer_than_the_setting_is_refused_on_create_and_update(
    lead: Any, settings: Any
) -> None:
    """SAMPLE_MAX_TEXT_CHARS limits a text field by its length and a list by its JSON, for
    the API and the pages as for imports; a value at the limit is accepted."""
    from django.urls import reverse

    from tests.conftest import client_for

    settings.SAMPLE_MAX_TEXT_CHARS = 500
    dataset = mmooc_dataset()
    with pytest.raises(services.SampleInvalid, match="'question' is longer than 500 characters"):
        mmooc_sample(dataset, question="x" * 501)
    sample = mmooc_sample(dataset)
    with pytest.raises(services.SampleInvalid, match="'explanation' is longer than 500"):
        services.sample_update(
            sample=sample, changes={"explanation": "y" * 501}, by=lead, source="edit"
        )
    options = [{"label": "A", "text": "z" * 500}]
    with pytest.raises(services.SampleInvalid, match="'options' is longer than 500"):
        services.sample_update(sample=sample, changes={"options": options}, by=lead, source="edit")
    assert services.sample_update(
        sample=sample, changes={"explanation": "y" * 500}, by=lead, source="edit"
    )
    reply = client_for(lead).patch(
        reverse("api_sample", args=[sample.pk]),
        {"changes": {"question": "q" * 501}, "reason": "typo"},
        format="json",
    )
    assert reply.status_code == 400 and "longer than 500 characters" in json.dumps(reply.json())
    sample.refresh_from_db()
    assert len(sample.question) < 500 and len(sample.explanation) == 500


def test_label_changes_keep_who_when_before_after_and_why(lead: object) -> None:
    """Every label change is a revision with its author, before/after values and reason."""
    sample = mmooc_sample()
    revision = services.sample_update(
        sample=sample,
        changes={"explanation": "No car is visible.", "category_code": "VFP"},
        by=lead,  # type: ignore[arg-type]
        source=ChangeSource.EDIT,
        reason="clearer wording",
    )
    assert revision is not None
    assert revision.number == 2 and revision.changed_by == lead
    assert revision.before == {"explanation": "There is no car in the image."}
    assert revision.after == {"explanation": "No car is visible."}
    assert revision.reason == "clearer wording"
    sample.refresh_from_db()
    assert sample.revision == 2 and sample.explanation == "No car is visible."
    assert list(sample.revisions.values_list("number", flat=True)) == [1, 2]


def test_an_update_that_changes_nothing_makes_no_revision() -> None:
    """Writing the same values back records nothing."""
    sample = mmooc_sample()
    assert (
        services.sample_update(
            sample=sample, changes={"category_code": "VFP"}, by=None, source=ChangeSource.EDIT
        )
        is None
    )
    assert SampleRevision.objects.filter(sample=sample).count() == 1


def test_an_invalid_update_changes_nothing() -> None:
    """A correction to an unknown category is refused and the sample keeps its labels."""
    sample = mmooc_sample()
    with pytest.raises(services.SampleInvalid):
        services.sample_update(
            sample=sample, changes={"category_code": "NOPE"}, by=None, source=ChangeSource.EDIT
        )
    sample.refresh_from_db()
    assert sample.category_code == "VFP" and sample.revision == 1


def test_a_value_held_outside_the_taxonomy_does_not_block_an_edit_of_another_field() -> None:
    """A sample imported with a category the taxonomy lacks can still have its scenario
    corrected; changing the category to another unknown code is still refused."""
    sample = mmooc_sample()
    Sample.objects.filter(pk=sample.pk).update(category_code="LEGACY")
    sample.refresh_from_db()
    services.sample_update(
        sample=sample, changes={"scenario": "math"}, by=None, source=ChangeSource.EDIT
    )
    sample.refresh_from_db()
    assert (sample.category_code, sample.scenario) == ("LEGACY", "math")
    with pytest.raises(services.SampleInvalid):
        services.sample_update(
            sample=sample, changes={"category_code": "NOPE"}, by=None, source=ChangeSource.EDIT
        )


def test_status_changes_are_recorded() -> None:
    """A status change is kept in the history like a label change."""
    sample = mmooc_sample()
    services.sample_set_status(sample=sample, status=SampleStatus.VERIFIED, by=None, reason="k=2")
    sample.refresh_from_db()
    assert sample.status == SampleStatus.VERIFIED
    last = sample.revisions.last()
    assert last is not None and last.after == {"status": "verified"}


def test_a_workflow_step_moves_the_status_once_with_its_history(lead: object) -> None:
    """``sample_advance_status`` moves a sample on only from the status it names, counts the
    revision and records who and why; a second try finds it moved and writes nothing."""
    sample = mmooc_sample(status=SampleStatus.PENDING_REVIEW)
    moved = services.sample_advance_status(
        sample=sample,
        from_status=SampleStatus.PENDING_REVIEW,
        to_status=SampleStatus.IN_REVIEW,
        by=lead,  # type: ignore[arg-type]
        source=ChangeSource.REVIEW,
        reason="first review",
    )
    assert moved and sample.status == SampleStatus.IN_REVIEW
    stored = Sample.objects.get(pk=sample.pk)
    assert (stored.status, stored.revision) == (SampleStatus.IN_REVIEW, 2)
    last = SampleRevision.objects.filter(sample=sample).order_by("number").last()
    assert last is not None
    assert (last.number, last.changed_by, last.reason) == (2, lead, "first review")
    assert (last.before, last.after) == ({"status": "pending_review"}, {"status": "in_review"})
    again = services.sample_advance_status(
        sample=stored,
        from_status=SampleStatus.PENDING_REVIEW,
        to_status=SampleStatus.IN_REVIEW,
        by=None,
        source=ChangeSource.REVIEW,
    )
    assert not again
    assert SampleRevision.objects.filter(sample=sample).count() == 2
    with pytest.raises(ValidationError, match="Unknown status"):
        services.sample_advance_status(
            sample=stored,
            from_status=SampleStatus.IN_REVIEW,
            to_status="lost",
            by=None,
            source=ChangeSource.REVIEW,
        )


def test_media_is_stored_once_per_content() -> None:
    """The same bytes twice give one asset and one stored file."""
    data = png_bytes(colour=(9, 9, 9))
    first = services.media_asset_store(data=data, kind="image")
    second = services.media_asset_store(data=data, kind="image", source_url="http://x.test/a.png")
    assert first.pk == second.pk
    assert MediaAsset.objects.count() == 1
    folder = first.file.name.rsplit("/", 1)[0]
    assert default_storage.listdir(folder)[1] == [first.file.name.rsplit("/", 1)[1]]
    assert (first.width, first.height, first.mime_type) == (64, 48, "image/png")


def test_a_store_whose_row_fails_leaves_no_file(monkeypatch: pytest.MonkeyPatch) -> None:
    """A single upload is stored as a batch of one, as an import's chunk: if its row cannot
    be written, the file written meanwhile is deleted again."""

    def refuse(*args: object) -> None:
        raise RuntimeError("the row cannot be written")

    monkeypatch.setattr(media_services, "media_assets_insert", refuse)
    data = png_bytes(colour=(9, 8, 7))
    with pytest.raises(RuntimeError):
        services.media_asset_store(data=data, kind="image")
    assert not MediaAsset.objects.exists()
    sha = hashlib.sha256(data).hexdigest()
    name = media_services.media_storage_name(kind="image", sha=sha, mime="image/png")
    assert not default_storage.exists(name)


@pytest.mark.parametrize(
    ("data", "kind", "fragment"),
    [
        (b"", "image", "empty"),
        (b"not an image at all", "image", "image"),
        (png_bytes()[:60], "image", "truncated"),
        (b"RIFF....WAVEfmt this is text", "audio", "audio"),
    ],
)
def test_bad_media_is_refused_and_leaves_nothing(data: bytes, kind: str, fragment: str) -> None:
    """Unreadable media get a readable error; no asset row and no stored file remain."""
    with pytest.raises(ValidationError) as caught:
        services.media_asset_store(data=data, kind=kind)
    assert fragment in " ".join(caught.value.messages).lower()
    assert not MediaAsset.objects.exists()
    assert not default_storage.exists("media")


def test_derivation_makes_thumbnails_and_peaks() -> None:
    """A worker run gives images a thumbnail and audio waveform peaks, once."""
    image = services.media_asset_store(data=png_bytes(800, 600), kind="image")
    audio = services.media_asset_store(data=wav_bytes(), kind="audio")
    image.refresh_from_db()
    audio.refresh_from_db()  # eager mode in tests: the task already ran on commit... or not
    derived_image = services.media_asset_derive(asset_id=image.pk)
    derived_audio = services.media_asset_derive(asset_id=audio.pk)
    assert derived_image is not None and derived_audio is not None
    image, audio = derived_image, derived_audio
    assert image.thumbnail and default_storage.exists(image.thumbnail.name)
    assert audio is not None and audio.peaks and max(audio.peaks) == pytest.approx(0.5, abs=0.05)
    derived_at = image.derived_at
    again = services.media_asset_derive(asset_id=image.pk)
    assert again is not None and again.derived_at == derived_at


def test_a_batch_is_derived_in_a_few_statements_whatever_its_size(
    django_capture_on_commit_callbacks: Any,
) -> None:
    """Images that fit the thumbnail box are their own thumbnail (no new file), larger ones get
    a WEBP, audio gets peaks; the statements do not grow with the batch; a second run does
    nothing."""

    def batch(count: int, first: int) -> list[int]:
        with django_capture_on_commit_callbacks(execute=False):
            small = [
                services.media_asset_store(data=png_bytes(24, 24, (n, 1, 2)), kind="image").pk
                for n in range(first, first + count)
            ]
            big = services.media_asset_store(data=png_bytes(900, 400, (first, 9, 9)), kind="image")
            audio = services.media_asset_store(data=wav_bytes(freq=200 + first), kind="audio")
        return [*small, big.pk, audio.pk]

    few, many = batch(2, 0), batch(8, 10)
    with CaptureQueriesContext(connection) as small_batch:
        assert services.media_assets_derive(asset_ids=few) == 4
    with CaptureQueriesContext(connection) as large_batch:
        assert services.media_assets_derive(asset_ids=many) == 10
    assert len(large_batch.captured_queries) == len(small_batch.captured_queries) <= 5
    small, big, audio = (MediaAsset.objects.get(pk=pk) for pk in (many[0], many[-2], many[-1]))
    assert small.thumbnail.name == small.file.name and small.derived_at is not None
    assert big.thumbnail.name.endswith((".webp", ".jpg")) and big.thumbnail.name != big.file.name
    assert default_storage.exists(big.thumbnail.name) and audio.peaks
    assert services.media_assets_derive(asset_ids=many) == 0


def test_a_stored_file_that_cannot_be_thumbnailed_records_its_error() -> None:
    asset = services.media_asset_store(data=png_bytes(900, 400), kind="image")
    default_storage.delete(asset.file.name)
    default_storage.save(asset.file.name, ContentFile(b"not an image any more"))
    services.media_assets_derive(asset_ids=[asset.pk])
    asset.refresh_from_db()
    assert asset.derived_at is not None and asset.derive_error and not asset.thumbnail


def test_only_an_image_larger_than_the_viewer_needs_gets_a_display_copy() -> None:
    """An image over DISPLAY_SIZE pixels on its longer side gets a display copy of exactly
    DISPLAY_SIZE (at least as large as the viewer, aspect ratio kept); a smaller one none, as
    the viewer shows it as it is."""
    from PIL import Image

    from annotation.services.media import DISPLAY_SIZE

    stored_large = services.media_asset_store(
        data=png_bytes(DISPLAY_SIZE * 2, DISPLAY_SIZE), kind="image"
    )
    stored_small = services.media_asset_store(data=png_bytes(DISPLAY_SIZE, 600), kind="image")
    large = services.media_asset_derive(asset_id=stored_large.pk)
    small = services.media_asset_derive(asset_id=stored_small.pk)
    assert large is not None and small is not None
    assert large.display and not small.display and small.thumbnail
    with default_storage.open(large.display.name, "rb") as handle:
        shown = Image.open(handle)
        assert shown.size == (DISPLAY_SIZE, DISPLAY_SIZE // 2)


def test_the_content_hash_orders_media_by_role_and_position() -> None:
    """A sample made with its image before its audio hashes like the import and updates do
    (media in role, then position order), so re-importing it finds it unchanged."""
    dataset = services.dataset_create(name="tri", kind=DatasetKind.TRIMODAL, preset="mcbench")
    image = image_asset(colour=(4, 5, 6))
    audio = services.media_asset_store(data=wav_bytes(freq=300), kind="audio")
    values: dict[str, Any] = {
        "image_description": "A stove.",
        "audio_description": "A beep.",
        "speech_utterance": "Nap time.",
        "safety_label": "safe",
        "safety_category": "physical_harm",
        "safety_subcategory": "health_hazard",
        "predicate": ["stove off (image)"],
    }
    sample = services.sample_create(
        dataset=dataset, external_id="t1", media=[("image", image), ("audio", audio)], **values
    )
    full = {name: getattr(sample, name) for name in services.LABEL_FIELDS}
    assert sample.content_hash == services.sample_content_hash(full, [audio.sha256, image.sha256])


def test_the_content_hash_keeps_its_stored_format() -> None:
    """Stored hashes stay comparable: the SHA-256 of the label fields and the media hashes as
    sorted-key JSON, non-ASCII text as it is; the import's JSON text gives the same hash."""
    values = {"question": "图中是什么？", "options": [{"label": "A", "text": "é"}], "answer": "A"}
    shas = ["b" * 64, "a" * 64]
    payload = json.dumps(
        {"fields": {k: values.get(k) for k in services.LABEL_FIELDS}, "media": shas},
        sort_keys=True,
        ensure_ascii=False,
    )
    expected = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    assert services.sample_content_hash(values, shas) == expected
    values_json = sample_values_json(values)
    assert json.loads(values_json) == {k: values.get(k) for k in services.LABEL_FIELDS}
    assert sample_content_hash_of_json(values_json, shas) == expected
    complete = {k: values.get(k) for k in reversed(services.LABEL_FIELDS)}
    assert sample_values_json(complete) == values_json


def test_the_content_hash_covers_custom_fields_but_not_the_gold_flag() -> None:
    """Custom fields (``extra``, nested values included) join the hashed payload as ``custom``,
    sorted; the gold flag is left out, and no custom field gives the hash kept before."""
    values = {"question": "Is it red?", "reference_answer": "no"}
    shas = ["a" * 64]
    extra = {"subset": "hard", "meta": {"tags": ["x"], "level": 2}}
    payload = json.dumps(
        {
            "custom": extra,
            "fields": {k: values.get(k) for k in services.LABEL_FIELDS},
            "media": shas,
        },
        sort_keys=True,
        ensure_ascii=False,
    )
    expected = hashlib.sha256(payload.encode("utf-8")).hexdigest()
    assert services.sample_content_hash(values, shas, extra) == expected
    assert services.sample_content_hash(values, shas, {**extra, "gold": True}) == expected
    plain = services.sample_content_hash(values, shas)
    assert services.sample_content_hash(values, shas, {"gold": True}) == plain != expected
    changed = {**extra, "meta": {"tags": ["y"], "level": 2}}
    assert services.sample_content_hash(values, shas, changed) != expected
