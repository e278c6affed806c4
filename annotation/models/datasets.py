"""Datasets, their members and their taxonomy terms."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import AbstractUser
from django.db import models
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _

from core.fields import created_by_field
from core.roles import ANNOTATOR, AUDITOR


class DatasetKind(models.TextChoices):
    IMAGE_QUESTION = "image_question", _("Image-question")
    TRIMODAL = "trimodal", _("Tri-modal (image, audio, speech)")


class Dataset(models.Model):
    name = models.CharField(_("name"), max_length=200, unique=True)
    kind = models.CharField(_("kind"), max_length=32, choices=DatasetKind.choices)
    version = models.CharField(_("version"), max_length=50, blank=True, default="1.0")
    description = models.TextField(_("description"), blank=True, default="")
    preset = models.CharField(_("taxonomy preset"), max_length=50, blank=True, default="")
    instructions = models.TextField(
        _("instructions for reviewers"),
        blank=True,
        default="",
        help_text=_("Markdown, shown above the sample in the review workbench."),
    )
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
    created_by = created_by_field(verbose_name=_("created by"))
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


# The flag of a membership that grants each role a member may hold in a dataset.
MEMBER_ROLE_FIELDS = {ANNOTATOR: "annotates", AUDITOR: "audits"}


class DatasetMembership(models.Model):
    """Access to a dataset: annotators and auditors see only the datasets they belong to, and
    work in each in the roles their membership holds (an annotator in one dataset may be an
    auditor in another, or both in one). Leads need no membership: they see every dataset."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    annotates = models.BooleanField(
        _("annotator"), default=False, help_text=_("Reviews the dataset's samples.")
    )
    audits = models.BooleanField(
        _("auditor"), default=False, help_text=_("Rates the dataset's audit items.")
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


# The kinds of term each kind of dataset labels its samples with (review/editing.py's fields):
# an image-question dataset has no safety taxonomy, a tri-modal one no answerability groups.
TERM_KINDS: dict[str, tuple[TermKind, ...]] = {
    DatasetKind.IMAGE_QUESTION: (
        TermKind.GROUP,
        TermKind.CATEGORY,
        TermKind.FORMAT,
        TermKind.SCENARIO,
    ),
    DatasetKind.TRIMODAL: (TermKind.SAFETY_CATEGORY, TermKind.SAFETY_SUBCATEGORY),
}


def term_kinds(dataset_kind: str) -> tuple[TermKind, ...]:
    """The kinds of term a dataset of this kind has (every kind for a kind not listed)."""
    return TERM_KINDS.get(dataset_kind, tuple(TermKind))


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
