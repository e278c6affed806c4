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
    # counts[i, r, l]: how often reviewer r gave item i the label l.
    counts = np.zeros((len(items), len(reviewers), len(names)))
    for item, reviewer, label in labels:
        counts[item_at[item], reviewer_at[reviewer], class_at[label]] += 1

    posteriors = counts.sum(axis=1) + smoothing  # the majority vote, softened
    posteriors /= posteriors.sum(axis=1, keepdims=True)
    priors, confusion = _maximise(counts, posteriors, smoothing)
    converged, iteration = False, 0
    while not converged and iteration < max_iterations:
        iteration += 1
        updated = _expect(counts, priors, confusion)
        priors, confusion = _maximise(counts, updated, smoothing)
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


def _maximise(
    counts: FloatArray, posteriors: FloatArray, smoothing: float
) -> tuple[FloatArray, FloatArray]:
    """Priors and confusion matrices given the items' posteriors (the M step)."""
    priors = posteriors.mean(axis=0)
    # confusion[r, j, l] ∝ Σ_i posteriors[i, j] · counts[i, r, l]
    confusion = np.einsum("ij,irl->rjl", posteriors, counts) + smoothing
    confusion /= confusion.sum(axis=2, keepdims=True)
    return priors, confusion


def _expect(counts: FloatArray, priors: FloatArray, confusion: FloatArray) -> FloatArray:
    """The items' posteriors given priors and confusion matrices (the E step), in log space."""
    log_post = np.log(priors)[None, :] + np.einsum("irl,rjl->ij", counts, np.log(confusion))
    log_post -= log_post.max(axis=1, keepdims=True)
    posteriors: FloatArray = np.exp(log_post)
    posteriors /= posteriors.sum(axis=1, keepdims=True)
    return posteriors
