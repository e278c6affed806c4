"""Dawid–Skene recovers planted reviewer confusion matrices and the items' true labels."""

from __future__ import annotations

import numpy as np
import pytest

from review.quality.dawid_skene import dawid_skene

CLASSES = ("refuse", "answer", "partial")


def simulate(
    rng: np.random.Generator, confusion: np.ndarray, priors: np.ndarray, n_items: int
) -> tuple[list[tuple[str, str, str]], list[int]]:
    """Every reviewer labels every item through their own confusion matrix."""
    truth = rng.choice(len(priors), size=n_items, p=priors)
    labels = []
    for i, true in enumerate(truth):
        for r in range(confusion.shape[0]):
            given = rng.choice(len(priors), p=confusion[r, true])
            labels.append((f"item{i}", f"reviewer{r}", CLASSES[given]))
    return labels, list(truth)


def planted() -> np.ndarray:
    """Five reviewers from careful to careless, one with a systematic confusion."""
    accuracies = (0.95, 0.9, 0.8, 0.7, 0.6)
    confusion = np.empty((5, 3, 3))
    for r, accuracy in enumerate(accuracies):
        off = (1 - accuracy) / 2
        confusion[r] = np.full((3, 3), off) + np.eye(3) * (accuracy - off)
    # reviewer 3 reads "partial" as "answer" most of the time
    confusion[3, 2] = (0.05, 0.6, 0.35)
    return confusion


def test_planted_confusion_matrices_are_recovered_from_500_items_by_5_reviewers() -> None:
    rng = np.random.default_rng(20261201)
    confusion, priors = planted(), np.array([0.3, 0.45, 0.25])
    labels, truth = simulate(rng, confusion, priors, 500)
    estimate = dawid_skene(labels, classes=CLASSES)
    order = [estimate.reviewers.index(f"reviewer{r}") for r in range(5)]
    error = np.abs(estimate.confusion[order] - confusion)
    assert estimate.converged
    assert error.mean() < 0.05, error.mean()
    assert error.max() < 0.12, error.max()
    assert np.abs(estimate.priors - priors).max() < 0.05
    recovered = [CLASSES.index(estimate.label(f"item{i}")[0]) for i in range(500)]
    accuracy = np.mean(np.array(recovered) == np.array(truth))
    majority = np.mean(
        [
            max(CLASSES, key=[lab for it, _, lab in labels if it == f"item{i}"].count)
            == CLASSES[truth[i]]
            for i in range(500)
        ]
    )
    assert accuracy >= majority and accuracy > 0.9


def test_a_hand_sized_case_and_the_uncertain_items() -> None:
    """Two sure items and one split item; the split one is uncertain, the others are not."""
    labels = [
        ("a", "x", "safe"),
        ("a", "y", "safe"),
        ("a", "z", "safe"),
        ("b", "x", "unsafe"),
        ("b", "y", "unsafe"),
        ("b", "z", "unsafe"),
        ("c", "x", "safe"),
        ("c", "y", "unsafe"),
    ]
    estimate = dawid_skene(labels)
    assert estimate.classes == ("safe", "unsafe")
    label, posterior = estimate.label("a")
    assert label == "safe" and posterior == pytest.approx(1.0, abs=0.01)
    assert estimate.label("b")[0] == "unsafe"
    assert estimate.uncertain(0.9) == ["c"]
    assert np.allclose(estimate.confusion.sum(axis=2), 1.0)
    assert np.allclose(estimate.posteriors.sum(axis=1), 1.0)


def test_bad_input_is_refused_with_a_reason() -> None:
    with pytest.raises(ValueError, match="at least one label"):
        dawid_skene([])
    with pytest.raises(ValueError, match="outside the classes"):
        dawid_skene([("a", "x", "maybe")], classes=("safe", "unsafe"))


def dense_reference(
    labels: list[tuple[str, str, str]], iterations: int, smoothing: float = 0.01
) -> np.ndarray:
    """The textbook EM on a dense items × reviewers × classes count array, as the estimator
    ran before it kept only the labels: the same posteriors after the same iterations."""
    items = list(dict.fromkeys(i for i, _, _ in labels))
    reviewers = list(dict.fromkeys(r for _, r, _ in labels))
    counts = np.zeros((len(items), len(reviewers), len(CLASSES)))
    for item, reviewer, label in labels:
        counts[items.index(item), reviewers.index(reviewer), CLASSES.index(label)] += 1
    posteriors = counts.sum(axis=1) + smoothing
    posteriors /= posteriors.sum(axis=1, keepdims=True)
    for _step in range(iterations):
        priors = posteriors.mean(axis=0)
        confusion = np.einsum("ij,irl->rjl", posteriors, counts) + smoothing
        confusion /= confusion.sum(axis=2, keepdims=True)
        log_post = np.log(priors)[None, :] + np.einsum("irl,rjl->ij", counts, np.log(confusion))
        posteriors = np.exp(log_post - log_post.max(axis=1, keepdims=True))
        posteriors /= posteriors.sum(axis=1, keepdims=True)
    result: np.ndarray = posteriors
    return result


def test_the_estimate_equals_the_dense_textbook_em() -> None:
    """Sparse reviewers (each item seen by 3 of 12, a repeated triple counting twice): the
    posteriors equal the dense computation's after as many iterations."""
    rng = np.random.default_rng(7)
    labels = []
    for i in range(200):
        for r in rng.choice(12, size=3, replace=False):
            labels.append((f"item{i}", f"reviewer{r}", CLASSES[int(rng.integers(3))]))
    labels.append(labels[0])
    estimate = dawid_skene(labels, classes=CLASSES, max_iterations=15)
    expected = dense_reference(labels, estimate.iterations)
    assert np.allclose(estimate.posteriors, expected, atol=1e-9)
