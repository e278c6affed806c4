"""Benchmark: every reviewer's quality figures (the Reviewers page's computation, pure).

Synthetic, seeded data: n samples each reviewed by k of R reviewers, four fields (the
decision and three categorical labels, 85 % accurate, 10 % rejections), a fifth of the
samples adjudicated, 40 gold answers per reviewer. Prints the seconds and the peak resident
memory of the process as one JSON object on the last line.

Run: .venv/bin/python bench/bench_reviewer_quality.py [--samples 2000] [--reviewers 10] [--k 2]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from review.quality.reviewers import GoldResult, Settled, Vote, reviewer_quality

CATEGORIES = {
    "answerability_group": ["ooc", "ic"],
    "category_code": list("ABCDEFGH"),
    "scenario": list("uvwxyz"),
}
FIELDS = ["decision", *CATEGORIES]


def synthetic(
    n_samples: int, n_reviewers: int, k: int, seed: int = 0
) -> tuple[list[Vote], dict[int, Settled], list[GoldResult]]:
    rng = random.Random(seed)
    votes: list[Vote] = []
    settled: dict[int, Settled] = {}
    for sample in range(n_samples):
        truth = {name: rng.choice(values) for name, values in CATEGORIES.items()}
        for reviewer in rng.sample(range(n_reviewers), k):
            rejected = rng.random() < 0.1
            labels: dict[str, str | None] = {"decision": "reject" if rejected else "accept"}
            for name, values in CATEGORIES.items():
                right = rng.random() < 0.85
                labels[name] = None if rejected else (truth[name] if right else rng.choice(values))
            votes.append(Vote(reviewer, sample, labels, rng.random() * 60, rejected))
        adjudicator = 99 if rng.random() < 0.2 else None
        settled[sample] = Settled({"decision": "accept", **truth}, adjudicated_by=adjudicator)
    gold = [
        GoldResult(reviewer, {name: rng.random() < 0.8 for name in FIELDS})
        for reviewer in range(n_reviewers)
        for _ in range(40)
    ]
    return votes, settled, gold


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--reviewers", type=int, default=10)
    parser.add_argument("--k", type=int, default=2)
    args = parser.parse_args()
    votes, settled, gold = synthetic(args.samples, args.reviewers, args.k)
    started = time.perf_counter()
    figures = reviewer_quality(
        fields=FIELDS,
        votes=votes,
        settled=settled,
        gold=gold,
        gold_counts=dict.fromkeys(range(args.reviewers), (30, 40)),
        skipped={},
        reviewers=list(range(args.reviewers)),
    )
    seconds = time.perf_counter() - started
    assert len(figures) == args.reviewers
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        json.dumps(
            {
                "samples": args.samples,
                "reviewers": args.reviewers,
                "k": args.k,
                "seconds": round(seconds, 2),
                "peak_rss_mb": round(peak_mb),
            }
        )
    )


if __name__ == "__main__":
    main()
