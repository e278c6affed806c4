"""Benchmark: every reviewer's quality figures (the Reviewers page's computation).

Synthetic, seeded data: n samples each reviewed by k of R reviewers, four fields (the
decision and three categorical labels, 85 % accurate, 10 % rejections), a fifth of the
samples adjudicated, 40 gold answers per reviewer. Prints the seconds and the peak resident
memory of the process as one JSON object on the last line.

With ``--db URL`` (a PostgreSQL database, created and migrated if needed), the same data is
written to a dataset (without the gold answers), and the bench measures what the site does
with it: the worker's computation (``reviewer_quality_compute``, in a child process of its
own, whose peak resident memory is reported) and the Reviewers page's response time, as a
lead, on a first visit (nothing stored: it only queues the computation) and with the figures
stored (median of five). The last line adds ``compute_seconds``, ``compute_peak_rss_mb``,
``page_first_ms``, ``page_ms`` and ``api_ms``. ``--reuse`` keeps an earlier run's dataset of
the same size.

Run: .venv/bin/python bench/bench_reviewer_quality.py [--samples 2000] [--reviewers 10] [--k 2]
     [--db postgres://postgres@127.0.0.1:5432/bench_quality [--reuse]]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

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


def _pure(args: argparse.Namespace) -> dict[str, Any]:
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
    return {"seconds": round(seconds, 2), "peak_rss_mb": _peak_mb()}


def _peak_mb() -> int:
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)


def _django(db_url: str) -> None:
    os.environ["DATABASE_URL"] = db_url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.test")
    import django

    django.setup()


def _build(args: argparse.Namespace) -> int:
    """The synthetic reviews as a dataset's samples, slots, reviews and outcomes (reused with
    ``--reuse`` when a dataset of that name exists). Returns the dataset's id."""
    from django.contrib.auth.models import User

    from annotation.models import Dataset, DatasetKind, Sample
    from review.models import Outcome, Review, Slot

    name = f"bench reviewer quality {args.samples}x{args.k}"
    existing = Dataset.objects.filter(name=name).first()
    if existing is not None and args.reuse:
        return existing.pk
    Dataset.objects.filter(name=name).delete()
    dataset = Dataset.objects.create(name=name, kind=DatasetKind.IMAGE_QUESTION, preset="mmooc")
    reviewers = [
        User.objects.get_or_create(username=f"bench-reviewer-{r}")[0].pk
        for r in range(args.reviewers)
    ]
    votes, settled, _gold = synthetic(args.samples, args.reviewers, args.k)
    by_sample: dict[int, list[Vote]] = {}
    for vote in votes:
        by_sample.setdefault(vote.unit, []).append(vote)
    batch = 2000
    for first in range(0, args.samples, batch):
        units = range(first, min(first + batch, args.samples))
        samples = Sample.objects.bulk_create(
            Sample(
                dataset=dataset,
                external_id=f"b{unit}",
                question="?",
                status="verified",
                **{f: settled[unit].labels[f] for f in CATEGORIES},
            )
            for unit in units
        )
        slots, reviews, outcomes = [], [], []
        for unit, sample in zip(units, samples, strict=True):
            outcome = settled[unit]
            outcomes.append(
                Outcome(
                    sample=sample,
                    dataset=dataset,
                    status="verified",
                    agreement=outcome.adjudicated_by is None,
                    adjudicated=outcome.adjudicated_by is not None,
                )
            )
            for position, vote in enumerate(by_sample[unit]):
                slot = Slot(
                    dataset=dataset,
                    sample=sample,
                    position=position,
                    reviewer_id=reviewers[vote.reviewer],
                    lease_expires_at="2000-01-01T00:00:00Z",
                    done=True,
                )
                slots.append(slot)
                edits = {
                    f: vote.labels[f]
                    for f in CATEGORIES
                    if vote.labels[f] is not None and vote.labels[f] != outcome.labels[f]
                }
                reviews.append(
                    Review(
                        slot=slot,
                        sample=sample,
                        dataset=dataset,
                        reviewer_id=reviewers[vote.reviewer],
                        client_uuid=uuid.uuid4(),
                        decision="reject" if vote.rejected else "accept",
                        reject_reason="invalid" if vote.rejected else "",
                        values=edits,
                        seconds_spent=vote.seconds,
                    )
                )
        Slot.objects.bulk_create(slots)
        Review.objects.bulk_create(reviews)
        Outcome.objects.bulk_create(outcomes)
    return int(dataset.pk)


def _compute_child(args: argparse.Namespace) -> dict[str, Any]:
    """Run in a child process: the worker's computation alone, and its peak memory."""
    _django(args.db)
    from annotation.models import Dataset
    from review.quality.computations import reviewer_quality_compute

    dataset = Dataset.objects.get(pk=args.dataset_id)
    started = time.perf_counter()
    row = reviewer_quality_compute(dataset=dataset)
    seconds = time.perf_counter() - started
    assert row is not None and row.result is not None, row and row.message
    return {"compute_seconds": round(seconds, 2), "compute_peak_rss_mb": _peak_mb()}


def _timed_get(client: Any, url: str) -> tuple[float, int]:
    started = time.perf_counter()
    status = client.get(url).status_code
    return (time.perf_counter() - started) * 1000, status


def _site(args: argparse.Namespace) -> dict[str, Any]:
    from bench.support import ensure_database

    ensure_database(args.db)
    _django(args.db)
    from django.contrib.auth.models import Group, User
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    from core import roles
    from review.models import ReviewerQualityComputation
    from review.quality import computations as quality_computations

    call_command("migrate", verbosity=0)
    built = time.perf_counter()
    dataset_id = _build(args)
    build_seconds = time.perf_counter() - built
    ReviewerQualityComputation.objects.filter(dataset_id=dataset_id).delete()
    quality_computations.computation_send = lambda pk: None  # no broker: the child computes it
    client = Client()
    lead, _created = User.objects.get_or_create(username="bench-quality-lead")
    lead.groups.add(Group.objects.get_or_create(name=roles.LEAD)[0])
    client.force_login(lead)
    page = reverse("review:reviewers", args=[dataset_id])
    first_ms, status = _timed_get(client, page)
    assert status == 200, status
    child = subprocess.run(
        [sys.executable, __file__, "--db", args.db, "--compute-dataset", str(dataset_id)],
        check=True,
        capture_output=True,
        text=True,
    )
    computed = json.loads(child.stdout.strip().splitlines()[-1])
    page_ms = statistics.median(_timed_get(client, page)[0] for _ in range(5))
    api = reverse("api_review_reviewers", args=[dataset_id])
    api_ms = statistics.median(_timed_get(client, api)[0] for _ in range(5))
    return {
        "build_seconds": round(build_seconds, 1),
        **computed,
        "page_first_ms": round(first_ms, 1),
        "page_ms": round(page_ms, 1),
        "api_ms": round(api_ms, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--samples", type=int, default=2000)
    parser.add_argument("--reviewers", type=int, default=10)
    parser.add_argument("--k", type=int, default=2)
    parser.add_argument("--db", help="a PostgreSQL URL: measure the site's computation and page")
    parser.add_argument("--reuse", action="store_true", help="keep an earlier run's dataset")
    parser.add_argument("--compute-dataset", dest="dataset_id", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dataset_id:
        print(json.dumps(_compute_child(args)))
        return
    figures = _pure(args) | (_site(args) if args.db else {})
    print(
        json.dumps({"samples": args.samples, "reviewers": args.reviewers, "k": args.k, **figures})
    )


if __name__ == "__main__":
    main()
