"""Taxonomy edits: add, rename, retire and restore terms; load a preset's terms."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotation import selectors, services
from annotation.models import DatasetKind, TaxonomyTerm, TermKind
from annotation.presets import PRESETS
from review.selectors import term_fields
from tests.annotation.factories import mmooc_dataset, mmooc_sample

pytestmark = pytest.mark.django_db


def test_add_term_goes_last_in_its_kind() -> None:
    """A new term takes the next position of its kind and is offered to validation."""
    dataset = mmooc_dataset()
    last = TaxonomyTerm.objects.filter(dataset=dataset, kind=TermKind.SCENARIO).count()
    term = services.taxonomy_term_add(
        dataset=dataset, kind=TermKind.SCENARIO, code=" night ", name="Night", name_zh="夜晚"
    )
    assert (term.code, term.name_zh) == ("night", "夜晚")
    assert term.position >= last
    assert "night" in selectors.taxonomy_view(dataset).scenarios


@pytest.mark.parametrize(
    ("kind", "code", "parent", "message"),
    [
        ("colour", "x", "", "Unknown kind of term “colour”."),
        (TermKind.SCENARIO, "", "", "A term needs a code and a name."),
        (TermKind.CATEGORY, "VFP", "", "The Category “VFP” already exists."),
        (TermKind.CATEGORY, "NEW", "nope", "The parent “nope” is not a Answerability group"),
        (TermKind.SCENARIO, "dusk", "x", "A Scenario has no parent."),
    ],
)
def test_add_term_refuses_bad_input_with_a_reason(
    kind: str, code: str, parent: str, message: str
) -> None:
    """A bad kind, a missing code, a duplicate code or a parent that is no term of the parent
    kind is refused with its reason, and nothing is added."""
    dataset = mmooc_dataset()
    before = TaxonomyTerm.objects.filter(dataset=dataset).count()
    with pytest.raises(ValidationError) as exc:
        services.taxonomy_term_add(
            dataset=dataset, kind=kind, code=code, name="Name", parent_code=parent
        )
    assert exc.value.messages[0].startswith(message)
    assert TaxonomyTerm.objects.filter(dataset=dataset).count() == before


def test_rename_changes_the_label_not_the_code() -> None:
    """Renaming keeps the code that samples hold; an empty name is refused."""
    dataset = mmooc_dataset()
    term = TaxonomyTerm.objects.filter(dataset=dataset, kind=TermKind.CATEGORY).first()
    assert term is not None
    code = term.code
    services.taxonomy_term_rename(term=term, name="Renamed", name_zh="改名")
    term.refresh_from_db()
    assert (term.code, term.name, term.name_zh) == (code, "Renamed", "改名")
    with pytest.raises(ValidationError):
        services.taxonomy_term_rename(term=term, name=" ", name_zh="")


def test_retired_term_stays_on_samples_but_is_no_longer_offered() -> None:
    """A retired category stays on the sample that holds it and in that sample's choices, but
    it is not offered to other samples nor accepted by validation; restoring offers it again."""
    dataset = mmooc_dataset()
    holder = mmooc_sample(dataset, category_code="VFP")
    other = mmooc_sample(dataset, category_code="MA")
    term = TaxonomyTerm.objects.get(dataset=dataset, kind=TermKind.CATEGORY, code="VFP")
    services.taxonomy_term_set_retired(term=term, retired=True)
    holder.refresh_from_db()
    assert holder.category_code == "VFP"
    assert "VFP" not in selectors.taxonomy_view(dataset).categories
    terms = list(selectors.taxonomy_terms(dataset=dataset))
    fields = ("category_code",)

    def offered(sample: object) -> set[str]:
        values = {"category_code": sample.category_code}  # type: ignore[attr-defined]
        bench = term_fields(dataset=dataset, fields=fields, values=values, terms=terms)
        return {choice.code for choice in bench["category_code"].terms}

    assert "VFP" in offered(holder)
    assert "VFP" not in offered(other)
    assert "MA" in offered(other)
    services.taxonomy_term_set_retired(term=term, retired=False)
    assert "VFP" in selectors.taxonomy_view(dataset).categories


def test_load_preset_fills_only_the_kinds_without_terms() -> None:
    """Loading a preset into a dataset with no terms copies all its terms and records the
    preset; kinds that already have terms are left alone; loading again is refused."""
    dataset = services.dataset_create(name="bare", kind=DatasetKind.IMAGE_QUESTION)
    own = services.taxonomy_term_add(
        dataset=dataset, kind=TermKind.SCENARIO, code="mine", name="Mine"
    )
    preset = PRESETS["mmooc"]
    copied = services.taxonomy_load_preset(dataset=dataset, preset="mmooc")
    expected = [t for t in preset.terms if t.kind != TermKind.SCENARIO]
    assert copied == len(expected)
    scenarios = TaxonomyTerm.objects.filter(dataset=dataset, kind=TermKind.SCENARIO)
    assert list(scenarios.values_list("code", flat=True)) == [own.code]
    dataset.refresh_from_db()
    assert dataset.preset == "mmooc"
    with pytest.raises(ValidationError) as exc:
        services.taxonomy_load_preset(dataset=dataset, preset="mmooc")
    assert exc.value.code == "nothing_to_load"
    with pytest.raises(ValidationError) as bad:
        services.taxonomy_load_preset(dataset=dataset, preset="nope")
    assert bad.value.code == "bad_preset"


def test_a_dataset_takes_only_the_kinds_of_term_its_samples_use() -> None:
    """An image-question dataset has no safety taxonomy and a tri-modal one no answerability
    groups: the service refuses the other kind's terms and presets, saying which kinds fit."""
    image_question = services.dataset_create(name="iq", kind=DatasetKind.IMAGE_QUESTION)
    trimodal = services.dataset_create(name="tm", kind=DatasetKind.TRIMODAL)
    with pytest.raises(ValidationError) as exc:
        services.taxonomy_term_add(
            dataset=image_question, kind=TermKind.SAFETY_CATEGORY, code="x", name="X"
        )
    assert exc.value.code == "kind"
    assert "Answerability group, Category, Question format, Scenario" in exc.value.messages[0]
    with pytest.raises(ValidationError) as group:
        services.taxonomy_term_add(dataset=trimodal, kind=TermKind.GROUP, code="x", name="X")
    assert group.value.code == "kind"
    with pytest.raises(ValidationError) as preset:
        services.taxonomy_load_preset(dataset=image_question, preset="mcbench")
    assert preset.value.code == "bad_preset"
    assert not TaxonomyTerm.objects.filter(dataset__in=[image_question, trimodal]).exists()
    kinds = [group.kind for group in selectors.taxonomy_by_kind(dataset=trimodal)]
    assert kinds == [TermKind.SAFETY_CATEGORY, TermKind.SAFETY_SUBCATEGORY]
