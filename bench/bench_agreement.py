"""Benchmark: item bootstrap of every agreement figure, sufficient statistics vs libraries.

Synthetic, seeded data: 2,000 items × 5 raters with nominal labels (about 10 % missing) and
5-level ordinal scores (complete, so statsmodels' Fleiss kappa applies). The fast way runs
2,000 replicates of every figure the report computes; the slow way recomputes each figure
per replicate with the libraries (krippendorff, scikit-learn; Fleiss/Gwet from the
package's own direct functions since irrCAC cannot be installed next to numpy 2) on a
subset of replicates and extrapolates. Prints one JSON object on the last line.

Run: .venv/bin/python bench/bench_agreement.py [--replicates 2000] [--slow-replicates 100]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from itertools import combinations
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.stats import agreement as ag
from core.stats.bootstrap import COHEN_WEIGHTING, bootstrap_figures
from core.stats.ratings import Level, Ratings, from_labels, from_matrix

N_ITEMS, N_RATERS = 2000, 5
SK_WEIGHTS = {"none": None, "linear": "linear", "quadratic": "quadratic"}


def nominal_data(rng: np.random.Generator) -> Ratings:
    """Three safety labels with a dominant class, 85 % rater accuracy, 10 % missing."""
    labels = np.array(["safe", "refuse", "unsafe"])
    truth = rng.choice(3, N_ITEMS, p=[0.8, 0.15, 0.05])
    noise = rng.integers(0, 3, (N_ITEMS, N_RATERS))
    codes = np.where(rng.random((N_ITEMS, N_RATERS)) < 0.85, truth[:, None], noise)
    rows = [[None if rng.random() < 0.1 else str(labels[c]) for c in row] for row in codes.tolist()]
    return from_labels(rows)


def ordinal_data(rng: np.random.Generator) -> Ratings:
    """Scores 1..5: a latent score plus rater leniency and noise, complete."""
    latent = rng.normal(3.0, 1.0, N_ITEMS)
    leniency = rng.normal(0.0, 0.3, N_RATERS)
    scores = np.rint(latent[:, None] + leniency[None, :] + rng.normal(0, 0.6, (N_ITEMS, N_RATERS)))
    return from_matrix(np.clip(scores, 1, 5), categories=[1, 2, 3, 4, 5])


def numeric_matrix(ratings: Ratings) -> np.ndarray:
    """Raters × items values (NaN = missing) in the layout krippendorff.alpha expects."""
    filled = np.nan_to_num(ratings.codes).astype(int)
    return np.where(np.isnan(ratings.codes), np.nan, ratings.values[filled]).T


def library_figures(ratings: Ratings, level: Level) -> dict[str, float]:
    """Every report figure computed by the reference libraries (or the direct functions)."""
    labels = list(range(ratings.n_categories))
    weights = SK_WEIGHTS[COHEN_WEIGHTING[level]]
    out = {
        "percent_agreement": ag.percent_agreement(ratings),
        "krippendorff_alpha": float(
            krippendorff.alpha(numeric_matrix(ratings), level_of_measurement=level)
        ),
        "fleiss_kappa": ag.fleiss_kappa(ratings),
        "gwet_ac1": ag.gwet_ac1(ratings),
    }
    for a, b in combinations(range(ratings.n_raters), 2):
        both = ~np.isnan(ratings.codes[:, a]) & ~np.isnan(ratings.codes[:, b])
        out[f"cohen_{a}_{b}"] = float(
            cohen_kappa_score(
                ratings.codes[both, a], ratings.codes[both, b], labels=labels, weights=weights
            )
        )
    return out


def fast_figures(result: Any, index: int, which: str) -> dict[str, float]:
    """The figures of one replicate (or of the point estimate) as a flat dict."""
    figures = getattr(result, which)
    out = {
        "percent_agreement": float(figures.percent_agreement[index]),
        "krippendorff_alpha": float(figures.krippendorff_alpha[index]),
        "fleiss_kappa": float(figures.fleiss_kappa[index]),
        "gwet_ac1": float(figures.gwet_ac1[index]),
    }
    for (a, b), values in figures.cohen_kappa.items():
        out[f"cohen_{a}_{b}"] = float(values[index])
    return out


def max_difference(first: dict[str, float], second: dict[str, float]) -> float:
    return max(abs(first[key] - second[key]) for key in first)


def run_dataset(
    name: str, ratings: Ratings, level: Level, replicates: int, slow_replicates: int
) -> dict[str, Any]:
    start = time.perf_counter()
    result = bootstrap_figures(ratings, level, replicates, seed=0)
    fast_seconds = time.perf_counter() - start

    point_diff = max_difference(fast_figures(result, 0, "point"), library_figures(ratings, level))
    extra: dict[str, float] = {}
    if not np.isnan(ratings.codes).any():
        table, _ = aggregate_raters(ratings.codes.astype(int), n_cat=ratings.n_categories)
        extra["fleiss_vs_statsmodels"] = abs(ag.fleiss_kappa(ratings) - float(fleiss_kappa(table)))

    start = time.perf_counter()
    replicate_diff = 0.0
    for b in range(slow_replicates):
        slow = library_figures(ratings.take(result.indices[b]), level)
        replicate_diff = max(
            replicate_diff, max_difference(fast_figures(result, b, "replicates"), slow)
        )
    slow_seconds = time.perf_counter() - start
    return {
        "dataset": name,
        "level": level,
        "fast_seconds": round(fast_seconds, 4),
        "slow_seconds_measured": round(slow_seconds, 3),
        "slow_replicates_measured": slow_replicates,
        "slow_seconds_extrapolated": round(slow_seconds * replicates / max(slow_replicates, 1), 2),
        "max_point_difference_vs_libraries": point_diff,
        "max_replicate_difference_fast_vs_slow": replicate_diff,
        **extra,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--slow-replicates", type=int, default=100)
    args = parser.parse_args()

    rng = np.random.default_rng(20231)
    runs = [
        run_dataset("nominal", nominal_data(rng), "nominal", args.replicates, args.slow_replicates),
    ]
    ordinal = ordinal_data(rng)
    for level in ("ordinal", "interval"):
        runs.append(run_dataset("ordinal", ordinal, level, args.replicates, args.slow_replicates))
    for run in runs:
        print(
            f"{run['dataset']:8} {run['level']:8} fast {run['fast_seconds']:.3f} s "
            f"slow {run['slow_seconds_measured']:.2f} s for {run['slow_replicates_measured']} "
            f"(≈ {run['slow_seconds_extrapolated']:.1f} s for {args.replicates})"
        )
    fast_total = sum(run["fast_seconds"] for run in runs)
    slow_total = sum(run["slow_seconds_extrapolated"] for run in runs)
    worst = max(
        max(run["max_point_difference_vs_libraries"], run["max_replicate_difference_fast_vs_slow"])
        for run in runs
    )
    worst = max([worst, *(run.get("fleiss_vs_statsmodels", 0.0) for run in runs)])
    summary = {
        "items": N_ITEMS,
        "raters": N_RATERS,
        "replicates": args.replicates,
        "figures_per_replicate": 4 + N_RATERS * (N_RATERS - 1) // 2,
        "fast_seconds_total": round(fast_total, 3),
        "slow_seconds_extrapolated_total": round(slow_total, 1),
        "speedup": round(slow_total / fast_total, 1) if fast_total else None,
        "max_abs_difference": worst,
        "equal_to_1e-9": worst <= 1e-9,
        "runs": runs,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
