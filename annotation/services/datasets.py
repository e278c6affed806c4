"""Datasets, their taxonomy presets and their members."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.extensions import dataset_has_reviews
from annotation.models import (
    Dataset,
    DatasetKind,
    DatasetMembership,
    ImportJob,
    ImportSourceKind,
    Snapshot,
    TaxonomyTerm,
)
from annotation.presets import PRESETS
from core.roles import ANNOTATOR, AUDITOR, user_roles

if TYPE_CHECKING:
    from django.contrib.auth.models import User


@transaction.atomic
def dataset_create(
    *,
    name: str,
    kind: str,
    preset: str = "",
    version: str = "1.0",
    description: str = "",
    created_by: User | None = None,
) -> Dataset:
    """Create a dataset and copy the named taxonomy preset into its terms."""
    name = name.strip()
    if not name:
        raise ValidationError(_("A dataset needs a name."), code="name_required")
    if kind not in DatasetKind.values:
        raise ValidationError(
            _("Unknown dataset kind “%(kind)s”.") % {"kind": kind}, code="bad_kind"
        )
    if preset and preset not in PRESETS:
        raise ValidationError(
            _("Unknown taxonomy preset “%(preset)s” (known: %(known)s).")
            % {"preset": preset, "known": ", ".join(sorted(PRESETS))},
            code="bad_preset",
        )
    if Dataset.objects.filter(name=name).exists():
        raise ValidationError(
            _("A dataset named “%(name)s” already exists.") % {"name": name}, code="name_taken"
        )
    dataset = Dataset.objects.create(
        name=name,
        kind=kind,
        preset=preset,
        version=version,
        description=description,
        created_by=created_by,
    )
    if preset:
        preset_terms_copy(dataset=dataset, preset=preset)
    return dataset


def preset_terms_copy(*, dataset: Dataset, preset: str, kinds: set[str] | None = None) -> int:
    """Copy a preset's terms (of the given kinds, or all) into a dataset; the number copied."""
    terms = [
        (position, term)
        for position, term in enumerate(PRESETS[preset].terms)
        if kinds is None or term.kind in kinds
    ]
    TaxonomyTerm.objects.bulk_create(
        TaxonomyTerm(
            dataset=dataset,
            kind=term.kind,
            code=term.code,
            name=term.name,
            name_zh=term.name_zh,
            description=term.description,
            description_zh=term.description_zh,
            expected_behaviour=term.expected_behaviour,
            expected_behaviour_zh=term.expected_behaviour_zh,
            parent_code=term.parent_code,
            position=position,
        )
        for position, term in terms
    )
    return len(terms)


def dataset_set_auto_send(*, dataset: Dataset, enabled: bool) -> Dataset:
    """Turn "send new imports to review automatically" on or off for a dataset."""
    Dataset.objects.filter(pk=dataset.pk).update(auto_send_to_review=enabled)
    dataset.auto_send_to_review = enabled
    return dataset


def dataset_add_member(*, dataset: Dataset, user: User) -> DatasetMembership:
    membership, _created = DatasetMembership.objects.get_or_create(dataset=dataset, user=user)
    return membership


def dataset_remove_member(*, dataset: Dataset, user: User) -> None:
    DatasetMembership.objects.filter(dataset=dataset, user=user).delete()


MEMBER_ROLES = (ANNOTATOR, AUDITOR)


def dataset_add_member_by_username(*, dataset: Dataset, username: str) -> DatasetMembership:
    """Add an annotator or auditor to a dataset by username, refusing with a reason a name
    that is unknown, a user who is neither, or one who is already a member."""
    username = username.strip()
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ValidationError(
            _("There is no user named “%(username)s”.") % {"username": username},
            code="unknown_user",
        )
    if not set(MEMBER_ROLES) & user_roles(user):
        raise ValidationError(
            _(
                "“%(username)s” is neither an annotator nor an auditor; only they are added as "
                "members (leads see every dataset)."
            )
            % {"username": username},
            code="no_member_role",
        )
    if DatasetMembership.objects.filter(dataset=dataset, user=user).exists():
        raise ValidationError(
            _("“%(username)s” is already a member of this dataset.") % {"username": username},
            code="already_member",
        )
    return dataset_add_member(dataset=dataset, user=user)


def dataset_set_archived(*, dataset: Dataset, archived: bool) -> Dataset:
    """Archive a dataset (hidden from the list, closed to imports) or bring it back."""
    Dataset.objects.filter(pk=dataset.pk).update(archived=archived)
    dataset.archived = archived
    return dataset


def dataset_deletable(*, dataset: Dataset) -> bool:
    """A dataset may be deleted only while nobody has reviewed any of its samples."""
    return not dataset_has_reviews(dataset=dataset)


@transaction.atomic
def dataset_delete(*, dataset: Dataset) -> None:
    """Delete a dataset with its samples, terms and jobs; refused once it holds reviews."""
    Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
    if not dataset_deletable(dataset=dataset):
        raise ValidationError(
            _("“%(name)s” holds reviews, so it cannot be deleted; archive it instead.")
            % {"name": dataset.name},
            code="has_reviews",
        )
    stored = [
        *ImportJob.objects.filter(dataset=dataset, source_kind=ImportSourceKind.UPLOAD).values_list(
            "source", flat=True
        ),
        *(
            name
            for snapshot in Snapshot.objects.filter(dataset=dataset)
            for name in snapshot.file_names.values()
        ),
    ]
    dataset.delete()
    # Uploaded sources and snapshot files belong to the dataset alone; media files are shared
    # by content across datasets and stay.
    transaction.on_commit(lambda: _storage_delete(stored))


def _storage_delete(names: list[str]) -> None:
    for name in names:
        if name:
            default_storage.delete(name)
