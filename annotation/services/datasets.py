"""Datasets, their taxonomy presets and their members."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.models import Dataset, DatasetKind, DatasetMembership, TaxonomyTerm
from annotation.presets import PRESETS

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
            for position, term in enumerate(PRESETS[preset].terms)
        )
    return dataset


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
