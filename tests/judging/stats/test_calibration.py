"""Tests for judging.stats.calibration: expected calibration error and reliability bins."""

import numpy as np
import pytest

from judging.stats.calibration import expected_calibration_error, reliability_bins


def test_calibrated_confidences_have_zero_ece() -> None:
    """Confidence .25 right 1 time in 4 and .75 right 3 times in 4 is perfectly calibrated."""
    confidences = [0.25] * 4 + [0.75] * 4
    correct = [1, 0, 0, 0, 1, 1, 1, 0]
    assert expected_calibration_error(confidences, correct, n_bins=4) == pytest.approx(0.0)


def test_ece_by_hand() -> None:
    """Two bins: |1 − .9| with weight 2/4 and |0 − .3| with weight 2/4 give ECE .2."""
    confidences = [0.9, 0.9, 0.3, 0.3]
    correct = [True, True, False, False]
    assert expected_calibration_error(confidences, correct, n_bins=10) == pytest.approx(0.2)


def test_bins_cover_the_edges_and_report_empty_bins() -> None:
    """0.0 falls in the first bin, 1.0 in the last; empty bins have NaN means, count 0."""
    bins = reliability_bins([0.0, 1.0, 0.55], [0, 1, 1], n_bins=5)
    assert [b.count for b in bins] == [1, 0, 1, 0, 1]
    assert bins[-1].confidence == 1.0 and bins[-1].accuracy == 1.0
    assert np.isnan(bins[1].confidence) and np.isnan(bins[1].accuracy)
    assert (bins[2].lower, bins[2].upper) == pytest.approx((0.4, 0.6))


def test_ece_matches_a_loop_over_bins() -> None:
    """ECE equals a direct per-bin loop on random predictions."""
    rng = np.random.default_rng(0)
    conf = rng.random(500)
    correct = rng.random(500) < conf**2
    expected = 0.0
    for k in range(15):
        upper = (k + 1) / 15
        inside = (conf >= k / 15) & ((conf < upper) if k < 14 else (conf <= 1.0))
        if inside.any():
            expected += inside.mean() * abs(correct[inside].mean() - conf[inside].mean())
    assert expected_calibration_error(conf, correct, 15) == pytest.approx(expected, abs=1e-12)


def test_invalid_input_is_rejected() -> None:
    """Confidences outside [0, 1] or mismatched lengths are errors; no data gives NaN."""
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        expected_calibration_error([1.2], [1])
    with pytest.raises(ValueError, match="same length"):
        expected_calibration_error([0.5, 0.5], [1])
    assert np.isnan(expected_calibration_error([], []))
