"""Datasets, their taxonomy presets and their members."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils.translation import gettext as _

from annotation.extensions import MembershipChange, dataset_has_reviews, membership_changed
from annotation.models import (
    MEMBER_ROLE_FIELDS,
    Dataset,
    DatasetKind,
    DatasetMembership,
    ImportJob,
    ImportSourceKind,
    Snapshot,
    TaxonomyTerm,
)
from annotation.presets import PRESETS
from core.roles import ANNOTATOR, AUDITOR

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


# Long enough for a full guide; a page of the workbench stays light.
MAX_INSTRUCTIONS_CHARS = 20_000


def dataset_set_instructions(*, dataset: Dataset, instructions: str) -> Dataset:
    """Set the instructions (Markdown) that the workbench shows reviewers above each sample."""
    instructions = instructions.strip()
    if len(instructions) > MAX_INSTRUCTIONS_CHARS:
        raise ValidationError(
            _("Instructions may hold at most %(max)s characters.")
            % {"max": MAX_INSTRUCTIONS_CHARS},
            code="instructions_too_long",
        )
    Dataset.objects.filter(pk=dataset.pk).update(instructions=instructions)
    dataset.instructions = instructions
    return dataset


MEMBER_ROLES = (ANNOTATOR, AUDITOR)


def member_roles(membership: DatasetMembership) -> frozenset[str]:
    """The roles a membership holds in its dataset."""
    return frozenset(
        role for role, field in MEMBER_ROLE_FIELDS.items() if getattr(membership, field)
    )


def _role_flags(roles: frozenset[str]) -> dict[str, bool]:
    return {field: role in roles for role, field in MEMBER_ROLE_FIELDS.items()}


def _checked_roles(roles: Iterable[str]) -> frozenset[str]:
    wanted = frozenset(roles)
    unknown = wanted - set(MEMBER_ROLES)
    if unknown:
        raise ValidationError(
            _("A member is an annotator or an auditor, not “%(role)s”.")
            % {"role": ", ".join(sorted(unknown))},
            code="unknown_role",
        )
    return wanted


def _site_member_roles(user: User) -> frozenset[str]:
    """The member roles a user holds site-wide (their role groups), read afresh."""
    names = user.groups.filter(name__in=MEMBER_ROLES).values_list("name", flat=True)
    return frozenset(names)


def _site_roles_follow(user: User) -> None:
    """Keep the user's site-wide member roles equal to the roles they hold in their datasets.

    The role groups are what the site's role checks read before any dataset is named (the
    review and audit pages, the token's roles); each dataset's own test reads its
    membership. A user without memberships keeps the roles they were given.
    """
    flags = list(
        DatasetMembership.objects.filter(user=user).values_list(*MEMBER_ROLE_FIELDS.values())
    )
    if not flags:
        return
    held = {role for i, role in enumerate(MEMBER_ROLE_FIELDS) if any(row[i] for row in flags)}
    for role in MEMBER_ROLES:
        group = Group.objects.get_or_create(name=role)[0]
        if role in held:
            user.groups.add(group)
        else:
            user.groups.remove(group)
    if hasattr(user, "_role_cache"):
        del user._role_cache


@transaction.atomic
def dataset_add_member(
    *,
    dataset: Dataset,
    user: User,
    roles: Iterable[str] | None = None,
    actor: User | None = None,
) -> DatasetMembership:
    """Make ``user`` a member of ``dataset`` in ``roles`` (annotator, auditor or both; None:
    the member roles they hold site-wide). A member already there keeps their membership, in
    ``roles`` when given."""
    wanted = _site_member_roles(user) if roles is None else _checked_roles(roles)
    membership, created = DatasetMembership.objects.select_for_update().get_or_create(
        dataset=dataset, user=user, defaults=_role_flags(wanted)
    )
    before = None if created else member_roles(membership)
    if not created:
        if roles is None or before == wanted:
            return membership
        for field, value in _role_flags(wanted).items():
            setattr(membership, field, value)
        membership.save(update_fields=list(MEMBER_ROLE_FIELDS.values()))
    _site_roles_follow(user)
    membership_changed(MembershipChange(dataset, user, actor, before, wanted))
    return membership


@transaction.atomic
def dataset_member_set_roles(
    *, dataset: Dataset, user: User, roles: Iterable[str], actor: User | None = None
) -> DatasetMembership:
    """Change the roles a member holds in one dataset (at least one)."""
    wanted = _checked_roles(roles)
    if not wanted:
        raise ValidationError(
            _("Give a member at least one role in the dataset, or remove them."), code="no_role"
        )
    if not DatasetMembership.objects.filter(dataset=dataset, user=user).exists():
        raise ValidationError(
            _("“%(username)s” is not a member of this dataset.")
            % {"username": user.get_username()},
            code="not_member",
        )
    return dataset_add_member(dataset=dataset, user=user, roles=wanted, actor=actor)


@transaction.atomic
def dataset_remove_member(*, dataset: Dataset, user: User, actor: User | None = None) -> None:
    membership = (
        DatasetMembership.objects.select_for_update().filter(dataset=dataset, user=user).first()
    )
    if membership is None:
        return
    before = member_roles(membership)
    membership.delete()
    _site_roles_follow(user)
    membership_changed(MembershipChange(dataset, user, actor, before, None))


def dataset_add_member_by_username(
    *,
    dataset: Dataset,
    username: str,
    roles: Iterable[str] | None = None,
    actor: User | None = None,
) -> DatasetMembership:
    """Add an annotator or auditor to a dataset by username, refusing with a reason a name
    that is unknown or deactivated, a user who is neither (when ``roles`` is not given), or
    one who is already a member."""
    username = username.strip()
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ValidationError(
            _("There is no user named “%(username)s”.") % {"username": username},
            code="unknown_user",
        )
    if not user.is_active:
        raise ValidationError(
            _("“%(username)s” is deactivated; reactivate them on the People page first.")
            % {"username": username},
            code="inactive_user",
        )
    wanted = _site_member_roles(user) if roles is None else _checked_roles(roles)
    if not wanted:
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
    return dataset_add_member(dataset=dataset, user=user, roles=wanted, actor=actor)


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
