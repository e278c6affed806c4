"""The Dawid–Skene estimate of each reviewer's confusion matrix and each item's label posterior.

Dawid & Skene (1979), "Maximum likelihood estimation of observer error-rates using the EM
algorithm". Each reviewer r has a confusion matrix π_r[j, l] = P(r says l | the truth is j);
the items' true classes have prior p_j. EM alternates the items' posteriors over the true class
(E step) with the priors and confusion matrices those posteriors imply (M step), starting from
the majority vote. A small additive smoothing keeps every probability positive, so a reviewer
who never used a label does not make an item impossible.

Written here (about forty lines of numpy) rather than taken from crowd-kit, whose install pulls
transformers, tokenizers and nltk into the site for this one estimator.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class DawidSkene:
    """The estimate: ``classes`` in index order, ``priors[j]``, ``confusion[r, j, l]`` per reviewer
    (rows: true class; columns: the label given; rows sum to 1), ``posteriors[i, j]`` per item."""

    classes: tuple[str, ...]
    reviewers: tuple[str, ...]
    items: tuple[str, ...]
    priors: FloatArray
    confusion: FloatArray
    posteriors: FloatArray
    iterations: int
    converged: bool

    def label(self, item: str) -> tuple[str, float]:
        """The most probable class of an item and its posterior probability."""
        row = self.posteriors[self.items.index(item)]
        best = int(np.argmax(row))
        return self.classes[best], float(row[best])

    def uncertain(self, threshold: float = 0.9) -> list[str]:
        """The items whose most probable class has a posterior below ``threshold``."""
        return [
            item
            for item, row in zip(self.items, self.posteriors, strict=True)
            if row.max() < threshold
        ]


def dawid_skene(
    labels: Sequence[tuple[str, str, str]],
    *,
    classes: Sequence[str] | None = None,
    max_iterations: int = 200,
    tolerance: float = 1e-6,
    smoothing: float = 0.01,
) -> DawidSkene:
    """Estimate from ``(item, reviewer, label)`` triples (a reviewer labels an item at most
    once; a repeated triple counts twice). ``classes`` fixes the label set and its order."""
    if not labels:
        raise ValueError("Dawid–Skene needs at least one label.")
    items = tuple(dict.fromkeys(item for item, _, _ in labels))
    reviewers = tuple(dict.fromkeys(reviewer for _, reviewer, _ in labels))
    found = sorted({label for _, _, label in labels})
    names = tuple(classes) if classes is not None else tuple(found)
    unknown = set(found) - set(names)
    if unknown:
        raise ValueError(f"labels outside the classes: {sorted(unknown)}")
    item_at = {name: i for i, name in enumerate(items)}
    reviewer_at = {name: r for r, name in enumerate(reviewers)}
    class_at = {name: k for k, name in enumerate(names)}
    # One entry per label (the item, the reviewer, the class given): the work per iteration
    # grows with the labels, not with items × reviewers (most reviewers never see an item).
    votes = _Votes(
        item=np.array([item_at[item] for item, _, _ in labels]),
        reviewer=np.array([reviewer_at[reviewer] for _, reviewer, _ in labels]),
        label=np.array([class_at[label] for _, _, label in labels]),
        shape=(len(items), len(reviewers), len(names)),
    )
    posteriors = votes.per_item() + smoothing  # the majority vote, softened
    posteriors /= posteriors.sum(axis=1, keepdims=True)
    priors, confusion = _maximise(votes, posteriors, smoothing)
    converged, iteration = False, 0
    while not converged and iteration < max_iterations:
        iteration += 1
        updated = _expect(votes, priors, confusion)
        priors, confusion = _maximise(votes, updated, smoothing)
        converged = float(np.abs(updated - posteriors).max()) < tolerance
        posteriors = updated
    return DawidSkene(
        classes=names,
        reviewers=reviewers,
        items=items,
        priors=priors,
        confusion=confusion,
        posteriors=posteriors,
        iterations=iteration,
        converged=converged,
    )


@dataclass(frozen=True)
class _Votes:
    """The labels as index arrays; ``shape`` is (items, reviewers, classes)."""

    item: npt.NDArray[np.intp]
    reviewer: npt.NDArray[np.intp]
    label: npt.NDArray[np.intp]
    shape: tuple[int, int, int]

    def per_item(self) -> FloatArray:
        """counts[i, l]: how many labels l item i received."""
        n_items, _reviewers, n_classes = self.shape
        flat = np.bincount(self.item * n_classes + self.label, minlength=n_items * n_classes)
        return flat.reshape(n_items, n_classes).astype(np.float64)


def _maximise(
    votes: _Votes, posteriors: FloatArray, smoothing: float
) -> tuple[FloatArray, FloatArray]:
    """Priors and confusion matrices given the items' posteriors (the M step)."""
    _items, n_reviewers, n_classes = votes.shape
    priors = posteriors.mean(axis=0)
    # confusion[r, j, l] ∝ Σ over labels (i, r, l) of posteriors[i, j]
    true = np.arange(n_classes)[None, :]
    cell = (votes.reviewer[:, None] * n_classes + true) * n_classes + votes.label[:, None]
    sums: FloatArray = np.bincount(
        cell.ravel(),
        weights=posteriors[votes.item].ravel(),
        minlength=n_reviewers * n_classes * n_classes,
    ).astype(np.float64)
    confusion = sums.reshape(n_reviewers, n_classes, n_classes) + smoothing
    confusion /= confusion.sum(axis=2, keepdims=True)
    return priors, confusion


def _expect(votes: _Votes, priors: FloatArray, confusion: FloatArray) -> FloatArray:
    """The items' posteriors given priors and confusion matrices (the E step), in log space."""
    n_items, _reviewers, n_classes = votes.shape
    # Each label adds log confusion[r, j, l] to its item's log posterior of every class j.
    given = np.log(confusion)[votes.reviewer, :, votes.label]
    log_post = np.empty((n_items, n_classes))
    for j in range(n_classes):
        log_post[:, j] = np.bincount(votes.item, weights=given[:, j], minlength=n_items)
    log_post += np.log(priors)[None, :]
    log_post -= log_post.max(axis=1, keepdims=True)
    posteriors: FloatArray = np.exp(log_post)
    posteriors /= posteriors.sum(axis=1, keepdims=True)
    return posteriors
