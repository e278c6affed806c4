"""Samples, their media assets and links, the typed notes other apps keep on them, and their
history."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.models.datasets import Dataset


class MediaKind(models.TextChoices):
    IMAGE = "image", _("Image")
    AUDIO = "audio", _("Audio")


class MediaAsset(models.Model):
    """A media file stored once per content (sha256), with what a worker derived from it."""

    sha256 = models.CharField(_("sha256"), max_length=64, unique=True)
    kind = models.CharField(_("kind"), max_length=16, choices=MediaKind.choices)
    file = models.FileField(_("file"), max_length=300)
    mime_type = models.CharField(_("MIME type"), max_length=100)
    size_bytes = models.BigIntegerField(_("size in bytes"))
    width = models.PositiveIntegerField(_("width"), null=True, blank=True)
    height = models.PositiveIntegerField(_("height"), null=True, blank=True)
    duration_seconds = models.FloatField(_("duration in seconds"), null=True, blank=True)
    sample_rate = models.PositiveIntegerField(_("sample rate"), null=True, blank=True)
    channels = models.PositiveSmallIntegerField(_("channels"), null=True, blank=True)
    source_url = models.URLField(_("source URL"), max_length=1000, blank=True, default="")
    licence = models.CharField(_("licence"), max_length=200, blank=True, default="")
    # An image's perceptual hash (annotation.duplicates.phash_of), set when the import decodes
    # it; null for audio and for images stored before hashes were kept (manage.py
    # duplicate_keys_refresh fills them in).
    phash = models.BigIntegerField(_("perceptual hash"), null=True, blank=True)
    thumbnail = models.FileField(_("thumbnail"), max_length=300, blank=True, default="")
    # Only for images larger than the workbench's viewer needs; others are shown as they are.
    display = models.FileField(_("display image"), max_length=300, blank=True, default="")
    peaks = models.JSONField(_("waveform peaks"), null=True, blank=True)
    derived_at = models.DateTimeField(_("derived at"), null=True, blank=True)
    derive_error = models.TextField(_("derivation error"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        verbose_name = _("media asset")
        verbose_name_plural = _("media assets")
        indexes = [
            models.Index(
                fields=["kind"], name="media_underived_idx", condition=Q(derived_at__isnull=True)
            )
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.sha256[:12]}"


class SampleStatus(models.TextChoices):
    IMPORTED = "imported", _("Imported")
    PENDING_REVIEW = "pending_review", _("Pending review")
    IN_REVIEW = "in_review", _("In review")
    VERIFIED = "verified", _("Verified")
    REJECTED = "rejected", _("Rejected")
    NEEDS_ADJUDICATION = "needs_adjudication", _("Needs adjudication")
    REMOVED = "removed", _("Removed on takedown")


class Pipeline(models.TextChoices):
    NONE = "", _("Unknown")
    MLLM_GENERATED = "mllm_generated", _("MLLM-generated")
    HUMAN_DESIGNED = "human_designed", _("Human-designed")
    AUTO_SHUFFLE = "auto_shuffle", _("Auto-shuffle")


class SafetyLabel(models.TextChoices):
    NONE = "", _("Not applicable")
    SAFE = "safe", _("Safe")
    UNSAFE = "unsafe", _("Unsafe")


class Sample(models.Model):
    """One benchmark item: an image-question pair or a tri-modal safety scenario."""

    # No index of its own: every index of the table but two leads with the dataset.
    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="samples", db_index=False
    )
    external_id = models.CharField(_("external id"), max_length=200)
    question = models.TextField(_("question"), blank=True, default="")
    question_format = models.CharField(_("question format"), max_length=50, blank=True, default="")
    options = models.JSONField(_("options"), default=list, blank=True)
    reference_answer = models.TextField(_("reference answer"), blank=True, default="")
    explanation = models.TextField(_("explanation"), blank=True, default="")
    answerability_group = models.CharField(
        _("answerability group"), max_length=50, blank=True, default=""
    )
    # Set by judging, only for a sample whose data gives no group: the group it inferred from
    # the reference answer (a refusal is out-of-context). Empty when the group is the data's.
    inferred_answerability = models.CharField(
        _("answerability inferred from the reference answer"),
        max_length=50,
        blank=True,
        default="",
    )
    category_code = models.CharField(_("category"), max_length=100, blank=True, default="")
    scenario = models.CharField(_("scenario"), max_length=100, blank=True, default="")
    split = models.CharField(_("split"), max_length=100, blank=True, default="")
    # Provenance.
    pipeline = models.CharField(
        _("pipeline"), max_length=32, choices=Pipeline.choices, blank=True, default=""
    )
    source_dataset = models.CharField(_("source dataset"), max_length=200, blank=True, default="")
    generator_models = models.JSONField(_("generator models"), default=list, blank=True)
    status = models.CharField(
        _("status"), max_length=32, choices=SampleStatus.choices, default=SampleStatus.IMPORTED
    )
    # Tri-modal fields.
    image_description = models.TextField(_("image description"), blank=True, default="")
    audio_description = models.TextField(_("audio description"), blank=True, default="")
    speech_utterance = models.TextField(_("speech utterance"), blank=True, default="")
    safety_label = models.CharField(
        _("safety label"), max_length=16, choices=SafetyLabel.choices, blank=True, default=""
    )
    safety_category = models.CharField(_("safety category"), max_length=100, blank=True, default="")
    safety_subcategory = models.CharField(
        _("safety subcategory"), max_length=100, blank=True, default=""
    )
    predicate = models.JSONField(_("predicate conditions"), default=list, blank=True)
    pair = models.OneToOneField(
        "self",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("paired sample"),
    )
    # Set by judging from the latest answerability votes: true when a judge disagrees with the
    # sample's label (the review queue serves these first), false when every judge that voted
    # agrees, null while no judge has voted (never judged, or every call abstained or failed).
    judges_disagree = models.BooleanField(_("judges disagree"), null=True, default=None)
    priority = models.IntegerField(_("priority"), default=0)
    media: models.ManyToManyField[MediaAsset, SampleMedia] = models.ManyToManyField(
        MediaAsset, through="SampleMedia", related_name="samples"
    )
    content_hash = models.CharField(_("content hash"), max_length=64, blank=True, default="")
    # The key of the normalised question (or speech utterance) that near-duplicates share
    # (annotation.duplicates.text_key); null when the sample has no text.
    question_key = models.BigIntegerField(_("question key"), null=True, blank=True)
    revision = models.PositiveIntegerField(_("revision"), default=1)
    extra = models.JSONField(_("extra"), default=dict, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["dataset_id", "id"]
        verbose_name = _("sample")
        verbose_name_plural = _("samples")
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "external_id"], name="uniq_sample_external_id"
            ),
            models.CheckConstraint(
                condition=Q(status__in=SampleStatus.values), name="sample_status_valid"
            ),
            models.CheckConstraint(
                condition=Q(safety_label__in=SafetyLabel.values), name="sample_safety_label_valid"
            ),
        ]
        indexes = [
            # The sample list's sorts (annotation.sample_filters.ORDERINGS), each tie-broken by
            # id: a page is one range scan, by its cursor or from either end (core/keyset.py).
            # They serve the status, category and last-change filters too. By external id the
            # unique constraint serves (one row per value: nothing left to break ties).
            models.Index(fields=["dataset", "id"], name="sample_dataset_id_idx"),
            models.Index(fields=["dataset", "status", "id"], name="sample_dataset_status_id_idx"),
            models.Index(
                fields=["dataset", "category_code", "id"], name="sample_dataset_category_id_idx"
            ),
            models.Index(
                fields=["dataset", "priority", "id"], name="sample_dataset_priority_id_idx"
            ),
            models.Index(
                fields=["dataset", "updated_at", "id"], name="sample_dataset_updated_id_idx"
            ),
            models.Index(
                fields=["dataset", "question_key"],
                name="sample_question_key_idx",
                condition=Q(question_key__isnull=False),
            ),
            # The sample list's filters (annotation.sample_filters), one index each.
            models.Index(fields=["dataset", "question_format"], name="sample_dataset_format_idx"),
            models.Index(fields=["dataset", "scenario"], name="sample_dataset_scenario_idx"),
            models.Index(fields=["dataset", "safety_category"], name="sample_dataset_safety_idx"),
            models.Index(fields=["dataset", "judges_disagree"], name="sample_dataset_judges_idx"),
            models.Index(fields=["dataset", "created_at"], name="sample_dataset_created_idx"),
            # The search's trigram index (pg_trgm, on UPPER() of the four columns it reads) is
            # annotation 0028's SQL: Django writes such an index only with
            # django.contrib.postgres installed as an app.
        ]

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.external_id}"


class MediaRole(models.TextChoices):
    IMAGE = "image", _("Image")
    AUDIO = "audio", _("Audio")


class SampleMedia(models.Model):
    """Links a sample to its images (several in multi-image variants) and its audio."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="media_links")
    asset = models.ForeignKey(MediaAsset, on_delete=models.PROTECT, related_name="sample_links")
    role = models.CharField(max_length=16, choices=MediaRole.choices)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["sample_id", "role", "position"]
        constraints = [
            models.UniqueConstraint(
                fields=["sample", "role", "position"], name="uniq_sample_media_slot"
            )
        ]
        verbose_name = _("sample media")
        verbose_name_plural = _("sample media")

    def __str__(self) -> str:
        return f"{self.sample_id} {self.role}#{self.position}"


class NoteKey(models.TextChoices):
    """What another app may note about a sample; each key has one owner that writes it."""

    JUDGE_VOTES = "judge_votes", _("judge votes")
    REVIEW_SUMMARY = "review_summary", _("review summary")


class SampleNote(models.Model):
    """A typed note that review or judging keeps on a sample (never a label).

    One row per (sample, key), written by a single upsert, so two apps noting different keys
    at the same moment never overwrite each other.
    """

    sample = models.ForeignKey(
        Sample, on_delete=models.CASCADE, related_name="notes", verbose_name=_("sample")
    )
    key = models.CharField(_("key"), max_length=40, choices=NoteKey.choices)
    value = models.JSONField(_("value"), null=True, blank=True)
    updated_at = models.DateTimeField(_("updated at"))

    class Meta:
        verbose_name = _("sample note")
        verbose_name_plural = _("sample notes")
        constraints = [models.UniqueConstraint(fields=["sample", "key"], name="uniq_sample_note")]

    def __str__(self) -> str:
        return f"{self.sample_id}: {self.key}"


class ChangeSource(models.TextChoices):
    CREATE = "create", _("Created")
    IMPORT = "import", _("Import")
    REVIEW = "review", _("Review")
    ADJUDICATION = "adjudication", _("Adjudication")
    EDIT = "edit", _("Edit")
    TAKEDOWN = "takedown", _("Takedown")
    STATUS = "status", _("Status change")


class SampleRevision(models.Model):
    """One change to a sample's labels: who, when, before, after and why."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField(_("revision"))
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("changed by"),
    )
    changed_at = models.DateTimeField(_("changed at"), auto_now_add=True)
    source = models.CharField(_("source"), max_length=32, choices=ChangeSource.choices)
    before = models.JSONField(_("before"), default=dict)
    after = models.JSONField(_("after"), default=dict)
    reason = models.TextField(_("reason"), blank=True, default="")

    class Meta:
        ordering = ["sample_id", "number", "id"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "number"], name="uniq_revision_number")
        ]
        verbose_name = _("sample revision")
        verbose_name_plural = _("sample revisions")

    def __str__(self) -> str:
        return f"{self.sample_id} r{self.number}"


class DuplicatePair(models.Model):
    """Two samples of a dataset that look like the same item: the same normalised question
    and a near-same first image (annotation.duplicates). Found by the import that brought the
    later one (``job``) or by ``manage.py duplicate_keys_refresh`` (no job)."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    original = models.ForeignKey(
        Sample, on_delete=models.CASCADE, related_name="+", verbose_name=_("first seen")
    )
    sample = models.ForeignKey(
        Sample, on_delete=models.CASCADE, related_name="+", verbose_name=_("possible duplicate")
    )
    # Bits apart of the two images' perceptual hashes; null when neither has an image.
    image_distance = models.PositiveSmallIntegerField(_("image distance"), null=True, blank=True)
    job = models.ForeignKey(
        "annotation.ImportJob",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="duplicate_pairs",
        verbose_name=_("import job"),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["dataset", "sample", "original"]
        verbose_name = _("possible duplicate")
        verbose_name_plural = _("possible duplicates")
        constraints = [
            models.UniqueConstraint(fields=["sample", "original"], name="uniq_duplicate_pair"),
            models.CheckConstraint(
                condition=~Q(sample=models.F("original")), name="duplicate_pair_distinct"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.original_id} ~ {self.sample_id}"
