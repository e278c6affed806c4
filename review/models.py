"""The human review of samples: per-dataset settings, queue slots and leases, reviews, drafts,
skips, comments and adjudications.

The queue is k slot rows per sample. A reviewer claims one slot (a lease that expires); a review
fills its slot. The constraints make the queue's promises hold whatever the concurrency: a slot
has one reviewer at a time, a reviewer holds one slot per sample and one open lease per dataset,
and a slot takes one review, so no sample gets more than k reviews.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils.translation import gettext_lazy as _

from annotation.models import Dataset, Sample
from core.computations import StoredComputation
from core.fields import created_by_field
from core.leases import DEFAULT_LEASE_SECONDS, MIN_LEASE_SECONDS


class ReviewSettings(models.Model):
    """How a dataset is reviewed; a dataset without a row uses the defaults."""

    DEFAULT_OVERLAP = 2
    DEFAULT_GOLD_RATE = 0.05
    DEFAULT_MIN_GOLD_ACCURACY = 0.7
    DEFAULT_MIN_GOLD_ITEMS = 20

    dataset = models.OneToOneField(
        Dataset, on_delete=models.CASCADE, related_name="review_settings"
    )
    overlap = models.PositiveSmallIntegerField(_("reviews per sample"), default=DEFAULT_OVERLAP)
    blind = models.BooleanField(
        _("blind review"),
        default=True,
        help_text=_("Reviewers never see each other's verdicts."),
    )
    show_judge_hints = models.BooleanField(_("show judge votes to reviewers"), default=False)
    lease_seconds = models.PositiveIntegerField(
        _("lease duration in seconds"), default=DEFAULT_LEASE_SECONDS
    )
    gold_rate = models.FloatField(
        _("gold item rate"),
        default=DEFAULT_GOLD_RATE,
        help_text=_("The share of claims that serve a gold item instead (0 turns gold off)."),
    )
    gold_feedback = models.BooleanField(
        _("feedback after gold items"),
        default=False,
        help_text=_(
            "After answering a gold item, a reviewer sees whether they matched, the expected "
            "answer and its explanation."
        ),
    )
    # A reviewer who answered at least ``min_gold_items`` gold items with an accuracy below
    # ``min_gold_accuracy`` is flagged to the lead, who may exclude them from consensus.
    min_gold_accuracy = models.FloatField(
        _("minimum gold accuracy"), default=DEFAULT_MIN_GOLD_ACCURACY
    )
    min_gold_items = models.PositiveIntegerField(
        _("gold items before flagging"), default=DEFAULT_MIN_GOLD_ITEMS
    )
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        verbose_name = _("review settings")
        verbose_name_plural = _("review settings")
        constraints = [
            models.CheckConstraint(
                condition=Q(overlap__gte=1, overlap__lte=10), name="review_overlap_range"
            ),
            models.CheckConstraint(
                condition=Q(lease_seconds__gte=MIN_LEASE_SECONDS), name="review_lease_minimum"
            ),
            models.CheckConstraint(
                condition=Q(gold_rate__gte=0, gold_rate__lte=0.5), name="review_gold_rate_range"
            ),
            models.CheckConstraint(
                condition=Q(min_gold_accuracy__gte=0, min_gold_accuracy__lte=1),
                name="review_min_gold_accuracy_range",
            ),
            models.CheckConstraint(
                condition=Q(min_gold_items__gte=1), name="review_min_gold_items_minimum"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.dataset_id}: k={self.overlap}"


class Slot(models.Model):
    """One of the k places for a review of a sample; claimable while not done and not leased.

    An open slot has no reviewer and a lease expiry in the past, so "claimable" is one
    condition (``done = false AND lease_expires_at < now``) that the partial index serves.
    An expired lease keeps its reviewer until someone else claims the slot, so its holder can
    still submit as long as nobody did.

    A sample reviewed again (a re-import changed it after it was settled) gets k new slots in
    the next ``round``; each round is reviewed and settled on its own, earlier ones are kept.

    A ``gold`` slot is made at claim time for one reviewer on a gold item (``review.gold``): it
    is leased like the others but never claimable by anyone else, never counts towards k, and
    the queue's sync, counts and settlement leave it alone. Done, it says the reviewer saw
    that gold item (answered, skipped or released), so it is never served to them again.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="+")
    round = models.PositiveSmallIntegerField(_("review round"), default=0)
    position = models.PositiveSmallIntegerField()
    # Copies of the sample's queue order, so that claiming reads one table in index order.
    judges_disagree = models.BooleanField(default=False)
    priority = models.IntegerField(default=0)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="+",
        db_index=False,  # slot_reviewer_history_idx leads with it
    )
    leased_at = models.DateTimeField(null=True, blank=True)
    lease_expires_at = models.DateTimeField()
    done = models.BooleanField(default=False)
    gold = models.BooleanField(default=False)
    # Kept by review.queue.assignments: the sample has an open assignment, so only its
    # assignees are served this slot.
    reserved = models.BooleanField(default=False, db_default=False)

    class Meta:
        verbose_name = _("queue slot")
        verbose_name_plural = _("queue slots")
        constraints = [
            models.UniqueConstraint(
                fields=["sample", "round", "position"],
                condition=Q(gold=False),
                name="uniq_slot_position",
            ),
            # Nobody holds or fills two slots of one sample in one round.
            models.UniqueConstraint(
                fields=["sample", "round", "reviewer"],
                condition=Q(gold=False),
                name="uniq_slot_reviewer",
            ),
            # Each reviewer is served each gold item at most once.
            models.UniqueConstraint(
                fields=["sample", "reviewer"], condition=Q(gold=True), name="uniq_gold_slot"
            ),
            # One open lease per reviewer and dataset: a second claim returns the first.
            models.UniqueConstraint(
                fields=["dataset", "reviewer"],
                condition=Q(done=False, reviewer__isnull=False),
                name="uniq_open_lease",
            ),
        ]
        indexes = [
            # Matches the claim's ORDER BY; done slots drop out of it. It carries every column
            # the claim tests, so that the claim walks it without reading the table until the
            # slot it takes: a veteran walks past the open slots of every sample they reviewed.
            # Reserved slots (assigned samples) are a range of their own that the walk of
            # everyone else never enters.
            models.Index(
                fields=[
                    "dataset",
                    "reserved",
                    "-judges_disagree",
                    "-priority",
                    "sample",
                    "position",
                ],
                include=["id", "round", "lease_expires_at", "gold"],
                name="slot_claim_order_idx",
                condition=Q(done=False),
            ),
            # A reviewer's slots in a dataset, read from the index alone: the samples a claim
            # passes over (and the foreign key's index).
            models.Index(
                fields=["reviewer", "dataset", "sample", "round"], name="slot_reviewer_history_idx"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sample_id}#{self.position}"


class Decision(models.TextChoices):
    ACCEPT = "accept", _("Accept")
    REJECT = "reject", _("Reject")


class RejectReason(models.TextChoices):
    NONE = "", _("None")
    INVALID = "invalid", _("Invalid")
    DUPLICATE = "duplicate", _("Duplicate")
    OFFENSIVE = "offensive", _("Offensive")
    LICENCE = "licence", _("Licence problem")


class Submission(models.Model):
    """What a reviewer's submission holds, whether it is a review or a gold item's answer."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="+")
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    client_uuid = models.UUIDField(_("submission id"), unique=True)
    decision = models.CharField(_("decision"), max_length=16, choices=Decision.choices)
    reject_reason = models.CharField(
        _("reject reason"), max_length=16, choices=RejectReason.choices, blank=True, default=""
    )
    # The reviewer's edits: the reviewable fields they changed, with their new values ({} for an
    # accept that confirms the sample as it stands). Fields nobody touched are never written.
    values = models.JSONField(_("values"), default=dict, blank=True)
    clarity = models.PositiveSmallIntegerField(_("clarity"), null=True, blank=True)
    naturalness = models.PositiveSmallIntegerField(_("naturalness"), null=True, blank=True)
    image_aligned = models.BooleanField(_("image matches its description"), null=True)
    audio_aligned = models.BooleanField(_("audio matches its description"), null=True)
    note = models.TextField(_("note"), blank=True, default="")
    seconds_spent = models.FloatField(_("seconds spent"), default=0)

    class Meta:
        abstract = True


class Review(Submission):
    """One reviewer's verdict on a sample: the values they confirm or correct, or a rejection."""

    slot = models.OneToOneField(Slot, on_delete=models.CASCADE, related_name="review")
    round = models.PositiveSmallIntegerField(_("review round"), default=0)
    leased_at = models.DateTimeField(_("leased at"), null=True, blank=True)
    created_at = models.DateTimeField(_("submitted at"), auto_now_add=True)

    class Meta:
        ordering = ["sample_id", "created_at", "id"]
        verbose_name = _("review")
        verbose_name_plural = _("reviews")
        constraints = [
            models.UniqueConstraint(
                fields=["sample", "round", "reviewer"], name="uniq_review_reviewer"
            ),
            models.CheckConstraint(
                condition=Q(decision__in=Decision.values), name="review_decision_valid"
            ),
        ]
        indexes = [
            models.Index(fields=["dataset", "created_at"], name="review_dataset_time_idx"),
            # The sample list's decision filter (review.selectors.review_decision_exists).
            models.Index(fields=["dataset", "decision", "sample"], name="review_decision_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer_id} on {self.sample_id}: {self.decision}"


class Draft(models.Model):
    """The unsaved state of a reviewer's form, kept on the server so a reload loses nothing."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    payload = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = _("draft")
        verbose_name_plural = _("drafts")
        constraints = [
            models.UniqueConstraint(fields=["sample", "reviewer"], name="uniq_draft_reviewer")
        ]

    def __str__(self) -> str:
        return f"draft {self.reviewer_id} on {self.sample_id}"


class Assignment(models.Model):
    """A lead gave a sample to a member of its dataset to review: it is served to them before
    any other sample and, while it is ``open``, to none of the dataset's other reviewers.

    An assignment is open while its assignee may review in the dataset (a member with the
    annotator role), has not been served the sample in its current review round (holds no slot
    of it) and has not skipped it; a sample's open slots are ``reserved`` while it has an open
    assignment (``review.queue.assignments``)."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        related_name="+",
        verbose_name=_("assignee"),
        db_index=False,  # assignment_open_idx and assignment_reviewer_idx lead with it
    )
    open = models.BooleanField(_("open"), default=True)
    assigned_by = created_by_field(verbose_name=_("assigned by"))
    created_at = models.DateTimeField(_("assigned at"), auto_now_add=True)

    class Meta:
        verbose_name = _("assignment")
        verbose_name_plural = _("assignments")
        constraints = [
            models.UniqueConstraint(fields=["sample", "reviewer"], name="uniq_assignment")
        ]
        indexes = [
            # The claim's first place to look: the reviewer's open assignments in a dataset.
            models.Index(
                fields=["reviewer", "dataset", "sample"],
                condition=Q(open=True),
                name="assignment_open_idx",
            ),
            models.Index(fields=["dataset", "reviewer"], name="assignment_reviewer_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.sample_id} to {self.reviewer_id}"


class Skip(models.Model):
    """A reviewer set a sample aside with a reason; it comes back when they ask for skipped ones.

    A skipped gold item (``gold``) is kept only for the reviewer's skip rate: it is never
    served to them again, nor listed among their skipped samples."""

    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="+")
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    reason = models.CharField(_("reason"), max_length=500)
    gold = models.BooleanField(_("gold item"), default=False)
    created_at = models.DateTimeField(_("skipped at"), auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("skip")
        verbose_name_plural = _("skips")
        constraints = [
            models.UniqueConstraint(fields=["reviewer", "sample"], name="uniq_skip_reviewer")
        ]
        indexes = [models.Index(fields=["dataset", "reviewer"], name="skip_dataset_reviewer_idx")]

    def __str__(self) -> str:
        return f"{self.reviewer_id} skipped {self.sample_id}"


class Comment(models.Model):
    sample = models.ForeignKey(Sample, on_delete=models.CASCADE, related_name="+")
    author = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    text = models.TextField(_("comment"))
    created_at = models.DateTimeField(_("written at"), auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("comment")
        verbose_name_plural = _("comments")
        indexes = [models.Index(fields=["sample", "created_at"], name="comment_sample_idx")]

    def __str__(self) -> str:
        return f"{self.author_id} on {self.sample_id}"


class Outcome(models.Model):
    """How a sample's review ended: the status it reached, whether the reviewers agreed."""

    sample = models.OneToOneField(Sample, on_delete=models.CASCADE, related_name="+")
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    status = models.CharField(_("status"), max_length=32)
    agreement = models.BooleanField(_("reviewers agreed"))
    adjudicated = models.BooleanField(_("adjudicated"), default=False)
    adjudicated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    note = models.TextField(_("note"), blank=True, default="")
    decided_at = models.DateTimeField(_("decided at"), auto_now=True)

    class Meta:
        verbose_name = _("review outcome")
        verbose_name_plural = _("review outcomes")
        indexes = [models.Index(fields=["dataset", "status"], name="outcome_dataset_status_idx")]

    def __str__(self) -> str:
        return f"{self.sample_id}: {self.status}"


class GoldItem(models.Model):
    """A settled sample a lead vouches for, with the answer expected of a reviewer.

    ``expected`` holds ``decision`` (accept or reject), for a rejection its ``reject_reason``
    when one is required, and for an acceptance the reviewable fields checked (all of them
    unless the lead named some). Served to reviewers at the dataset's ``gold_rate`` in place of
    a normal claim; an attention check is a gold item whose answer is stated in its question.
    """

    sample = models.OneToOneField(Sample, on_delete=models.CASCADE, related_name="+")
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    expected = models.JSONField(_("expected answer"), default=dict)
    explanation = models.TextField(_("explanation"), blank=True, default="")
    attention_check = models.BooleanField(_("attention check"), default=False)
    created_by = created_by_field()
    created_at = models.DateTimeField(_("marked at"), auto_now_add=True)

    class Meta:
        ordering = ["dataset", "sample"]
        verbose_name = _("gold item")
        verbose_name_plural = _("gold items")
        indexes = [models.Index(fields=["dataset", "sample"], name="gold_dataset_idx")]

    def __str__(self) -> str:
        return f"gold {self.sample_id}"


class GoldAnswer(Submission):
    """A reviewer's answer to a gold item, held against the expected one field by field.

    The same fields as a review (so the workbench and the API answer alike), plus ``answer``
    (what the reviewer's verdict amounts to, in the shape of ``GoldItem.expected``) and
    ``matches`` ({key of expected: matched}); ``matched`` when every key matched.
    """

    gold_item = models.ForeignKey(GoldItem, on_delete=models.CASCADE, related_name="answers")
    slot = models.OneToOneField(Slot, on_delete=models.CASCADE, related_name="gold_answer")
    answer = models.JSONField(_("answer"), default=dict)
    matches = models.JSONField(_("matches"), default=dict)
    matched = models.BooleanField(_("matched"))
    created_at = models.DateTimeField(_("submitted at"), auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        verbose_name = _("gold answer")
        verbose_name_plural = _("gold answers")
        constraints = [
            models.UniqueConstraint(fields=["gold_item", "reviewer"], name="uniq_gold_answer"),
        ]
        indexes = [
            models.Index(fields=["dataset", "reviewer"], name="gold_answer_reviewer_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.reviewer_id} on gold {self.sample_id}: {self.matched}"


class ReviewerExclusion(models.Model):
    """A lead left a reviewer's reviews of a dataset out of its consensus.

    Their reviews are kept (removing the exclusion counts them again); the samples they
    reviewed are settled again without them, and go back to review when fewer than k
    reviews remain. Reviews they submit while excluded do not count either.
    """

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+"
    )
    excluded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    reason = models.TextField(_("reason"), blank=True, default="")
    created_at = models.DateTimeField(_("excluded at"), auto_now_add=True)

    class Meta:
        ordering = ["dataset", "created_at", "id"]
        verbose_name = _("reviewer exclusion")
        verbose_name_plural = _("reviewer exclusions")
        constraints = [
            models.UniqueConstraint(fields=["dataset", "reviewer"], name="uniq_reviewer_exclusion")
        ]

    def __str__(self) -> str:
        return f"{self.reviewer_id} excluded from {self.dataset_id}"


class ReviewerQualityComputation(StoredComputation):
    """The Reviewers page's figures of a dataset, computed by a worker and stored (one row per
    dataset; ``core.computations``). ``result`` holds every reviewer's figures (each reader
    sees the rows their role allows); ``requested_state`` the state of the data (counts and
    latest changes of reviews, skips, gold answers, outcomes, exclusions, samples) the last
    request saw, so that a page opened on unchanged data queues nothing."""

    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, related_name="+")
    requested_state = models.JSONField(_("state of the data requested"), default=dict)

    class Meta:
        verbose_name = _("reviewer quality computation")
        verbose_name_plural = _("reviewer quality computations")

    def __str__(self) -> str:
        return f"reviewer quality of dataset {self.dataset_id}"
