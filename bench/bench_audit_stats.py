"""Benchmark: every figure of the calibration-audit statistics page on synthetic data.

Seeded population of judged responses (18 evaluated models, 8 categories, 3 formats,
6 scenarios, 3 judges, one of them same-family for some models). Times, with 2,000 bootstrap
replicates each: drawing a stratified 2,000-item audit (sqrt allocation, floor, oversampled
refusals and judge disagreements) and comparing allocations; the human-vs-judge section
(refusal labels with a positive class, and 0–1 rationality scores in quarters, per judge and
ensemble, human–human on 20 % double-rated, breakdowns by category, format, scenario, model
and same family, population-weighted overall); judge confidence calibration from 5 votes
per item; PPI-corrected scores per model; 5-rater inter-judge figures (nominal and
ordinal) via the existing ``bootstrap_figures``. Prints one JSON object on the last line.

Run: .venv/bin/python bench/bench_audit_stats.py [--replicates 2000] [--population 20000]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.stats.bootstrap import bootstrap_figures
from core.stats.ratings import from_labels, from_matrix
from judging.stats.confidence import calibration_report
from judging.stats.corrected import corrected_scores
from judging.stats.human_judge import human_judge_report
from judging.stats.sampling import (
    FrameItem,
    bootstrap_strata,
    compare_allocations,
    draw_audit_sample,
    strata_sizes,
)

T = TypeVar("T")
BINARY = ["answered", "refused"]
SCORES = ["0", "0.25", "0.5", "0.75", "1"]
JUDGES = ("gpt4o", "qwen", "o3")


def timed(timings: dict[str, float], name: str, work: Callable[[], T]) -> T:
    start = time.perf_counter()
    result = work()
    timings[name] = round(time.perf_counter() - start, 4)
    return result


def population(rng: np.random.Generator, size: int) -> dict[str, Any]:
    """Attributes, the truth and three judges' refusal labels, scores and repeated votes."""
    model = rng.integers(0, 18, size)
    data: dict[str, Any] = {
        "model": model,
        "category": rng.integers(0, 8, size),
        "format": rng.integers(0, 3, size),
        "scenario": rng.integers(0, 6, size),
        "refused": rng.random(size) < 0.08,
        "score": rng.integers(0, 5, size),
    }
    labels, scores, votes = {}, {}, {}
    for j, accuracy in enumerate((0.93, 0.88, 0.82)):
        p_right = np.clip(rng.normal(accuracy, 0.08, size), 0.5, 1.0)
        k_votes = rng.random((size, 5)) < p_right[:, None]
        votes[JUDGES[j]] = np.where(k_votes, data["refused"][:, None], ~data["refused"][:, None])
        labels[JUDGES[j]] = votes[JUDGES[j]].sum(axis=1) >= 3
        lenient = (rng.random(size) < 0.2 + 0.1 * j).astype(int)
        noise = rng.integers(-1, 2, size) * (rng.random(size) < 0.25)
        scores[JUDGES[j]] = np.clip(data["score"] + lenient + noise, 0, 4)
    data["labels"], data["scores"], data["votes"] = labels, scores, votes
    data["same_family"] = {"qwen": model < 4}  # the judge shares a family with models 0-3
    return data


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replicates", type=int, default=2000)
    parser.add_argument("--population", type=int, default=20000)
    parser.add_argument("--audit", type=int, default=2000)
    args = parser.parse_args()
    reps = args.replicates
    rng = np.random.default_rng(6)
    pop = population(rng, args.population)
    disagree = np.var(np.column_stack([pop["labels"][j] for j in JUDGES]), axis=1) > 0
    items = [
        FrameItem(
            f"r{i}",
            f"{pop['category'][i]}|{pop['format'][i]}|{pop['model'][i]}",
            rare=bool(pop["labels"]["gpt4o"][i]),
            disagree=bool(disagree[i]),
        )
        for i in range(args.population)
    ]
    timings: dict[str, float] = {}
    sample = timed(
        timings,
        "draw_audit_sample",
        lambda: draw_audit_sample(
            items, args.audit, "sqrt", floor=2, oversample_rare=3, oversample_disagree=2, seed=1
        ),
    )
    sizes = strata_sizes(items)
    choices = timed(
        timings, "compare_allocations", lambda: compare_allocations(sizes, args.audit, floor=2)
    )
    rows = np.array([int(i[1:]) for i in sample.item_ids])
    design = bootstrap_strata([sample.design_strata[i] for i in sample.item_ids])
    weights = np.array([sample.weights[i] for i in sample.item_ids])
    groups = {
        name: [str(v) for v in pop[name][rows]]
        for name in ("category", "format", "scenario", "model")
    }
    family = {"qwen": [bool(v) for v in pop["same_family"]["qwen"][rows]]}
    double = rng.random(rows.size) < 0.2
    human_labels = [BINARY[int(v)] for v in pop["refused"][rows]]
    second_labels = [
        (BINARY[int(v ^ (rng.random() < 0.05))] if d else None)
        for v, d in zip(pop["refused"][rows], double, strict=True)
    ]
    judge_labels = {j: [BINARY[int(v)] for v in pop["labels"][j][rows]] for j in JUDGES}
    human_scores = [SCORES[v] for v in pop["score"][rows]]
    second_scores = [
        SCORES[min(4, v + int(rng.random() < 0.2))] if d else None
        for v, d in zip(pop["score"][rows], double, strict=True)
    ]
    judge_scores = {j: [SCORES[v] for v in pop["scores"][j][rows]] for j in JUDGES}
    common = {
        "strata": design,
        "item_weights": weights,
        "groups": groups,
        "same_family": family,
        "n_replicates": reps,
        "seed": 0,
    }
    refusal = timed(
        timings,
        "human_vs_judge_refusal",
        lambda: human_judge_report(
            human_labels,
            judge_labels,
            BINARY,
            positive="refused",
            second_human=second_labels,
            **common,
        ),
    )
    rationality = timed(
        timings,
        "human_vs_judge_rationality",
        lambda: human_judge_report(
            human_scores,
            judge_scores,
            SCORES,
            scale="ordinal",
            second_human=second_scores,
            **common,
        ),
    )
    votes = {j: [[BINARY[int(v)] for v in row] for row in pop["votes"][j][rows]] for j in JUDGES}
    calibration = timed(
        timings,
        "calibration",
        lambda: calibration_report(
            votes,
            human_labels,
            BINARY,
            groups={"category": groups["category"]},
            strata=design,
            item_weights=weights,
            n_replicates=reps,
        ),
    )
    ensemble = np.mean([pop["scores"][j] for j in JUDGES], axis=0) / 4.0
    human_all = np.full(args.population, np.nan)
    human_all[rows] = pop["score"][rows] / 4.0
    corrected = timed(
        timings,
        "corrected_scores",
        lambda: corrected_scores(
            [str(m) for m in pop["model"]],
            ensemble,
            human_all,
            strata=[f"{c}|{f}" for c, f in zip(pop["category"], pop["format"], strict=True)],
        ),
    )
    five = np.column_stack([pop["labels"][j] for j in JUDGES] + [pop["refused"]] * 2)[rows]
    noise = rng.random(five.shape) < 0.05
    nominal = from_labels(
        [[None if rng.random() < 0.05 else BINARY[int(v)] for v in row] for row in five ^ noise]
    )
    five_scores = np.column_stack([pop["scores"][j] for j in JUDGES] + [pop["score"]] * 2)[
        rows
    ].astype(float)
    ordinal = from_matrix(five_scores / 4.0, categories=[0, 0.25, 0.5, 0.75, 1])
    timed(timings, "inter_judge_nominal", lambda: bootstrap_figures(nominal, "nominal", reps))
    timed(timings, "inter_judge_ordinal", lambda: bootstrap_figures(ordinal, "ordinal", reps))

    ens = refusal.overall["ensemble"]
    print(
        f"audit {len(sample.item_ids)} items in {len(sample.cells)} design strata "
        f"({len(set(design))} resampling strata); "
        f"ensemble kappa {ens.cohen_kappa.value:.3f} "
        f"[{ens.cohen_kappa.ci_low:.3f}, {ens.cohen_kappa.ci_high:.3f}], "
        f"sensitivity {ens.sensitivity.value if ens.sensitivity else float('nan'):.3f}"
    )
    for choice in choices:
        print(
            f"{choice.method:12} overall ±{choice.overall_margin:.4f} "
            f"worst stratum ±{choice.worst_stratum_margin:.3f}"
        )
    shifted = [c for c in corrected if c.corrected is not None]
    print(
        f"corrected scores for {len(shifted)} models; model {shifted[0].model}: judge "
        f"{shifted[0].uncorrected.estimate:.3f}, corrected {shifted[0].corrected.estimate:.3f}"  # type: ignore[union-attr]
    )
    for name, seconds in timings.items():
        print(f"{name:28} {seconds:.3f} s")
    breakdown_comparisons = sum(
        len(by_rater)
        for report in (refusal, rationality)
        for groups_of in report.breakdowns.values()
        for by_rater in groups_of.values()
    )
    summary = {
        "items": len(sample.item_ids),
        "judges": len(JUDGES),
        "replicates": reps,
        "population": args.population,
        "design_strata": len(sample.cells),
        "resampling_strata": len(set(design)),
        "breakdown_comparisons": breakdown_comparisons,
        "calibration_judges": len(calibration),
        "corrected_models": len(corrected),
        "seconds": timings,
        "total_seconds": round(sum(timings.values()), 3),
        "under_3_seconds": sum(timings.values()) < 3.0,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
