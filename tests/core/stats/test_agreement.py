"""Tests for core.stats.agreement against published examples and reference libraries."""

from itertools import combinations

import krippendorff
import numpy as np
import pytest
from sklearn.metrics import cohen_kappa_score
from sklearn.metrics import confusion_matrix as sk_confusion_matrix
from statsmodels.stats.inter_rater import aggregate_raters
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa

from core.stats import agreement as ag
from core.stats.ratings import Ratings, from_labels, from_matrix

NA = np.nan

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", the example with
# 4 observers × 12 units and missing data (rows: observers A-D; columns: units).
KRIPPENDORFF_2011 = np.array(
    [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, NA, NA, NA],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NA, 3],
        [NA, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NA],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NA],
    ]
)

# Fleiss (1971), "Measuring nominal scale agreement among many raters", Table 1:
# 30 patients, 6 psychiatric diagnoses each, 5 categories (1 depression … 5 other).
FLEISS_1971 = np.array(
    [
        [4, 4, 4, 4, 4, 4], [2, 2, 2, 5, 5, 5], [2, 3, 3, 3, 3, 5], [5, 5, 5, 5, 5, 5],
        [2, 2, 2, 4, 4, 4], [1, 1, 3, 3, 3, 3], [3, 3, 3, 3, 5, 5], [1, 1, 3, 3, 3, 4],
        [1, 1, 4, 4, 4, 4], [5, 5, 5, 5, 5, 5], [1, 4, 4, 4, 4, 4], [1, 2, 4, 4, 4, 4],
        [2, 2, 2, 3, 3, 3], [1, 4, 4, 4, 4, 4], [2, 2, 4, 4, 4, 5], [3, 3, 3, 3, 3, 5],
        [1, 1, 1, 4, 5, 5], [1, 1, 1, 1, 1, 2], [2, 2, 4, 4, 4, 4], [1, 3, 3, 5, 5, 5],
        [5, 5, 5, 5, 5, 5], [2, 4, 4, 4, 4, 4], [2, 2, 4, 5, 5, 5], [1, 1, 4, 4, 4, 4],
        [1, 4, 4, 4, 4, 5], [2, 2, 2, 2, 2, 4], [1, 1, 1, 1, 5, 5], [2, 2, 4, 4, 4, 4],
        [1, 3, 3, 3, 3, 3], [5, 5, 5, 5, 5, 5],
    ],
    dtype=float,
)  # fmt: skip

# Feinstein & Cicchetti (1990), "High agreement but low kappa: I", J Clin Epidemiol 43:543,
# also discussed by Byrt, Bishop & Carlin (1993): both tables agree on 85 of 100 items.
BALANCED_TABLE = [[40, 9], [6, 45]]
SKEWED_TABLE = [[80, 10], [5, 5]]


def random_ratings(seed: int, n_items: int = 60, n_raters: int = 4, q: int = 4) -> Ratings:
    """Correlated ordinal ratings 1..q with about 20 % missing (some items single-rated)."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(1, q + 1, n_items)
    matrix = np.clip(truth[:, None] + rng.integers(-1, 2, (n_items, n_raters)), 1, q).astype(float)
    matrix[rng.random(matrix.shape) < 0.2] = np.nan
    return from_matrix(matrix)


def naive_gwet(ratings: Ratings, method: str, weights: np.ndarray) -> float:
    """Unit-by-unit transcription of Gwet's formulas (irrCAC fleiss/gwet raw) as a reference."""
    q = ratings.n_categories
    agreements, shares = [], np.zeros(q)
    rated_once = 0
    for row in ratings.codes:
        codes = row[~np.isnan(row)].astype(int)
        r = codes.size
        if r == 0:
            continue
        rated_once += 1
        counts = np.bincount(codes, minlength=q).astype(float)
        shares += counts / r
        if r >= 2:
            agreements.append(
                sum(counts[k] * (weights[k] @ counts - 1) for k in range(q)) / (r * (r - 1))
            )
    pa = float(np.mean(agreements))
    pi = shares / rated_once
    if method == "fleiss":
        pe = float(pi @ weights @ pi)
    else:
        pe = float(weights.sum() * np.sum(pi * (1 - pi)) / (q * (q - 1)))
    return (pa - pe) / (1 - pe)


# --- Krippendorff's alpha ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("level", "published"), [("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849)]
)
def test_alpha_reproduces_krippendorff_2011_example(level: str, published: float) -> None:
    """Alpha with missing ratings reproduces Krippendorff's (2011) published example
    (nominal .743, ordinal .815, interval .849) and the krippendorff package to 1e-9."""
    ratings = from_matrix(KRIPPENDORFF_2011.T)
    value = ag.krippendorff_alpha(ratings, level)  # type: ignore[arg-type]
    assert value == pytest.approx(published, abs=5e-4)
    expected = krippendorff.alpha(KRIPPENDORFF_2011, level_of_measurement=level)  # type: ignore[arg-type]
    assert value == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("level", ["nominal", "ordinal", "interval"])
@pytest.mark.parametrize("seed", range(5))
def test_alpha_matches_krippendorff_package(level: str, seed: int) -> None:
    """Alpha equals krippendorff.alpha (level passed explicitly) on random data with gaps."""
    ratings = random_ratings(seed)
    data = np.where(
        np.isnan(ratings.codes), np.nan, ratings.values[np.nan_to_num(ratings.codes).astype(int)]
    )
    expected = krippendorff.alpha(data.T, level_of_measurement=level)  # type: ignore[arg-type]
    assert ag.krippendorff_alpha(ratings, level) == pytest.approx(expected, abs=1e-9)  # type: ignore[arg-type]


def test_alpha_interval_uses_numeric_spacing() -> None:
    """Interval alpha spaces categories by value (1, 2, 10), not by rank."""
    data = np.array([[1, 2, 10, 1, 2], [1, 10, 10, 2, 2]], dtype=float)
    ratings = from_matrix(data.T)
    expected = krippendorff.alpha(data, level_of_measurement="interval")
    assert ag.krippendorff_alpha(ratings, "interval") == pytest.approx(expected, abs=1e-9)
    assert ag.krippendorff_alpha(ratings, "interval") != pytest.approx(
        ag.krippendorff_alpha(ratings, "ordinal"), abs=1e-3
    )


def test_alpha_drops_single_rated_units() -> None:
    """Units with one rating do not change alpha (they carry no pairable values)."""
    ratings = random_ratings(7)
    extra = np.vstack([ratings.codes, [[0.0, NA, NA, NA], [NA, 3.0, NA, NA]]])
    padded = Ratings(extra, ratings.categories, ratings.values)
    assert ag.krippendorff_alpha(padded, "nominal") == pytest.approx(
        ag.krippendorff_alpha(ratings, "nominal"), abs=1e-12
    )


def test_undefined_coefficients_are_nan() -> None:
    """With a single category every chance-corrected coefficient is undefined (NaN)."""
    ratings = from_labels([["a", "a"], ["a", "a"], ["a", ""]])
    assert ag.percent_agreement(ratings) == 1.0
    assert np.isnan(ag.krippendorff_alpha(ratings, "nominal"))
    assert np.isnan(ag.fleiss_kappa(ratings))
    assert np.isnan(ag.gwet_ac1(ratings))
    assert np.isnan(ag.cohen_kappa_pair(ratings, 0, 1))


# --- Fleiss' kappa, Gwet's AC1/AC2, percent agreement -----------------------------------


def test_fleiss_kappa_reproduces_fleiss_1971() -> None:
    """Fleiss' kappa on Fleiss's (1971) 30 × 6 diagnoses is .430 (P̄ = .556), as published,
    and equals statsmodels' fleiss_kappa to 1e-9."""
    ratings = from_matrix(FLEISS_1971)
    assert ag.fleiss_kappa(ratings) == pytest.approx(0.430, abs=5e-4)
    assert ag.percent_agreement(ratings) == pytest.approx(0.5556, abs=5e-5)
    table, _ = aggregate_raters(FLEISS_1971.astype(int))
    assert ag.fleiss_kappa(ratings) == pytest.approx(sm_fleiss_kappa(table), abs=1e-9)


@pytest.mark.parametrize("seed", range(5))
def test_fleiss_kappa_matches_statsmodels_on_complete_data(seed: int) -> None:
    """On complete data the missing-data generalisation equals statsmodels' Fleiss kappa."""
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, 3, 80)
    data = np.where(rng.random((80, 5)) < 0.7, truth[:, None], rng.integers(0, 3, (80, 5)))
    table, _ = aggregate_raters(data)
    assert ag.fleiss_kappa(from_matrix(data)) == pytest.approx(sm_fleiss_kappa(table), abs=1e-9)


def test_gwet_and_fleiss_reproduce_irrcac_raw4raters() -> None:
    """On Gwet's cac.raw4raters (the Krippendorff 2011 data), irrCAC documents p_a .81818,
    AC1 .77544 and Fleiss' kappa .76117; with weights AC2 (quadratic) .914 and Fleiss
    (linear) .818 (Gwet, Handbook of Inter-Rater Reliability, 4th ed.; irrCAC tests)."""
    ratings = from_matrix(KRIPPENDORFF_2011.T)
    assert ag.percent_agreement(ratings) == pytest.approx(0.81818, abs=5e-6)
    assert ag.gwet_ac1(ratings) == pytest.approx(0.77544, abs=5e-6)
    assert ag.fleiss_kappa(ratings) == pytest.approx(0.76117, abs=5e-6)
    assert ag.gwet_ac2(ratings, "quadratic") == pytest.approx(0.914, abs=5e-4)
    assert ag.fleiss_kappa(ratings, "linear") == pytest.approx(0.818, abs=5e-4)


@pytest.mark.parametrize("weights", ["identity", "linear", "quadratic"])
@pytest.mark.parametrize("seed", range(4))
def test_gwet_and_fleiss_match_unit_by_unit_reference(weights: str, seed: int) -> None:
    """Vectorised Fleiss/Gwet equal a unit-by-unit transcription of Gwet's formulas."""
    ratings = random_ratings(seed)
    w = ag.agreement_weights(ratings.values, weights)  # type: ignore[arg-type]
    assert ag.fleiss_kappa(ratings, weights) == pytest.approx(  # type: ignore[arg-type]
        naive_gwet(ratings, "fleiss", w), abs=1e-9
    )
    assert ag.gwet_ac2(ratings, weights) == pytest.approx(  # type: ignore[arg-type]
        naive_gwet(ratings, "gwet", w), abs=1e-9
    )


def test_ac1_stays_high_where_kappa_collapses() -> None:
    """On the skewed 85 %-agreement table kappa is .32 while AC1 stays about .81."""
    rows = [["yes", "yes"]] * 80 + [["yes", "no"]] * 10 + [["no", "yes"]] * 5 + [["no", "no"]] * 5
    ratings = from_labels(rows, categories=["yes", "no"])
    assert ag.cohen_kappa_pair(ratings, 0, 1) == pytest.approx(0.318, abs=5e-4)
    # AC1 by hand: π = (90 + 85) / 200, p_e = 2π(1 − π) = .21875, (.85 − p_e)/(1 − p_e).
    assert ag.gwet_ac1(ratings) == pytest.approx((0.85 - 0.21875) / 0.78125, abs=1e-12)


# --- Cohen's kappa ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ours", "sklearn"), [("none", None), ("linear", "linear"), ("quadratic", "quadratic")]
)
@pytest.mark.parametrize("seed", range(4))
def test_cohen_kappa_matches_sklearn_with_labels(ours: str, sklearn: str | None, seed: int) -> None:
    """Cohen's kappa equals sklearn's cohen_kappa_score given the full label list."""
    rng = np.random.default_rng(seed)
    labels = ["1", "2", "3", "4", "5"]
    first = rng.choice(["1", "2", "4"], 50).tolist()  # "3" and "5" never used
    second = [str(min(5, int(a) + int(rng.integers(0, 2)))) for a in first]
    expected = cohen_kappa_score(first, second, labels=labels, weights=sklearn)
    value = ag.cohen_kappa(first, second, labels, ours)  # type: ignore[arg-type]
    assert value == pytest.approx(expected, abs=1e-9)


def test_weighted_kappa_spaces_unseen_categories() -> None:
    """The sklearn trap: without labels, unseen categories collapse the spacing; the explicit
    label list used here keeps "3" between "2" and "4"."""
    first, second = ["1", "2", "4", "4", "1"], ["2", "2", "4", "1", "1"]
    labels = ["1", "2", "3", "4"]
    ours = ag.cohen_kappa(first, second, labels, "linear")
    assert ours == pytest.approx(cohen_kappa_score(first, second, labels=labels, weights="linear"))
    assert ours != pytest.approx(cohen_kappa_score(first, second, weights="linear"), abs=1e-3)


def test_cohen_pair_uses_items_both_raters_rated() -> None:
    """Pairwise kappa from Ratings equals sklearn on the items both raters rated."""
    ratings = random_ratings(3)
    labels = list(range(ratings.n_categories))
    for a, b in combinations(range(ratings.n_raters), 2):
        both = ~np.isnan(ratings.codes[:, a]) & ~np.isnan(ratings.codes[:, b])
        expected = cohen_kappa_score(
            ratings.codes[both, a], ratings.codes[both, b], labels=labels, weights="quadratic"
        )
        value = ag.cohen_kappa_pair(ratings, a, b, "quadratic")
        assert value == pytest.approx(expected, abs=1e-9)


def test_two_tables_with_85_percent_agreement() -> None:
    """Feinstein & Cicchetti (1990) / Byrt et al. (1993): both tables agree 85 %, PABAK .70,
    but kappa is .70 vs .32; prevalence index .05 vs .75, bias index .03 vs .05."""
    balanced, skewed = ag.two_by_two(BALANCED_TABLE), ag.two_by_two(SKEWED_TABLE)
    assert balanced.observed_agreement == skewed.observed_agreement == pytest.approx(0.85)
    assert balanced.pabak == skewed.pabak == pytest.approx(0.70)
    assert balanced.kappa == pytest.approx(0.70, abs=5e-3)
    assert skewed.kappa == pytest.approx(0.32, abs=5e-3)
    assert abs(balanced.prevalence_index) == pytest.approx(0.05)
    assert abs(skewed.prevalence_index) == pytest.approx(0.75)
    assert balanced.bias_index == pytest.approx(0.03)
    assert skewed.bias_index == pytest.approx(0.05)


def test_pabak_generalises_to_q_categories() -> None:
    """PABAK for q categories is (q·p_o − 1)/(q − 1)."""
    table = np.array([[5.0, 1, 0], [0, 3, 1], [1, 0, 4]])
    assert ag.pabak(table) == pytest.approx((3 * 12 / 15 - 1) / 2)


# --- Human-vs-judge helpers -------------------------------------------------------------


def test_confusion_matrix_and_rates_for_positive_class() -> None:
    """The confusion matrix equals sklearn's; sensitivity/specificity are for the named
    positive class; missing pairs are skipped."""
    reference = ["refuse", "comply", "refuse", "unsafe", "comply", "refuse", None]
    predicted = ["refuse", "refuse", "comply", "unsafe", "comply", "refuse", "comply"]
    labels = ["comply", "refuse", "unsafe"]
    result = ag.confusion(reference, predicted, labels, positive="refuse")
    expected = sk_confusion_matrix(reference[:-1], predicted[:-1], labels=labels)
    np.testing.assert_array_equal(result.matrix, expected)
    assert result.n == 6
    assert result.sensitivity == pytest.approx(2 / 3)  # 2 of 3 true refusals found
    assert result.specificity == pytest.approx(2 / 3)  # 1 of 3 non-refusals flagged
    with pytest.raises(ValueError, match="positive class"):
        ag.confusion(reference, predicted, labels, positive="harmful")


def test_mean_signed_difference_shows_leniency() -> None:
    """A judge scoring above the human has a positive mean signed difference; gaps skipped."""
    human = [1.0, 2.0, np.nan, 4.0]
    judge = [2.0, 2.0, 5.0, 5.0]
    assert ag.mean_signed_difference(human, judge) == pytest.approx(2 / 3)
    assert np.isnan(ag.mean_signed_difference([np.nan], [1.0]))
