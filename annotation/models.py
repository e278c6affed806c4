"""The data of a benchmark and its life: datasets, taxonomies, samples, media and history.

One model serves all three benchmarks (MMOOC, MCBench, MMT-Bench): the taxonomy is data held by
each dataset, the tri-modal fields are empty on image-question samples and vice versa.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.db.models import Q
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from core.jobs import JobStatus as JobStatus  # re-exported: the apps name job states from here
from core.jobs import RecoverableJob


class DatasetKind(models.TextChoices):
    IMAGE_QUESTION = "image_question", _("Image-question")
    TRIMODAL = "trimodal", _("Tri-modal (image, audio, speech)")


class Dataset(models.Model):
    name = models.CharField(_("name"), max_length=200, unique=True)
    kind = models.CharField(_("kind"), max_length=32, choices=DatasetKind.choices)
    version = models.CharField(_("version"), max_length=50, blank=True, default="1.0")
    description = models.TextField(_("description"), blank=True, default="")
    preset = models.CharField(_("taxonomy preset"), max_length=50, blank=True, default="")
    auto_send_to_review = models.BooleanField(
        _("send new imports to review automatically"),
        default=False,
        help_text=_("At the end of each import, imported samples go to review."),
    )
    archived = models.BooleanField(
        _("archived"),
        default=False,
        help_text=_("Hidden from the dataset list by default; nothing can be imported into it."),
    )
    members: models.ManyToManyField[AbstractUser, DatasetMembership] = models.ManyToManyField(
        settings.AUTH_USER_MODEL,
        through="DatasetMembership",
        related_name="datasets",
        blank=True,
        verbose_name=_("members"),
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        verbose_name=_("created by"),
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = _("dataset")
        verbose_name_plural = _("datasets")
        permissions = [
            ("import_samples", _("Can import samples and responses")),
            ("configure_dataset", _("Can configure datasets and review settings")),
            ("export_dataset", _("Can export snapshots")),
        ]

    def __str__(self) -> str:
        return self.name


class DatasetMembership(models.Model):
    """Access to a dataset: annotators and auditors see only the datasets they belong to."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    added_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["dataset", "user"], name="uniq_dataset_member")
        ]
        verbose_name = _("dataset membership")
        verbose_name_plural = _("dataset memberships")

    def __str__(self) -> str:
        return f"{self.user} in {self.dataset}"


class TermKind(models.TextChoices):
    GROUP = "group", _("Answerability group")
    CATEGORY = "category", _("Category")
    FORMAT = "format", _("Question format")
    SCENARIO = "scenario", _("Scenario")
    SAFETY_CATEGORY = "safety_category", _("Safety category")
    SAFETY_SUBCATEGORY = "safety_subcategory", _("Safety subcategory")


class TaxonomyTerm(models.Model):
    """One term of a dataset's taxonomy, in English and Simplified Chinese.

    ``parent_code`` ties a category to its answerability group and a safety subcategory to its
    safety category.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="terms")
    kind = models.CharField(_("kind"), max_length=32, choices=TermKind.choices)
    code = models.CharField(_("code"), max_length=100)
    name = models.CharField(_("name"), max_length=200)
    name_zh = models.CharField(_("Chinese name"), max_length=200, blank=True, default="")
    description = models.TextField(_("description"), blank=True, default="")
    description_zh = models.TextField(_("Chinese description"), blank=True, default="")
    expected_behaviour = models.CharField(
        _("expected behaviour"), max_length=300, blank=True, default=""
    )
    expected_behaviour_zh = models.CharField(
        _("Chinese expected behaviour"), max_length=300, blank=True, default=""
    )
    parent_code = models.CharField(_("parent code"), max_length=100, blank=True, default="")
    position = models.PositiveIntegerField(_("position"), default=0)
    retired = models.BooleanField(
        _("retired"),
        default=False,
        help_text=_("Kept on the samples that hold it, but no longer offered."),
    )

    class Meta:
        ordering = ["dataset", "kind", "position", "code"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "kind", "code"], name="uniq_term_code")
        ]
        verbose_name = _("taxonomy term")
        verbose_name_plural = _("taxonomy terms")

    def __str__(self) -> str:
        return f"{self.kind}:{self.code}"

    @property
    def display_name(self) -> str:
        """The name in the active language, falling back to English."""
        if (get_language() or "").startswith("zh") and self.name_zh:
            return self.name_zh
        return self.name

    @property
    def display_description(self) -> str:
        if (get_language() or "").startswith("zh") and self.description_zh:
            return self.description_zh
        return self.description


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

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="samples")
    external_id = models.CharField(_("external id"), max_length=200)
    question = models.TextField(_("question"), blank=True, default="")
    question_format = models.CharField(_("question format"), max_length=50, blank=True, default="")
    options = models.JSONField(_("options"), default=list, blank=True)
    reference_answer = models.TextField(_("reference answer"), blank=True, default="")
    explanation = models.TextField(_("explanation"), blank=True, default="")
    answerability_group = models.CharField(
        _("answerability group"), max_length=50, blank=True, default=""
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
    # Set by judging when the judges disagree; the review queue serves these first.
    judges_disagree = models.BooleanField(_("judges disagree"), default=False)
    priority = models.IntegerField(_("priority"), default=0)
    media: models.ManyToManyField[MediaAsset, SampleMedia] = models.ManyToManyField(
        MediaAsset, through="SampleMedia", related_name="samples"
    )
    content_hash = models.CharField(_("content hash"), max_length=64, blank=True, default="")
    revision = models.PositiveIntegerField(_("revision"), default=1)
    extra = models.JSONField(_("extra"), default=dict, blank=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["dataset", "id"]
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
            models.Index(fields=["dataset", "status"], name="sample_dataset_status_idx"),
            models.Index(fields=["dataset", "category_code"], name="sample_dataset_category_idx"),
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
        ordering = ["sample", "role", "position"]
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
        ordering = ["sample", "number", "id"]
        constraints = [
            models.UniqueConstraint(fields=["sample", "number"], name="uniq_revision_number")
        ]
        verbose_name = _("sample revision")
        verbose_name_plural = _("sample revisions")

    def __str__(self) -> str:
        return f"{self.sample_id} r{self.number}"


class ImportJobStatus(models.TextChoices):
    """JobStatus, plus the end of an import that rejected some rows but not all."""

    QUEUED = JobStatus.QUEUED.value, JobStatus.QUEUED.label
    RUNNING = JobStatus.RUNNING.value, JobStatus.RUNNING.label
    SUCCEEDED = JobStatus.SUCCEEDED.value, JobStatus.SUCCEEDED.label
    SUCCEEDED_WITH_ERRORS = "succeeded_with_errors", _("Finished with errors")
    FAILED = JobStatus.FAILED.value, JobStatus.FAILED.label
    CANCELLED = JobStatus.CANCELLED.value, JobStatus.CANCELLED.label


class ImportKind(models.TextChoices):
    """What an import brings in: candidate samples, or (for the judging app) evaluated models'
    responses and verdicts made elsewhere. Each kind is run by its own task (see
    ``annotation.imports.kinds``) and shares the job's page, progress, errors and recovery."""

    SAMPLES = "samples", _("Samples")
    RESPONSES = "responses", _("Model responses")
    VERDICTS = "verdicts", _("Verdicts")


class ImportSourceKind(models.TextChoices):
    UPLOAD = "upload", _("Uploaded file")
    SERVER_PATH = "server_path", _("Path on the server")
    S3_PREFIX = "s3_prefix", _("S3 prefix")


class ImportJob(RecoverableJob):
    """One import of candidate samples into a dataset, run by a worker, with live progress."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="import_jobs")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    kind = models.CharField(
        _("kind"), max_length=20, choices=ImportKind.choices, default=ImportKind.SAMPLES
    )
    source_kind = models.CharField(
        _("source kind"), max_length=20, choices=ImportSourceKind.choices
    )
    # An uploaded file's storage name, a server path, or s3://bucket/prefix.
    source = models.CharField(_("source"), max_length=1000)
    source_name = models.CharField(_("file name"), max_length=300, blank=True, default="")
    format = models.CharField(_("format"), max_length=30)
    options = models.JSONField(_("options"), default=dict, blank=True)
    # Set only by the import_samples command (an operator): its server path may lie outside
    # IMPORT_SERVER_ROOTS. Every other server path is checked, file by file, at run time too.
    trusted = models.BooleanField(_("reads any server path"), default=False)
    status = models.CharField(
        _("status"), max_length=32, choices=ImportJobStatus.choices, default=ImportJobStatus.QUEUED
    )
    total_rows = models.PositiveIntegerField(_("rows in total"), null=True, blank=True)
    rows_done = models.PositiveIntegerField(_("rows done"), default=0)
    imported = models.PositiveIntegerField(_("imported"), default=0)
    unchanged = models.PositiveIntegerField(_("unchanged"), default=0)
    updated = models.PositiveIntegerField(_("updated"), default=0)
    rejected = models.PositiveIntegerField(_("rejected"), default=0)
    message = models.TextField(_("message"), blank=True, default="")
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    started_at = models.DateTimeField(_("started at"), null=True, blank=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["dataset", "kind", "-created_at"], name="import_job_kind_idx")
        ]
        verbose_name = _("import job")
        verbose_name_plural = _("import jobs")

    def __str__(self) -> str:
        return f"import {self.pk} into {self.dataset_id}"


class ImportRowError(models.Model):
    """A row an import rejected, with its line or index and a reason a person understands."""

    job = models.ForeignKey(ImportJob, on_delete=models.CASCADE, related_name="row_errors")
    row = models.PositiveIntegerField(_("row"))
    external_id = models.CharField(_("external id"), max_length=200, blank=True, default="")
    message = models.TextField(_("message"))

    class Meta:
        ordering = ["job", "row", "id"]
        verbose_name = _("import row error")
        verbose_name_plural = _("import row errors")

    def __str__(self) -> str:
        return f"row {self.row}: {self.message[:60]}"


class ImportedVersion(models.Model):
    """A sample as its source last gave it: what a re-import compares an incoming row with.

    ``values`` holds the label fields and ``media`` the [role, position, sha256] slots of that
    row, ``content_hash`` their hash. ``conflicts`` lists the fields that the source changed
    after a reviewer had corrected them: {"field", "reviewed", "imported", "previous", "job"};
    the sample keeps the reviewed value until adjudication.
    """

    sample = models.OneToOneField(Sample, on_delete=models.CASCADE, related_name="imported_version")
    job = models.ForeignKey(
        ImportJob, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    content_hash = models.CharField(_("content hash"), max_length=64)
    values = models.JSONField(_("imported values"), default=dict)
    media = models.JSONField(_("imported media"), default=list)
    conflicts = models.JSONField(_("conflicts with review"), default=list, blank=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("imported version")
        verbose_name_plural = _("imported versions")

    def __str__(self) -> str:
        return f"{self.sample_id} as imported"


class Snapshot(RecoverableJob):
    """A named, immutable export of a dataset at a moment, built by a worker."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="snapshots")
    name = models.CharField(_("name"), max_length=200)
    format = models.CharField(_("format"), max_length=20)
    filter = models.JSONField(_("filter"), default=dict, blank=True)
    status = models.CharField(
        _("status"), max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED
    )
    total = models.PositiveIntegerField(_("samples in total"), null=True, blank=True)
    done = models.PositiveIntegerField(_("samples done"), default=0)
    file = models.FileField(_("file"), max_length=500, blank=True, default="")
    manifest = models.JSONField(_("manifest"), default=dict, blank=True)
    previous = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    message = models.TextField(_("message"), blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="uniq_snapshot_name")
        ]
        verbose_name = _("snapshot")
        verbose_name_plural = _("snapshots")

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.name}"

    @property
    def file_names(self) -> dict[str, str]:
        """The stored files of a finished snapshot: the release and its manifest."""
        if self.status != JobStatus.SUCCEEDED or not self.file:
            return {}
        name = self.file.name
        return {"release": name, "manifest": name.rsplit("/", 1)[0] + "/manifest.json"}

    @property
    def left_out(self) -> int:
        """Selected samples the format had no place for (the MMOOC layout holds only the OOC
        and shifted in-context groups)."""
        notes = (self.manifest or {}).get("notes") or {}
        return int(notes.get("skipped_not_ooc_or_ic") or 0)


class SnapshotEntry(models.Model):
    """One sample as it went into a snapshot: what the next snapshot's diff compares with."""

    snapshot = models.ForeignKey(Snapshot, on_delete=models.CASCADE, related_name="entries")
    sample = models.ForeignKey(Sample, on_delete=models.SET_NULL, null=True, related_name="+")
    external_id = models.CharField(max_length=200)
    content_hash = models.CharField(max_length=64)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["snapshot", "external_id"], name="uniq_snapshot_entry")
        ]
        verbose_name = _("snapshot entry")
        verbose_name_plural = _("snapshot entries")

    def __str__(self) -> str:
        return f"{self.snapshot_id}:{self.external_id}"


class SampleBulkJob(RecoverableJob):
    """A bulk action on more samples than a web request should move (the sample list's
    filter and chosen ids as they were asked), run by a worker in one transaction."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="bulk_jobs")
    action = models.CharField(_("action"), max_length=32)
    # The sample list's filter (its query string), the chosen ids (null: every sample
    # the filter matches), the priority and the reason.
    params = models.JSONField(_("parameters"), default=dict, blank=True)
    status = models.CharField(
        _("status"), max_length=20, choices=JobStatus.choices, default=JobStatus.QUEUED
    )
    selected = models.PositiveIntegerField(_("samples selected"), default=0)
    changed = models.PositiveIntegerField(_("samples changed"), default=0)
    skipped = models.PositiveIntegerField(_("samples left alone"), default=0)
    slots_opened = models.PositiveIntegerField(_("review slots opened"), default=0)
    message = models.TextField(_("message"), blank=True, default="")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    finished_at = models.DateTimeField(_("finished at"), null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        verbose_name = _("bulk action")
        verbose_name_plural = _("bulk actions")

    def __str__(self) -> str:
        return f"{self.action} on {self.dataset_id} ({self.status})"
