"""Sample notes (annotation/services/samples.py `sample_set_note`, selectors `sample_notes`):
the typed home of what review and judging note about a sample."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps as django_apps

from annotation import selectors, services
from annotation.models import NoteKey, SampleNote
from tests.annotation.factories import mmooc_dataset, mmooc_sample
from tests.support.threads import run_threads


@pytest.mark.django_db
def test_a_note_is_written_once_per_key_and_replaced_in_place() -> None:
    """Writing a key again replaces its value; other keys and the sample's extra are untouched."""
    sample = mmooc_sample(extra={"source": "x"})
    services.sample_set_note(
        sample_ids=[sample.pk], key=NoteKey.JUDGE_VOTES, values={sample.pk: [1]}
    )
    services.sample_set_note(
        sample_ids=[sample.pk], key=NoteKey.REVIEW_SUMMARY, values={sample.pk: {"a": 1}}
    )
    services.sample_set_note(
        sample_ids=[sample.pk], key=NoteKey.JUDGE_VOTES, values={sample.pk: [2]}
    )
    assert selectors.sample_note(sample_id=sample.pk, key=NoteKey.JUDGE_VOTES) == [2]
    assert selectors.sample_note(sample_id=sample.pk, key=NoteKey.REVIEW_SUMMARY) == {"a": 1}
    assert SampleNote.objects.filter(sample=sample).count() == 2
    sample.refresh_from_db()
    assert sample.extra == {"source": "x"}


@pytest.mark.django_db
def test_notes_of_many_samples_cost_a_fixed_number_of_queries(
    django_assert_num_queries: pytest.FixtureRequest,
) -> None:
    """One upsert writes every note, however many samples (up to a batch), leaving out the
    samples gone."""
    dataset = mmooc_dataset()
    ids = [mmooc_sample(dataset).pk for _ in range(30)]
    with django_assert_num_queries(1):  # type: ignore[operator]
        written = services.sample_set_note(
            sample_ids=[*ids, 10**9], key=NoteKey.JUDGE_VOTES, values={pk: pk for pk in ids}
        )
    assert written == 30
    assert selectors.sample_notes(sample_ids=ids, key=NoteKey.JUDGE_VOTES) == {pk: pk for pk in ids}


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_two_concurrent_writers_of_different_notes_both_survive() -> None:
    """Judging's votes and review's summary, written at the same moment on the same samples
    many times over, are both there afterwards (no read-modify-write of a shared object)."""
    dataset = mmooc_dataset()
    ids = [mmooc_sample(dataset).pk for _ in range(20)]
    keys = (NoteKey.JUDGE_VOTES, NoteKey.REVIEW_SUMMARY)

    def write(index: int) -> None:
        for round_ in range(10):
            services.sample_set_note(
                sample_ids=ids, key=keys[index % 2], values={pk: [index, round_] for pk in ids}
            )

    assert run_threads(4, write) == []
    for key in keys:
        notes = selectors.sample_notes(sample_ids=ids, key=key)
        assert set(notes) == set(ids)
        assert all(value[1] == 9 for value in notes.values())


@pytest.mark.django_db
def test_the_migration_moves_notes_out_of_extra() -> None:
    """Votes and summaries kept in `extra` before SampleNote existed become notes, and leave
    `extra` with only the sample's own custom fields."""
    sample = mmooc_sample(
        extra={"judge_votes": [{"judge": "rule"}], "review_summary": {"a": 1}, "topic": "t"}
    )
    migration = importlib.import_module("annotation.migrations.0004_sample_notes")
    migration.extra_keys_to_notes(django_apps, None)
    assert selectors.sample_note(sample_id=sample.pk, key=NoteKey.JUDGE_VOTES) == [
        {"judge": "rule"}
    ]
    assert selectors.sample_note(sample_id=sample.pk, key=NoteKey.REVIEW_SUMMARY) == {"a": 1}
    sample.refresh_from_db()
    assert sample.extra == {"topic": "t"}


@pytest.mark.django_db
def test_a_note_is_one_statement_and_a_gone_sample_is_left_out(
    django_assert_num_queries: pytest.FixtureRequest,
) -> None:
    """A batch of notes is one upsert (annotation_sample_notes_set) that leaves out samples
    that do not exist, and says how many it noted."""
    sample = mmooc_sample()
    with django_assert_num_queries(1):  # type: ignore[operator]
        written = services.sample_set_note(
            sample_ids=[sample.pk, sample.pk + 10_000],
            key=NoteKey.REVIEW_SUMMARY,
            values={sample.pk: {"a": 1}},
        )
    assert written == 1
    assert selectors.sample_note(sample_id=sample.pk, key=NoteKey.REVIEW_SUMMARY) == {"a": 1}
