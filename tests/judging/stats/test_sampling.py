"""Tests for judging.stats.sampling: allocation, the audit draw and expected margins of error."""

import math

import numpy as np
import pytest

from core.stats.bootstrap import stratum_weights
from judging.stats.sampling import (
    METHODS,
    FrameItem,
    allocate,
    bootstrap_strata,
    compare_allocations,
    draw_audit_sample,
    expected_margin_of_error,
    stratum_margins,
)


def frame(rng: np.random.Generator, n_strata: int = 12, rare_rate: float = 0.05) -> list[FrameItem]:
    """A frame of strata of very different sizes with rare and disagreement flags."""
    items = []
    for h in range(n_strata):
        size = int(rng.integers(5, 600))
        for i in range(size):
            items.append(
                FrameItem(
                    f"s{h}-{i}",
                    f"s{h}",
                    rare=bool(rng.random() < rare_rate),
                    disagree=bool(rng.random() < 0.1),
                )
            )
    return items


def brute_force_common_floor(sizes: list[int], floor: int, n: int) -> int:
    return max(f for f in range(floor + 1) if sum(min(f, s) for s in sizes) <= n)


def test_allocation_invariants_hold_for_many_random_inputs() -> None:
    """For 600 random (sizes, n, method, floor): the total is min(n, Σ sizes), no stratum gets
    more than its size, floors are met when they fit and, when they do not, every stratum
    still gets the largest common floor that fits."""
    rng = np.random.default_rng(7)
    for case in range(600):
        n_strata = int(rng.integers(1, 15))
        sizes = {f"k{h}": int(rng.choice([0, 1, 3, 20, 150, 2000])) for h in range(n_strata)}
        total = sum(sizes.values())
        n = int(rng.integers(0, total + 50))
        floor = int(rng.integers(0, 40))
        method = METHODS[case % 3]
        result = allocate(sizes, n, method, floor)
        assert set(result) == set(sizes)
        assert sum(result.values()) == min(n, total)
        assert all(0 <= result[k] <= sizes[k] for k in sizes)
        wanted = sum(min(floor, s) for s in sizes.values())
        if n >= total:
            assert result == sizes
        elif wanted <= n:
            assert all(result[k] >= min(floor, sizes[k]) for k in sizes)
        else:
            common = brute_force_common_floor(list(sizes.values()), floor, n)
            assert all(result[k] >= min(common, sizes[k]) for k in sizes)


def test_allocation_hand_examples() -> None:
    """Proportional, square-root and equal targets, caps, floors and largest remainder."""
    assert allocate({"a": 600, "b": 300, "c": 100}, 100) == {"a": 60, "b": 30, "c": 10}
    assert allocate({"a": 900, "b": 100}, 40, "sqrt") == {"a": 30, "b": 10}
    # Equal shares, but stratum a only has 5 items: the rest is shared equally.
    assert allocate({"a": 5, "b": 100, "c": 100}, 65, "equal") == {"a": 5, "b": 30, "c": 30}
    # Proportional would give b 2; the floor lifts it to 10 and a takes the rest.
    assert allocate({"a": 980, "b": 20}, 100, floor=10) == {"a": 90, "b": 10}
    # Equal remainders go to the keys that sort first.
    assert allocate({"c": 1, "b": 1, "a": 1}, 2) == {"a": 1, "b": 1, "c": 0}
    # Floors of 10 cannot fit in 12: common floor 4 (4 + 4 + 3), one item left over.
    assert allocate({"a": 100, "b": 100, "c": 3}, 12, floor=10) == {"a": 5, "b": 4, "c": 3}


def test_allocation_does_not_depend_on_key_order() -> None:
    """The same strata given in another order get the same allocation."""
    sizes = {"x": 37, "m": 211, "a": 5, "q": 98}
    reversed_sizes = dict(reversed(list(sizes.items())))
    for method in METHODS:
        assert allocate(sizes, 101, method, 3) == allocate(reversed_sizes, 101, method, 3)


def test_invalid_allocation_input_is_rejected() -> None:
    """Negative n or floor and unknown methods are errors."""
    with pytest.raises(ValueError, match="negative"):
        allocate({"a": 10}, -1)
    with pytest.raises(ValueError, match="method"):
        allocate({"a": 10, "b": 5}, 3, "neyman")  # type: ignore[arg-type]


def test_same_seed_same_sample_other_seed_other_sample_any_frame_order() -> None:
    """The draw is a function of the frame's items, the parameters and the seed only."""
    rng = np.random.default_rng(1)
    items = frame(rng)
    first = draw_audit_sample(items, 400, "sqrt", floor=10, oversample_rare=3, seed=11)
    shuffled = [items[i] for i in rng.permutation(len(items))]
    again = draw_audit_sample(shuffled, 400, "sqrt", floor=10, oversample_rare=3, seed=11)
    other = draw_audit_sample(items, 400, "sqrt", floor=10, oversample_rare=3, seed=12)
    assert first.item_ids == again.item_ids
    assert first.weights == again.weights
    assert set(first.item_ids) != set(other.item_ids)
    assert first.allocation == other.allocation


def test_sample_follows_the_allocation_and_weights_sum_to_the_frame() -> None:
    """n items are drawn, each stratum as allocated, no item twice; the inclusion weights
    add up to the frame size, and exactly to the number of rare items over rare ones."""
    rng = np.random.default_rng(2)
    items = frame(rng)
    sample = draw_audit_sample(
        items, 500, "proportional", floor=15, oversample_rare=4, oversample_disagree=2, seed=3
    )
    assert len(sample.item_ids) == len(set(sample.item_ids)) == 500
    by_id = {item.item_id: item for item in items}
    drawn: dict[str, int] = {}
    for item_id in sample.item_ids:
        drawn[by_id[item_id].stratum] = drawn.get(by_id[item_id].stratum, 0) + 1
    assert drawn == {k: v for k, v in sample.allocation.items() if v}
    assert sum(sample.weights.values()) == pytest.approx(len(items))
    rare_weight = sum(w for i, w in sample.weights.items() if by_id[i].rare)
    assert rare_weight == pytest.approx(sum(item.rare for item in items))


def test_oversampling_splits_a_stratum_by_size_times_factor() -> None:
    """900 ordinary and 100 rare items, 200 drawn, rare factor 4: the cells get
    200·900/1300 ≈ 138 and 200·400/1300 ≈ 62, so a rare item is ≈ 4× as likely drawn."""
    items = [FrameItem(f"i{i}", "s", rare=i < 100) for i in range(1000)]
    sample = draw_audit_sample(items, 200, oversample_rare=4.0, seed=0)
    assert sample.cells == {"s#ordinary": (900, 138), "s#rare": (100, 62)}
    assert sum(int(i[1:]) < 100 for i in sample.item_ids) == 62
    rare_id = next(i for i in sample.item_ids if int(i[1:]) < 100)
    assert sample.weights[rare_id] == pytest.approx(100 / 62)
    plain = draw_audit_sample(items, 200, seed=0)
    assert plain.cells == {"s#ordinary": (900, 180), "s#rare": (100, 20)}


def test_weights_agree_with_bootstrap_stratum_weights() -> None:
    """Per-item weights from population shares of the design strata are proportional to the
    inverse inclusion probabilities, so the bootstrap module can weight the audit back."""
    rng = np.random.default_rng(4)
    items = frame(rng)
    sample = draw_audit_sample(items, 300, "equal", floor=5, oversample_disagree=3, seed=9)
    design = [sample.design_strata[i] for i in sample.item_ids]
    from_shares = stratum_weights(design, sample.population_shares())
    inverse = np.array([sample.weights[i] for i in sample.item_ids])
    np.testing.assert_allclose(from_shares / from_shares.sum(), inverse / inverse.sum())


def test_oversampling_factor_below_one_is_rejected() -> None:
    """Undersampling is not an oversampling factor."""
    with pytest.raises(ValueError, match="at least 1"):
        draw_audit_sample([FrameItem("a", "s")], 1, oversample_rare=0.5)


def test_margin_of_error_matches_cochran_on_a_hand_example() -> None:
    """Cochran (1977, ch. 5): V(p_st) = Σ W_h² (N_h − n_h)/(N_h − 1) P_h Q_h / n_h.
    N = (1000, 200), n = (100, 50), P = (0.5, 0.2), W = (5/6, 1/6)."""
    v = (5 / 6) ** 2 * (900 / 999) * 0.25 / 100 + (1 / 6) ** 2 * (150 / 199) * 0.16 / 50
    expected = 1.959963984540054 * math.sqrt(v)
    result = expected_margin_of_error(
        {"a": 100, "b": 50}, {"a": 1000, "b": 200}, p={"a": 0.5, "b": 0.2}
    )
    assert result == pytest.approx(expected, rel=1e-12)
    assert expected_margin_of_error({"a": 10}, {"a": 10}) == 0.0
    assert math.isinf(expected_margin_of_error({"a": 10, "b": 0}, {"a": 100, "b": 5}))
    margins = stratum_margins({"a": 100, "b": 50}, {"a": 1000, "b": 200}, p=0.5)
    assert margins["b"] == pytest.approx(1.959963984540054 * math.sqrt(150 / 199 * 0.25 / 50))


def test_margin_of_error_matches_a_simulated_stratified_survey() -> None:
    """Drawing without replacement within strata 4,000 times, the spread of the stratified
    proportion matches the formula's standard error within 5 %."""
    rng = np.random.default_rng(5)
    sizes = {"a": 300, "b": 60, "c": 40}
    allocation = {"a": 50, "b": 30, "c": 20}
    proportions = {"a": 0.5, "b": 0.1, "c": 0.3}
    populations = {
        k: np.r_[
            np.ones(round(sizes[k] * proportions[k])),
            np.zeros(sizes[k] - round(sizes[k] * proportions[k])),
        ]
        for k in sizes
    }
    total = sum(sizes.values())
    estimates = [
        sum(
            sizes[k] / total * rng.choice(populations[k], allocation[k], replace=False).mean()
            for k in sizes
        )
        for _ in range(4000)
    ]
    predicted_se = expected_margin_of_error(allocation, sizes, proportions) / 1.959963984540054
    assert float(np.std(estimates)) == pytest.approx(predicted_se, rel=0.05)


def test_compare_allocations_shows_the_trade_off() -> None:
    """With one small stratum, proportional allocation has the smallest overall margin and
    equal allocation the smallest worst-stratum margin."""
    sizes = {"big": 20000, "mid": 5000, "small": 300}
    choices = {c.method: c for c in compare_allocations(sizes, 1000)}
    assert set(choices) == {"proportional", "sqrt", "equal"}
    assert choices["proportional"].overall_margin < choices["equal"].overall_margin
    assert choices["equal"].worst_stratum_margin < choices["proportional"].worst_stratum_margin
    assert choices["proportional"].worst_stratum == "small"
    assert all(sum(c.allocation.values()) == 1000 for c in choices.values())
    assert choices["equal"].smallest_stratum_n == 300


def test_small_design_strata_are_collapsed_for_the_bootstrap() -> None:
    """Groups of at least min_size items stay; smaller ones move one level up (cell →
    stratum → key without its last component) until big enough, else into one pool."""
    design = ["x|a#ordinary"] * 12 + ["x|a#rare"] * 2 + ["x|b#ordinary"] * 6
    design += ["x|b#rare"] * 5 + ["y|c#ordinary"] * 3 + ["z|d#rare"] * 1
    collapsed = bootstrap_strata(design, min_size=10)
    assert len(collapsed) == len(design)
    assert collapsed[:12] == ["x|a#ordinary"] * 12
    # The two x|b cells merge into x|b* (11 items); x|a#rare climbs x|a* → x* and, still
    # small, ends in the pool with the y and z items.
    assert collapsed[12:14] == ["(pooled small strata)"] * 2
    assert collapsed[14:25] == ["x|b*"] * 11
    assert collapsed[25:] == ["(pooled small strata)"] * 4
    assert bootstrap_strata(["s#rare"] * 3, min_size=2) == ["s#rare"] * 3
