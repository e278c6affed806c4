"""The leaderboard's kept aggregates: counts and sums per model, judge (or the ensemble),
group and stratum, recomputed by a worker whenever the verdicts, responses or samples behind
them change (``judging.leaderboard_store``), so that pages read a few hundred rows whatever
the dataset's size.

``LeaderboardChange`` rows are written by triggers (migration 0009) whenever a verdict on a
response is written or a sample's status or strata change: one row per dataset and changing
transaction. The recomputation deletes, in its own statement, exactly the rows its snapshot
saw, so a change it could not see stays marked until the next one.
"""

from __future__ import annotations

from django.db import models
from django.utils.translation import gettext_lazy as _

from annotation.models import Dataset
from core.computations import StoredComputation
from judging.models.judges import Judge


class LeaderboardComputation(StoredComputation):
    """The state of a dataset's leaderboard aggregates and of their next recomputation."""

    dataset = models.OneToOneField(Dataset, on_delete=models.CASCADE, related_name="+")

    class Meta:
        verbose_name = _("leaderboard computation")
        verbose_name_plural = _("leaderboard computations")

    def __str__(self) -> str:
        return f"leaderboard of dataset {self.dataset_id}"


class LeaderboardCell(models.Model):
    """The responses of one model scored by one judge (or the ensemble) in one group, in one
    value of one breakdown dimension (category, format or scenario): their number and sums.
    Summed over one dimension's values they give the group's figures; over the groups, the
    overall ones."""

    # Indexed by leaderboard_cell_scope_idx.
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+", db_index=False)
    # None: the verdicts of every prompt version (NULL, as no version's name can be).
    prompt_version = models.CharField(  # noqa: DJ001
        _("prompt version"), max_length=20, null=True
    )
    # None: the ensemble (a response's judges averaged).
    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, null=True, related_name="+")
    model_name = models.CharField(_("model"), max_length=200)
    group = models.CharField(_("group"), max_length=50)
    dimension = models.CharField(_("dimension"), max_length=20)
    value = models.CharField(_("value"), max_length=100)
    n = models.PositiveIntegerField(_("responses"))
    score_sum = models.FloatField(_("sum of scores"))
    # For the score's interval (judging.stats.score_interval); None: computed before
    # migration 0011 kept them, until the next recomputation.
    score_squares = models.FloatField(_("sum of squared scores"), null=True)
    score_binary_n = models.PositiveIntegerField(_("responses scoring 0 or 1"), null=True)
    answer_n = models.PositiveIntegerField(_("responses with an answer score"))
    answer_sum = models.FloatField(_("sum of answer scores"))
    reasoning_n = models.PositiveIntegerField(_("responses with a reasoning score"))
    reasoning_sum = models.FloatField(_("sum of reasoning scores"))

    class Meta:
        verbose_name = _("leaderboard cell")
        verbose_name_plural = _("leaderboard cells")
        indexes = [
            models.Index(fields=["dataset", "prompt_version"], name="leaderboard_cell_scope_idx")
        ]

    def __str__(self) -> str:
        return f"{self.model_name} / {self.judge_id or 'ensemble'} / {self.group}"


class LeaderboardVersion(models.Model):
    """A prompt version the dataset's scoring verdicts were made with (None: all of them),
    and how many scored responses on rejected or taken-down samples it leaves out."""

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="+")
    prompt_version = models.CharField(  # noqa: DJ001
        _("prompt version"), max_length=20, null=True
    )
    left_out_responses = models.PositiveIntegerField(_("responses left out"))

    class Meta:
        verbose_name = _("leaderboard prompt version")
        verbose_name_plural = _("leaderboard prompt versions")

    def __str__(self) -> str:
        return self.prompt_version or "*"


class LeaderboardChange(models.Model):
    """A transaction changed what a dataset's leaderboard counts (written by triggers)."""

    # No constraint: the trigger may write while the dataset itself is being deleted (the
    # sweep drops such marks); indexed by the unique constraint.
    dataset = models.ForeignKey(
        Dataset,
        on_delete=models.DO_NOTHING,
        db_constraint=False,
        db_index=False,
        related_name="+",
    )
    xact = models.BigIntegerField(_("transaction"))
    since = models.DateTimeField(_("since"))

    class Meta:
        verbose_name = _("leaderboard change")
        verbose_name_plural = _("leaderboard changes")
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "xact"], name="uniq_leaderboard_change_per_xact"
            )
        ]

    def __str__(self) -> str:
        return f"dataset {self.dataset_id} changed since {self.since}"
