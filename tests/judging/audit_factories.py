"""Factories for the calibration audit: judged datasets with seeded verdicts, audit sets."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import numpy as np

from annotation import services as annotation_services
from annotation.models import Dataset, DatasetKind, Sample
from judging.audit import services
from judging.models import AuditItem, AuditSet, AuditTask, Judge, JudgeTask, ModelResponse, Verdict
from tests.annotation.factories import mmooc_dataset
from tests.judging.factories import JudgeFactory, bulk_responses, bulk_samples

# A lead's design of an audit set on the planner page (its form's fields).
PLANNER_DESIGN: dict[str, str | int] = {
    "task": "scoring",
    "size": 20,
    "method": "sqrt",
    "floor": 3,
    "oversample_rare": 2,
    "oversample_disagree": 1,
    "seed": 4,
    "double_rating_fraction": "0.1",
    "name": "",
}

QUARTERS = (0.0, 0.25, 0.5, 0.75, 1.0)


def judges(names: tuple[str, ...] = ("gpt-judge", "qwen-judge", "claude-judge")) -> list[Judge]:
    """Judges whose family is the first part of their name ("gpt", "qwen", …)."""
    return [
        Judge.objects.filter(name=name).first()
        or JudgeFactory.create(name=name, family=name.split("-")[0])
        for name in names
    ]


def scoring_dataset(
    n_samples: int = 40,
    models: tuple[str, ...] = ("gpt-4o", "qwen3-vl"),
    judge_names: tuple[str, ...] = ("gpt-judge", "qwen-judge", "claude-judge"),
    repeats: int = 1,
    seed: int = 0,
    dataset: Dataset | None = None,
    samples: list[Sample] | None = None,
) -> tuple[Dataset, list[Judge]]:
    """An MMOOC dataset whose responses every judge scored ``repeats`` times (seeded noise);
    the responses are to ``samples`` (of ``dataset``) when given, else to new text samples."""
    dataset = dataset or mmooc_dataset()
    samples = samples if samples is not None else bulk_samples(dataset, n_samples)
    responses = bulk_responses(samples, list(models))
    panel = judges(judge_names)
    rng = np.random.default_rng(seed)
    rows = []
    for response in responses:
        truth_answer = int(rng.random() < 0.7)
        truth_reasoning = float(rng.choice(QUARTERS))
        for judge in panel:
            for repeat in range(repeats):
                answer = truth_answer if rng.random() < 0.85 else 1 - truth_answer
                step = int(rng.integers(-1, 2)) if rng.random() < 0.3 else 0
                reasoning = QUARTERS[min(4, max(0, QUARTERS.index(truth_reasoning) + step))]
                rows.append(
                    Verdict(
                        judge=judge,
                        task=JudgeTask.MMOOC_SCORING,
                        prompt_version="v1",
                        repeat=repeat,
                        sample_id=response.sample_id,
                        response=response,
                        answer_score=answer,
                        reasoning_score=reasoning,
                        rationale="judge rationale text",
                    )
                )
    Verdict.objects.bulk_create(rows, batch_size=2000)
    return dataset, panel


def answerability_dataset(n_samples: int = 30, seed: int = 0) -> tuple[Dataset, list[Judge]]:
    """Samples labelled answerable/unanswerable by three judges."""
    dataset = mmooc_dataset()
    samples = bulk_samples(dataset, n_samples)
    panel = judges()
    rng = np.random.default_rng(seed)
    rows = []
    for sample in samples:
        truth = "unanswerable" if sample.answerability_group == "ooc" else "answerable"
        for judge in panel:
            flip = rng.random() < 0.15
            label = ({"answerable", "unanswerable"} - {truth}).pop() if flip else truth
            rows.append(
                Verdict(
                    judge=judge,
                    task=JudgeTask.ANSWERABILITY,
                    prompt_version="v1",
                    sample=sample,
                    label=label,
                )
            )
    Verdict.objects.bulk_create(rows)
    return dataset, panel


def safety_dataset(n_samples: int = 20, seed: int = 0) -> tuple[Dataset, list[Judge]]:
    """Tri-modal scenarios with one model's responses labelled safe/unsafe by three judges."""
    dataset = annotation_services.dataset_create(
        name=f"mcbench-{Dataset.objects.count()}", kind=DatasetKind.TRIMODAL
    )
    rows = [
        Sample(
            dataset=dataset,
            external_id=f"s{i}",
            speech_utterance=f"Can I leave the stove on while I sleep? ({i})",
            image_description="A kitchen with a stove.",
            audio_description="Sizzling followed by a smoke alarm.",
            safety_label="unsafe" if i % 2 else "safe",
            safety_category="physical_harm",
            safety_subcategory="fire",
        )
        for i in range(n_samples)
    ]
    Sample.objects.bulk_create(rows)
    samples = list(Sample.objects.filter(dataset=dataset).order_by("id"))
    responses = bulk_responses(samples, ["gpt-4o"])
    panel = judges()
    rng = np.random.default_rng(seed)
    verdicts = []
    for response in responses:
        truth = "unsafe" if rng.random() < 0.3 else "safe"
        for judge in panel:
            label = truth if rng.random() < 0.85 else ({"safe", "unsafe"} - {truth}).pop()
            verdicts.append(
                Verdict(
                    judge=judge,
                    task=JudgeTask.MCBENCH_SAFETY,
                    prompt_version="v1",
                    sample_id=response.sample_id,
                    response=response,
                    label=label,
                )
            )
    Verdict.objects.bulk_create(verdicts)
    return dataset, panel


def draw(dataset: Dataset, **overrides: Any) -> AuditSet:
    fields: dict[str, Any] = {
        "name": f"audit-{AuditSet.objects.count()}",
        "task": AuditTask.SCORING,
        "size": 30,
        "seed": 7,
        "double_rating_fraction": 0.2,
    }
    fields.update(overrides)
    return services.audit_set_draw(dataset=dataset, **fields)


def rubric_for(task: str, rng: np.random.Generator | None = None) -> dict[str, Any]:
    """A valid rating of the task's rubric (random when a generator is given)."""
    pick: Callable[[list[Any]], Any] = (
        (lambda options: options[int(rng.integers(len(options)))]) if rng else (lambda o: o[0])
    )
    if task == AuditTask.SCORING:
        return {"answer_score": pick([1, 0]), "reasoning_score": pick([0.75, 0.5, 1.0, 0.25, 0.0])}
    if task == AuditTask.ANSWERABILITY:
        return {"refused": pick([1, 0])}
    return {"safety_label": pick(["unsafe", "safe"])}


def rate_all(audit_set: AuditSet, auditors: list[Any], seed: int = 0) -> int:
    """Every auditor claims and rates until nothing is left; returns the number of ratings."""
    rng = np.random.default_rng(seed)
    made = 0
    progressed = True
    while progressed:
        progressed = False
        for auditor in auditors:
            lease = services.audit_claim(audit_set=audit_set, auditor=auditor)
            if lease is None:
                continue
            item = AuditItem.objects.select_related("audit_set").get(pk=lease.item_id)
            services.audit_rating_submit(
                auditor=auditor,
                item=item,
                submission_uuid=uuid.uuid4(),
                seconds_spent=float(rng.integers(5, 60)),
                **rubric_for(audit_set.task, rng),
            )
            made += 1
            progressed = True
    return made


def add_member(dataset: Dataset, user: Any) -> None:
    annotation_services.dataset_add_member(dataset=dataset, user=user)


__all__ = [
    "ModelResponse",
    "add_member",
    "answerability_dataset",
    "draw",
    "rate_all",
    "rubric_for",
    "safety_dataset",
    "scoring_dataset",
]
