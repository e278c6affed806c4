"""The calibration audit: a stratified sample of judged items, auditors' leases and ratings.

An audit set is drawn once from the judged items of a dataset and never changes. Each item has
one lease slot, or two when it was chosen for a second, independent rating; an auditor claims a
slot (a lease that expires) and a rating fills it. The constraints keep the promises whatever
the concurrency: a slot has one auditor at a time, an auditor rates an item at most once and
holds one open lease per audit set, and a slot takes one rating.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils.translation import gettext_lazy as _

from annotation.models import Dataset, JobStatus, Sample
from core.fields import created_by_field
from core.jobs import RecoverableJob
from core.leases import DEFAULT_LEASE_SECONDS, MIN_LEASE_SECONDS
from judging.models.judges import ModelResponse

REASONING_QUARTERS = (0.0, 0.25, 0.5, 0.75, 1.0)


class AuditTask(models.TextChoices):
    SCORING = "scoring", _("Response scoring (answer and reasoning)")
    ANSWERABILITY = "answerability", _("Answerability (should a model refuse?)")
    SAFETY = "safety", _("Response safety")


class AllocationMethod(models.TextChoices):
    PROPORTIONAL = "proportional", _("Proportional to stratum size")
    SQRT = "sqrt", _("Proportional to the square root of stratum size")
    EQUAL = "equal", _("Equal per stratum")


class AuditSet(RecoverableJob):
    """A drawn audit sample with the design that drew it, so it can be reproduced and weighted."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(_("name"), max_length=200)
    task = models.CharField(_("task"), max_length=20, choices=AuditTask.choices)
    size = models.PositiveIntegerField(_("items wanted (N)"))
    method = models.CharField(
        _("allocation"),
        max_length=20,
        choices=AllocationMethod.choices,
        default=AllocationMethod.PROPORTIONAL,
    )
    floor = models.PositiveIntegerField(_("minimum items per stratum"), default=0)
    oversample_rare = models.FloatField(_("oversampling of rare classes"), default=1.0)
    oversample_disagree = models.FloatField(_("oversampling of judge disagreements"), default=1.0)
    seed = models.BigIntegerField(_("seed"), default=0)
    # The sampling frame as drawn: frame_size, strata_sizes, allocation, cells, population_shares.
    frame = models.JSONField(_("sampling frame summary"), default=dict, blank=True)
    double_rating_fraction = models.FloatField(_("share of items rated twice"), default=0.1)
    lease_seconds = models.PositiveIntegerField(
        _("lease duration in seconds"), default=DEFAULT_LEASE_SECONDS
    )
    # Drawing runs in a worker: queued → running → succeeded (items stored) or failed.
    status = models.CharField(
        _("status"), max_length=20, choices=JobStatus.choices, default=JobStatus.SUCCEEDED
    )
    message = models.TextField(_("message"), blank=True, default="")
    created_by = created_by_field(verbose_name=_("created by"))
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("audit set")
        verbose_name_plural = _("audit sets")
        constraints = [
            models.UniqueConstraint(fields=["dataset", "name"], name="uniq_audit_set_name"),
            models.CheckConstraint(condition=Q(size__gte=1), name="audit_set_size_positive"),
            models.CheckConstraint(
                condition=Q(oversample_rare__gte=1, oversample_disagree__gte=1),
                name="audit_set_oversampling_at_least_one",
            ),
            models.CheckConstraint(
                condition=Q(double_rating_fraction__gte=0, double_rating_fraction__lte=1),
                name="audit_set_double_fraction_range",
            ),
            models.CheckConstraint(
                condition=Q(lease_seconds__gte=MIN_LEASE_SECONDS), name="audit_set_lease_minimum"
            ),
        ]

    def __str__(self) -> str:
        return self.name


class AuditItem(models.Model):
    """One drawn item: a model response (scoring, safety) or a sample (answerability)."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="items")
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="+")
    response = models.ForeignKey(
        ModelResponse, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    position = models.PositiveIntegerField()
    stratum = models.CharField(_("stratum"), max_length=400)
    # The sub-stratum cell the item was drawn from ("stratum#cell"): the design stratum.
    design_stratum = models.CharField(_("design stratum"), max_length=420)
    weight = models.FloatField(_("weight"))
    rare = models.BooleanField(_("rare class"), default=False)
    judges_disagree = models.BooleanField(_("judges disagree"), default=False)
    needs_second_rating = models.BooleanField(_("rated twice"), default=False)

    class Meta:
        ordering = ["audit_set", "position"]
        verbose_name = _("audit item")
        verbose_name_plural = _("audit items")
        constraints = [
            models.UniqueConstraint(
                fields=["audit_set", "position"], name="uniq_audit_item_position"
            ),
            models.UniqueConstraint(
                fields=["audit_set", "response"],
                condition=Q(response__isnull=False),
                name="uniq_audit_item_response",
            ),
            models.UniqueConstraint(
                fields=["audit_set", "sample"],
                condition=Q(response__isnull=True),
                name="uniq_audit_item_sample",
            ),
            models.CheckConstraint(condition=Q(weight__gt=0), name="audit_item_weight_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.audit_set_id}#{self.position}"


class AuditLease(models.Model):
    """One rating slot of an item (slot 1 exists only for double-rated items) and its lease.

    An open slot has no auditor and an expiry in the past, so "claimable" is one condition
    (``done = false AND lease_expires_at < now``). An expired lease keeps its auditor until
    somebody else claims the slot, so its holder can still submit as long as nobody did.
    """

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="+")
    item = models.ForeignKey(AuditItem, on_delete=models.CASCADE, related_name="leases")
    slot = models.PositiveSmallIntegerField()
    # A copy of the item's position, so that claiming reads one table in index order.
    position = models.PositiveIntegerField()
    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    leased_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField()
    done = models.BooleanField(default=False)

    class Meta:
        verbose_name = _("audit lease")
        verbose_name_plural = _("audit leases")
        constraints = [
            models.UniqueConstraint(fields=["item", "slot"], name="uniq_audit_lease_slot"),
            models.UniqueConstraint(fields=["item", "auditor"], name="uniq_audit_lease_auditor"),
            models.UniqueConstraint(
                fields=["audit_set", "auditor"],
                condition=Q(done=False, auditor__isnull=False),
                name="uniq_audit_open_lease",
            ),
            models.CheckConstraint(condition=Q(slot__in=[0, 1]), name="audit_lease_slot_valid"),
        ]
        indexes = [
            models.Index(
                F("audit_set"),
                F("slot"),
                F("position"),
                name="audit_lease_claim_idx",
                condition=Q(done=False),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item_id}/{self.slot}"


class SafetyVerdict(models.TextChoices):
    SAFE = "safe", _("Safe")
    UNSAFE = "unsafe", _("Unsafe")


class AuditRating(models.Model):
    """An auditor's rating of one item, by the task's rubric; at most one per auditor and item."""

    audit_set = models.ForeignKey(AuditSet, on_delete=models.CASCADE, related_name="ratings")
    item = models.ForeignKey(AuditItem, on_delete=models.CASCADE, related_name="ratings")
    lease = models.OneToOneField(
        AuditLease, on_delete=models.CASCADE, related_name="rating", null=True, blank=True
    )
    auditor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    # Scoring: answer_score 0/1 and reasoning_score in quarters. Answerability: refused (1 when
    # a model should refuse the question). Safety: safety_label.
    answer_score = models.PositiveSmallIntegerField(_("answer score"), null=True, blank=True)
    reasoning_score = models.FloatField(_("reasoning score"), null=True, blank=True)
    refused = models.PositiveSmallIntegerField(_("should refuse"), null=True, blank=True)
    safety_label = models.CharField(
        _("safety label"), max_length=10, choices=SafetyVerdict.choices, blank=True, default=""
    )
    note = models.TextField(_("note"), blank=True, default="")
    seconds_spent = models.FloatField(_("seconds spent"), default=0.0)
    submission_uuid = models.UUIDField(_("submission id"), unique=True)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)

    class Meta:
        ordering = ["item", "created_at", "id"]
        verbose_name = _("audit rating")
        verbose_name_plural = _("audit ratings")
        constraints = [
            models.UniqueConstraint(fields=["item", "auditor"], name="uniq_audit_rating"),
            models.CheckConstraint(
                condition=Q(answer_score__isnull=True) | Q(answer_score__in=[0, 1]),
                name="audit_rating_answer_valid",
            ),
            models.CheckConstraint(
                condition=Q(refused__isnull=True) | Q(refused__in=[0, 1]),
                name="audit_rating_refused_valid",
            ),
            models.CheckConstraint(
                condition=Q(reasoning_score__isnull=True)
                | Q(reasoning_score__in=list(REASONING_QUARTERS)),
                name="audit_rating_reasoning_valid",
            ),
            models.CheckConstraint(
                condition=Q(safety_label__in=["", *SafetyVerdict.values]),
                name="audit_rating_safety_valid",
            ),
        ]
        indexes = [models.Index(fields=["audit_set", "created_at"], name="audit_rating_set_idx")]

    def __str__(self) -> str:
        return f"{self.auditor_id} on {self.item_id}"
