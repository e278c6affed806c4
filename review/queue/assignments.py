"""Samples assigned to chosen annotators: served to them before any other sample and, while one
of them can still take it, to nobody else.

The choice made here is the one Label Studio Enterprise makes ("assign to annotators": the
tasks are seen by their assignees only): an assigned sample is *reserved*, not just preferred.
An assignment (``review.models.Assignment``) is open while its assignee may review in the
dataset (an active member with the annotator role), has not been served the sample in its
current review round (holds no slot of it) and has not skipped it; a sample's open slots are
``reserved`` while it has an open assignment. A reserved slot is served only by the first
place the claim looks (the reviewer's open assignments, ``review.queue.statements``), never by
the walk of the queue everyone else takes, so a sample whose assignees have all been served it,
skipped it, left the dataset or lost its annotator role is anyone's again: nothing is stranded.

The claim keeps both flags as it serves (in its own statement, or ``SERVED`` for a reservation
taken); everything else (assigning, unassigning, a skip, a released lease, a change of members,
a new review round) recomputes them from the rows with :func:`assignments_refresh`, which is
also the repair after two assignees of one sample were served it at the same instant (each
claim then sees the other's assignment still open and leaves the sample reserved) and after an
assignee's account was deactivated: every change of the queue (``queue_sync``) runs it for the
whole dataset.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils.translation import gettext as _
from psycopg import sql

from annotation.extensions import MembershipChange
from annotation.models import Dataset, DatasetMembership, Sample
from review.models import Assignment
from review.queue import statements

if TYPE_CHECKING:
    from django.contrib.auth.models import User

# Assignees per bulk assignment: a lead's choice of people, not a roster.
MAX_ASSIGNEES = 50

_TABLES = {
    "assignment": sql.Identifier("review_assignment"),
    "slot": sql.Identifier("review_slot"),
    "skip": sql.Identifier("review_skip"),
    "user": sql.Identifier("auth_user"),  # the site keeps Django's user model
}

# The dataset's assignments (of the samples ``%(samples)s``, all when NULL; of the reviewer
# ``%(reviewer)s``, all when NULL) opened or closed as their rows say; then the open slots of
# those samples (of the samples named, of every reserved slot when nothing is named) reserved
# when their sample has an open assignment, counting the new state of those just computed.
_REFRESH = sql.SQL("""
WITH truth AS (
    SELECT a.id, a.sample_id, (
        u.is_active
        AND annotation_dataset_visible(a.dataset_id, a.reviewer_id, false, 'annotator')
        AND NOT EXISTS (
            SELECT 1 FROM {slot} s
            WHERE s.sample_id = a.sample_id AND s.reviewer_id = a.reviewer_id AND NOT s.gold
              AND s.round = (
                  SELECT max(r.round) FROM {slot} r WHERE r.sample_id = a.sample_id AND NOT r.gold
              )
        )
        AND NOT EXISTS (
            SELECT 1 FROM {skip} k
            WHERE k.sample_id = a.sample_id AND k.reviewer_id = a.reviewer_id
        )
    ) AS open
    FROM {assignment} a JOIN {user} u ON u.id = a.reviewer_id
    WHERE a.dataset_id = %(dataset)s
      AND (%(samples)s::bigint[] IS NULL OR a.sample_id = ANY(%(samples)s::bigint[]))
      AND (%(reviewer)s::integer IS NULL OR a.reviewer_id = %(reviewer)s::integer)
),
moved AS (
    UPDATE {assignment} a SET open = truth.open
    FROM truth
    WHERE a.id = truth.id AND a.open <> truth.open
    RETURNING a.id
),
wanted AS (
    SELECT s.id, (
        EXISTS (SELECT 1 FROM truth t WHERE t.sample_id = s.sample_id AND t.open)
        OR EXISTS (
            SELECT 1 FROM {assignment} o
            WHERE o.sample_id = s.sample_id AND o.open
              AND NOT EXISTS (SELECT 1 FROM truth t WHERE t.id = o.id)
        )
    ) AS reserved
    FROM {slot} s
    WHERE s.dataset_id = %(dataset)s AND NOT s.done AND NOT s.gold
      AND (
          s.sample_id = ANY(%(samples)s::bigint[])
          OR s.sample_id IN (SELECT t.sample_id FROM truth t)
          OR (%(samples)s::bigint[] IS NULL AND %(reviewer)s::integer IS NULL AND s.reserved)
      )
)
UPDATE {slot} s SET reserved = wanted.reserved
FROM wanted
WHERE s.id = wanted.id AND s.reserved <> wanted.reserved
""").format(**_TABLES)


def assignments_refresh(
    *,
    dataset_id: int,
    sample_ids: Sequence[int] | None = None,
    reviewer_id: int | None = None,
) -> None:
    """Open or close the dataset's assignments (of these samples, of this reviewer) as their
    rows say, and reserve the open slots of the samples with an open assignment (and only
    those); one statement. Without samples or reviewer it also frees every slot reserved by
    mistake (see the module's docstring)."""
    params = {
        "dataset": dataset_id,
        "samples": None if sample_ids is None else list(sample_ids),
        "reviewer": reviewer_id,
    }
    with connection.cursor() as cursor:
        cursor.execute(_REFRESH.as_string(None), params)


def assignment_served(*, slot_id: int, reviewer: User) -> None:
    """A slot was made the reviewer's lease otherwise than by the claim (a reservation taken):
    their assignment of its sample is closed, and the sample is nobody's reserve any more when
    no other open assignment of it is left; one statement."""
    with connection.cursor() as cursor:
        cursor.execute(statements.SERVED, {"taken": slot_id, "me": reviewer.pk})


def assignees_checked(*, dataset: Dataset, usernames: Iterable[str]) -> list[User]:
    """The people named, if each is an active member of the dataset with the annotator role;
    ValidationError (under ``assignees``) naming those who are not."""
    wanted = list(dict.fromkeys(name.strip() for name in usernames if name.strip()))
    if not wanted:
        raise ValidationError(
            {"assignees": _("Choose at least one annotator of this dataset.")},
            code="no_assignees",
        )
    if len(wanted) > MAX_ASSIGNEES:
        raise ValidationError(
            {"assignees": _("Assign to at most %(n)d people at once.") % {"n": MAX_ASSIGNEES}},
            code="too_many_assignees",
        )
    found = {
        m.user.get_username(): m.user
        for m in DatasetMembership.objects.filter(
            dataset=dataset,
            annotates=True,
            user__is_active=True,
            user__username__in=wanted,
        ).select_related("user")
    }
    refused = [name for name in wanted if name not in found]
    if refused:
        # The code rides on the field's error (a dict's own code is dropped): the API
        # answers 409, as the same request succeeds once they are members (core.api).
        message = _(
            "Not an annotator of this dataset: %(names)s. Add them on the dataset's "
            "Members page first."
        ) % {"names": ", ".join(refused)}
        raise ValidationError({"assignees": ValidationError(message, code="not_annotator")})
    return [found[name] for name in wanted]


@transaction.atomic
def samples_assign(
    *, dataset: Dataset, sample_ids: Sequence[int], assignees: Iterable[str], by: User | None
) -> int:
    """Assign the samples to each of the people named (active members of the dataset with the
    annotator role; ValidationError naming anyone else); an assignment already there is kept.
    Returns the number of assignments made."""
    reviewers = assignees_checked(dataset=dataset, usernames=assignees)
    mine = Sample.objects.filter(dataset=dataset, pk__in=list(sample_ids))
    sample_ids = list(mine.values_list("pk", flat=True))
    existing = Assignment.objects.filter(dataset=dataset)
    before = existing.count()
    Assignment.objects.bulk_create(
        [
            Assignment(dataset=dataset, sample_id=sample_id, reviewer=reviewer, assigned_by=by)
            for sample_id in sample_ids
            for reviewer in reviewers
        ],
        ignore_conflicts=True,
        batch_size=2000,
    )
    made = existing.count() - before
    if made:
        assignments_refresh(dataset_id=dataset.pk, sample_ids=sample_ids)
    return made


@transaction.atomic
def samples_unassign(
    *, dataset: Dataset, sample_ids: Sequence[int], assignees: Iterable[str] | None = None
) -> int:
    """Take the samples back from the people named (from everyone they were assigned to, when
    None or empty): they go back to the common queue. Returns the number of assignments
    removed."""
    assignments = Assignment.objects.filter(dataset=dataset, sample_id__in=list(sample_ids))
    names = [name.strip() for name in assignees or () if name.strip()]
    if names:
        assignments = assignments.filter(reviewer__username__in=names)
    removed, _by_model = assignments.delete()
    if removed:
        assignments_refresh(dataset_id=dataset.pk, sample_ids=sample_ids)
    return removed


def membership_changed(change: MembershipChange) -> None:
    """A member who left the dataset or lost (or regained) the annotator role: their
    assignments there close (or open again), and the samples only they could take are
    anyone's."""
    assignments_refresh(dataset_id=change.dataset.pk, reviewer_id=change.user.pk)
