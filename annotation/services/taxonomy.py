"""A dataset's taxonomy as a lead edits it: add, rename and retire terms, load a preset's terms.

Terms are never deleted here: a sample may hold any term, so a term that should no longer be
chosen is retired (kept on the samples that hold it, no longer offered or accepted as a new
value).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from annotation.models import Dataset, DatasetKind, TaxonomyTerm, TermKind, term_kinds
from annotation.presets import PRESETS
from annotation.services.datasets import preset_terms_copy

# The kind of term a term of each kind hangs under, when it has a parent.
PARENT_KIND: dict[str, str] = {
    TermKind.CATEGORY: TermKind.GROUP,
    TermKind.SAFETY_SUBCATEGORY: TermKind.SAFETY_CATEGORY,
}


@transaction.atomic
def taxonomy_term_add(
    *,
    dataset: Dataset,
    kind: str,
    code: str,
    name: str,
    name_zh: str = "",
    parent_code: str = "",
) -> TaxonomyTerm:
    """Add a term at the end of its kind; a code already used for the kind, or a parent that
    is not a term of the parent kind, is refused with a reason."""
    code, name, parent_code = code.strip(), name.strip(), parent_code.strip()
    if kind not in TermKind.values:
        raise ValidationError(_("Unknown kind of term “%(kind)s”.") % {"kind": kind}, code="kind")
    if kind not in term_kinds(dataset.kind):
        raise ValidationError(
            _("A %(dataset_kind)s dataset has no %(kind)s terms (its kinds: %(kinds)s).")
            % {
                "dataset_kind": dataset.get_kind_display(),
                "kind": TermKind(kind).label,
                "kinds": ", ".join(str(k.label) for k in term_kinds(dataset.kind)),
            },
            code="kind",
        )
    if not code or not name:
        raise ValidationError(_("A term needs a code and a name."), code="required")
    terms = TaxonomyTerm.objects.select_for_update().filter(dataset=dataset, kind=kind)
    if terms.filter(code=code).exists():
        raise ValidationError(
            _("The %(kind)s “%(code)s” already exists.")
            % {"kind": TermKind(kind).label, "code": code},
            code="duplicate",
        )
    parent_kind = PARENT_KIND.get(kind)
    if parent_code:
        if parent_kind is None:
            raise ValidationError(
                _("A %(kind)s has no parent.") % {"kind": TermKind(kind).label}, code="parent"
            )
        if not TaxonomyTerm.objects.filter(
            dataset=dataset, kind=parent_kind, code=parent_code
        ).exists():
            raise ValidationError(
                _("The parent “%(parent)s” is not a %(kind)s of this dataset.")
                % {"parent": parent_code, "kind": TermKind(parent_kind).label},
                code="parent",
            )
    last = terms.aggregate(last=Max("position"))["last"]
    return TaxonomyTerm.objects.create(
        dataset=dataset,
        kind=kind,
        code=code,
        name=name,
        name_zh=name_zh.strip(),
        parent_code=parent_code,
        position=0 if last is None else last + 1,
    )


def taxonomy_term_rename(*, term: TaxonomyTerm, name: str, name_zh: str) -> TaxonomyTerm:
    """Change a term's label (English and Chinese); its code, which samples hold, stays."""
    name = name.strip()
    if not name:
        raise ValidationError(_("A term needs a name."), code="required")
    term.name, term.name_zh = name, name_zh.strip()
    term.save(update_fields=["name", "name_zh"])
    return term


def taxonomy_term_set_retired(*, term: TaxonomyTerm, retired: bool) -> TaxonomyTerm:
    """Retire a term (or bring it back); samples that hold it keep it either way."""
    term.retired = retired
    term.save(update_fields=["retired"])
    return term


@transaction.atomic
def taxonomy_load_preset(*, dataset: Dataset, preset: str) -> int:
    """Copy a preset's terms of every kind the dataset has no terms for; the number copied.

    Kinds the dataset already has terms for are left alone, so loading never mixes two
    vocabularies in one field.
    """
    if preset not in PRESETS:
        raise ValidationError(
            _("Unknown taxonomy preset “%(preset)s” (known: %(known)s).")
            % {"preset": preset, "known": ", ".join(sorted(PRESETS))},
            code="bad_preset",
        )
    if PRESETS[preset].kind != dataset.kind:
        raise ValidationError(
            _("%(preset)s is a preset for %(kind)s datasets.")
            % {"preset": PRESETS[preset].name, "kind": DatasetKind(PRESETS[preset].kind).label},
            code="bad_preset",
        )
    Dataset.objects.select_for_update().filter(pk=dataset.pk).first()
    held = set(TaxonomyTerm.objects.filter(dataset=dataset).values_list("kind", flat=True))
    kinds = {term.kind for term in PRESETS[preset].terms} - held
    if not kinds:
        raise ValidationError(
            _(
                "The dataset already has terms of every kind that %(preset)s holds; nothing "
                "was loaded."
            )
            % {"preset": PRESETS[preset].name},
            code="nothing_to_load",
        )
    copied = preset_terms_copy(dataset=dataset, preset=preset, kinds=kinds)
    if not dataset.preset:
        Dataset.objects.filter(pk=dataset.pk).update(preset=preset)
        dataset.preset = preset
    return copied
