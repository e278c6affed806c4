"""The sample list's layouts: the columns and page size each person keeps for a dataset, and
the saved views (a filter, a sort, columns and a page size under a name) leads share."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from annotation.models.datasets import Dataset

# The longest filter and sort a view keeps, as a query string.
QUERY_MAX = 2000
NAME_MAX = 100


class SampleListLayout(models.Model):
    """The columns and page size a person last chose for a dataset's sample list.

    Kept per dataset, not site-wide: datasets of different kinds show different fields (the
    question and category of an image-question sample, the utterance and safety category of a
    tri-modal one), and the saved views that carry columns are per dataset too.
    """

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="sample_list_layouts"
    )
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    columns = models.JSONField(_("columns"), default=list, blank=True)
    page_size = models.PositiveSmallIntegerField(_("page size"), default=50)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "dataset"], name="uniq_sample_list_layout"),
        ]
        verbose_name = _("sample list layout")
        verbose_name_plural = _("sample list layouts")

    def __str__(self) -> str:
        return f"{self.user_id} in {self.dataset_id}"


class SavedView(models.Model):
    """A named view of a dataset's sample list: the filter and sort (the list's query string,
    kept as it was given), the columns and the page size. Private views are their owner's
    alone; shared ones every lead of the dataset opens. Only the owner changes or deletes it."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="saved_views")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="saved_views"
    )
    name = models.CharField(_("name"), max_length=NAME_MAX)
    shared = models.BooleanField(
        _("shared"), default=False, help_text=_("Every lead of the dataset may open it.")
    )
    query = models.CharField(_("filter and sort"), max_length=QUERY_MAX, blank=True, default="")
    columns = models.JSONField(_("columns"), default=list, blank=True)
    page_size = models.PositiveSmallIntegerField(_("page size"), default=50)
    created_at = models.DateTimeField(_("created at"), auto_now_add=True)
    updated_at = models.DateTimeField(_("updated at"), auto_now=True)

    class Meta:
        ordering = ["name", "pk"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "owner", "name"], name="uniq_saved_view_name"
            ),
        ]
        indexes = [
            models.Index(fields=["dataset", "shared"], name="saved_view_dataset_shared_idx"),
        ]
        verbose_name = _("saved view")
        verbose_name_plural = _("saved views")

    def __str__(self) -> str:
        return f"{self.dataset_id}:{self.name}"
