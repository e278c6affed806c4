"""Reads of the annotation app (annotation/selectors.py) that other apps build on."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.models import Model
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from annotation import selectors, services
from annotation.models import ChangeSource, Sample, TermKind
from core.roles import ANNOTATOR, AUDITOR, user_roles
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample


@pytest.mark.django_db
def test_label_revisions_give_the_values_before_each_change_of_the_sources_asked() -> None:
    """Only the sources asked for, in sample and revision order, with the values before."""
    dataset = mmooc_dataset()
    first, second = mmooc_sample(dataset), mmooc_sample(dataset)
    for sample, source, category in (
        (second, ChangeSource.REVIEW, "MA"),
        (first, ChangeSource.EDIT, "MA"),
        (first, ChangeSource.ADJUDICATION, "MKB"),
    ):
        services.sample_update(
            sample=sample, changes={"category_code": category}, by=None, source=source
        )
    rows = selectors.label_revisions(
        dataset=dataset, sources=[ChangeSource.REVIEW, ChangeSource.ADJUDICATION]
    )
    assert [(sample_id, before) for sample_id, _at, before in rows] == [
        (first.pk, {"category_code": "MA"}),
        (second.pk, {"category_code": "VFP"}),
    ]
    assert selectors.label_revisions(dataset=mmooc_dataset(), sources=[ChangeSource.EDIT]) == []


def _fields(instance: Model) -> dict[str, Any]:
    return {f.attname: getattr(instance, f.attname) for f in type(instance)._meta.concrete_fields}


@pytest.mark.django_db
def test_a_sample_read_in_one_statement_is_the_sample_the_orm_reads(
    lead: Any, django_assert_num_queries: Any
) -> None:
    """Without media, the visible sample comes from annotation's SQL function in one statement
    with every field of the sample and its dataset as the ORM loads them (datetimes, JSON, the
    pair), its dataset loaded, and saved like any loaded sample."""
    dataset = mmooc_dataset()
    pair = mmooc_sample(dataset)
    sample = mmooc_sample(dataset)
    Sample.objects.filter(pk=sample.pk).update(
        pair=pair,
        extra={"gold": True, "nested": {"n": [1, 2.5, None], "text": "é"}},
        generator_models=["a", "b"],
        predicate={"all": [{"x": 1}]},
        priority=-3,
        judges_disagree=None,
    )
    user_roles(lead)  # known, as a request's authentication knows them
    with django_assert_num_queries(1):
        loaded = selectors.sample_get_visible(user=lead, sample_id=sample.pk, with_media=False)
        assert loaded is not None
        dataset_fields = _fields(loaded.dataset)
    stored = Sample.objects.select_related("dataset").get(pk=sample.pk)
    assert _fields(loaded) == _fields(stored)
    assert dataset_fields == _fields(stored.dataset)
    assert loaded.created_at.tzinfo is not None and loaded.updated_at == stored.updated_at
    assert (loaded._state.adding, loaded._state.db) == (False, "default")
    loaded.question = "Changed?"
    loaded.save(update_fields=["question"])
    assert Sample.objects.get(pk=sample.pk).question == "Changed?"


@pytest.mark.django_db
def test_a_sample_is_read_only_where_the_user_works_in_the_role_asked() -> None:
    """The one-statement read answers as the membership test: a member annotator in the
    role, an auditing member in none but auditing, nobody else, and nothing for an id that
    names no sample (however large)."""
    dataset = mmooc_dataset()
    sample = mmooc_sample(dataset)
    annotating = UserFactory.create(role=ANNOTATOR)
    auditing = UserFactory.create(role=AUDITOR)
    outsider = UserFactory.create(role=ANNOTATOR)
    services.dataset_add_member(dataset=dataset, user=annotating, roles={ANNOTATOR})
    services.dataset_add_member(dataset=dataset, user=auditing, roles={AUDITOR})

    def read(user: Any, role: str | None, sample_id: int = sample.pk) -> int | None:
        found = selectors.sample_get_visible(
            user=user, sample_id=sample_id, with_media=False, role=role
        )
        return None if found is None else found.pk

    assert [read(annotating, role) for role in (None, ANNOTATOR, AUDITOR)] == [
        sample.pk,
        sample.pk,
        None,
    ]
    assert [read(auditing, role) for role in (None, ANNOTATOR, AUDITOR)] == [
        sample.pk,
        None,
        sample.pk,
    ]
    assert read(outsider, None) is None and read(AnonymousUser(), None) is None
    for missing in (sample.pk + 1000, 2**63, -(2**70)):
        assert read(annotating, None, missing) is None


@pytest.mark.django_db
def test_the_sample_function_answers_null_where_the_user_may_not_work() -> None:
    """``annotation_sample_visible`` (migration 0019) answers the sample and its dataset only
    where ``annotation_dataset_visible`` does."""
    dataset = mmooc_dataset()
    sample = mmooc_sample(dataset)
    member, outsider = UserFactory.create(), UserFactory.create()
    services.dataset_add_member(dataset=dataset, user=member, roles={ANNOTATOR})

    def answer(user: Any, lead: bool, role: str | None) -> Sample | None:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT annotation_sample_visible(%s, %s, %s, %s)",
                [sample.pk, user.pk, lead, role],
            )
            return selectors.sample_from_visible(cursor.fetchone()[0])

    seen = answer(member, False, ANNOTATOR)
    assert seen is not None and (seen.pk, seen.dataset.pk) == (sample.pk, dataset.pk)
    assert answer(member, False, AUDITOR) is None
    assert answer(outsider, False, None) is None
    led = answer(outsider, True, ANNOTATOR)
    assert led is not None and led.external_id == sample.external_id


_VALUES = st.sampled_from(["", "a", "A", "b", "a b", "ä", "Z9", "math", "VFP", "vfp "])


@hypothesis_settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(rows=st.lists(st.tuples(_VALUES, _VALUES, _VALUES, _VALUES), max_size=12))
@pytest.mark.django_db
def test_the_filter_choices_are_every_value_in_use_and_the_taxonomys_codes(
    rows: list[tuple[str, str, str, str]],
) -> None:
    """Whatever values the samples hold (empty ones, case, accents, trailing spaces), the
    drop-downs offer each non-empty value of their columns once (a skip scan of each column's
    index), with the taxonomy's codes, and nothing of another dataset's samples."""
    dataset, other = mmooc_dataset(), mmooc_dataset()
    Sample.objects.bulk_create(
        [
            Sample(
                dataset=dataset,
                external_id=f"s{n}",
                category_code=category,
                safety_category=safety,
                question_format=format,
                scenario=scenario,
            )
            for n, (category, safety, format, scenario) in enumerate(rows)
        ]
        + [Sample(dataset=other, external_id="x", category_code="OTHER", scenario="elsewhere")]
    )
    terms = selectors.taxonomy_terms(dataset=dataset)
    codes = {kind: set(terms.filter(kind=kind).values_list("code", flat=True)) for kind in TermKind}
    used = [{value for value in column if value} for column in zip(*rows, strict=True)] or [
        set(),
        set(),
        set(),
        set(),
    ]
    assert selectors.sample_filter_choices(dataset=dataset) == {
        "category": sorted(
            used[0] | used[1] | codes[TermKind.CATEGORY] | codes[TermKind.SAFETY_CATEGORY]
        ),
        "question_format": sorted(used[2] | codes[TermKind.FORMAT]),
        "scenario": sorted(used[3] | codes[TermKind.SCENARIO]),
    }


@pytest.mark.django_db
def test_the_filter_choices_are_one_statement_beside_the_terms(
    django_assert_num_queries: Any,
) -> None:
    """The four columns' values in one statement, the taxonomy's terms in another."""
    dataset = mmooc_dataset()
    Sample.objects.bulk_create(
        Sample(dataset=dataset, external_id=f"s{n}", scenario=f"scenario-{n}") for n in range(5)
    )
    with django_assert_num_queries(2):
        choices = selectors.sample_filter_choices(dataset=dataset)
    assert {f"scenario-{n}" for n in range(5)} <= set(choices["scenario"])
