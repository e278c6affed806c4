"""Comparing two snapshots' entries (annotation/snapshots/comparison.py): the merge of two
id-ordered streams and the changed fields of one sample."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from annotation.snapshots.comparison import Entry, EntryDiff, FieldChange, entry_diff, field_changes

ids = st.text(alphabet="ab中é1", min_size=1, max_size=4)
hashes = st.sampled_from(["h1", "h2", "h3"])
snapshots = st.dictionaries(ids, st.tuples(hashes, st.booleans()), max_size=30)


def entries(records: dict[str, tuple[str, bool]]) -> list[Entry]:
    return [Entry(i, h, gone) for i, (h, gone) in sorted(records.items())]


Records = dict[str, tuple[str, bool]]


def full(base: Records, other: Records) -> EntryDiff:
    return entry_diff(entries(base), entries(other), keep=10_000)


@given(snapshots, snapshots)
def test_added_removed_and_changed_partition_the_symmetric_difference(
    base: dict[str, tuple[str, bool]], other: dict[str, tuple[str, bool]]
) -> None:
    """Every id whose (id, hash) record is in one snapshot only is added, removed or changed,
    in exactly one of them; the counts agree with the lists, and the rest are unchanged."""
    diff = full(base, other)
    old = {(i, h) for i, (h, _) in base.items()}
    new = {(i, h) for i, (h, _) in other.items()}
    touched = {i for i, _ in old ^ new}
    added, removed = set(diff.added_ids), set(diff.removed_ids)
    changed = {c.external_id for c in diff.changes}
    assert added | removed | changed == touched
    assert not (added & removed or added & changed or removed & changed)
    assert (diff.added, diff.removed, diff.changed) == (len(added), len(removed), len(changed))
    assert diff.unchanged == len(old & new)
    assert diff.added + diff.changed + diff.unchanged == len(other)
    assert set(diff.taken_down_ids) == {i for i in removed if base[i][1]}
    assert diff.taken_down == len(diff.taken_down_ids)
    assert all(
        (c.old_hash, c.new_hash) == (base[c.external_id][0], other[c.external_id][0])
        for c in diff.changes
    )


@given(snapshots)
def test_a_snapshot_compared_with_itself_has_no_difference(
    base: dict[str, tuple[str, bool]],
) -> None:
    diff = full(base, base)
    assert diff.empty and diff.unchanged == len(base)
    assert not (diff.added_ids or diff.removed_ids or diff.changes or diff.taken_down_ids)


@given(snapshots, snapshots)
def test_swapping_the_snapshots_swaps_added_and_removed(
    base: dict[str, tuple[str, bool]], other: dict[str, tuple[str, bool]]
) -> None:
    forward, backward = full(base, other), full(other, base)
    assert forward.added_ids == backward.removed_ids
    assert forward.removed_ids == backward.added_ids
    assert [c.external_id for c in forward.changes] == [c.external_id for c in backward.changes]


@given(snapshots, snapshots, st.integers(0, 5), st.integers(1, 5))
def test_lists_are_capped_and_changes_paged_while_counts_stay_whole(
    base: dict[str, tuple[str, bool]],
    other: dict[str, tuple[str, bool]],
    start: int,
    size: int,
) -> None:
    whole = full(base, other)
    page = entry_diff(entries(base), entries(other), keep=2, changed_from=start, changed_keep=size)
    assert (page.added, page.removed, page.changed) == (whole.added, whole.removed, whole.changed)
    assert page.added_ids == whole.added_ids[:2] and page.removed_ids == whole.removed_ids[:2]
    assert page.changes == whole.changes[start : start + size]


def test_entries_out_of_order_are_refused() -> None:
    with pytest.raises(ValueError, match="out of order"):
        entry_diff([Entry("b", "h"), Entry("a", "h")], [], keep=5)


def test_changed_fields_show_old_and_new_values_by_name() -> None:
    """Lists and objects show as JSON, a missing field as empty, equal fields not at all."""
    old = {"question": "Q?", "options": [{"label": "A"}], "split": "test", "gone": "x"}
    new = {"question": "Q?", "options": [{"label": "B"}], "split": "dev", "extra.note": "n"}
    assert field_changes(old, new) == [
        FieldChange("extra.note", "", "n"),
        FieldChange("gone", "x", ""),
        FieldChange("options", '[{"label": "A"}]', '[{"label": "B"}]'),
        FieldChange("split", "test", "dev"),
    ]


def test_a_long_value_is_shortened_around_the_first_difference() -> None:
    before = "a" * 500 + "OLD" + "z" * 500
    after = "a" * 500 + "NEW" + "z" * 500
    (change,) = field_changes({"explanation": before}, {"explanation": after}, width=80)
    assert "OLD" in change.old and "NEW" in change.new
    assert change.old.startswith("…") and change.old.endswith("…")
    assert len(change.old) == 82 and len(change.new) == 82


@given(st.text(max_size=300), st.text(max_size=300))
@example("a" * 100, "a" * 101)
@example("b" + "a" * 100, "c" + "a" * 100)
def test_a_shortened_change_still_shows_a_difference(before: str, after: str) -> None:
    changes = field_changes({"f": before}, {"f": after}, width=40)
    assert (changes == []) == (before == after)
    for change in changes:
        assert change.old != change.new
        assert len(change.old) <= 42 and len(change.new) <= 42
