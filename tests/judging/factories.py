"""Factories for the judging app: judges, evaluated models' responses, bulk items, LogicVista."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import factory
from factory.declarations import Sequence

from annotation import services as annotation_services
from annotation.formats.logicvista import iter_logicvista
from annotation.formats.records import ParsedSample
from annotation.models import Dataset, DatasetKind, Sample, SampleStatus
from judging import services
from judging.models import Judge, JudgeJob, JudgeKind, ModelResponse

LOGICVISTA = Path(__file__).resolve().parents[3] / "shared" / "data" / "logicvista"


class JudgeFactory(factory.django.DjangoModelFactory[Judge]):
    class Meta:
        model = Judge

    name = Sequence(lambda n: f"judge-{n}")
    kind = JudgeKind.OPENAI
    base_url = "http://127.0.0.1:9/v1"
    model = "fake-judge"
    max_concurrency = 8
    timeout_s = 5.0
    max_attempts = 4
    backoff_base_s = 0.01
    backoff_max_s = 0.05
    retry_after_max_s = 0.05
    family = "fake"


def rule_judge() -> Judge:
    """The built-in rule judge (made by a data migration; remade after a transactional flush)."""
    judge, _created = Judge.objects.get_or_create(
        name="rule",
        defaults={"kind": "rule", "family": "rule", "prompt_version": "rule", "max_concurrency": 1},
    )
    return judge


def fake_judge(base_url: str, **overrides: Any) -> Judge:
    """An endpoint judge on the fake server, with short timeouts and backoffs for tests."""
    return JudgeFactory.create(base_url=base_url, **overrides)


def bulk_samples(dataset: Dataset, n: int, **fields: Any) -> list[Sample]:
    """Many text-only samples at once (bulk insert; tests of scale need no media)."""
    rows = [
        Sample(
            dataset=dataset,
            external_id=f"bulk-{i}",
            question=f"Question number {i}: what is shown?",
            question_format="mcq",
            options=[{"label": "A", "text": "yes"}, {"label": "B", "text": "no"}],
            reference_answer="A" if i % 3 else "I can't answer",
            explanation=f"Because of detail {i}.",
            answerability_group="shifted_ic" if i % 3 else "ooc",
            category_code="MP" if i % 3 else "VFP",
            scenario="coarse_perception",
            status=SampleStatus.PENDING_REVIEW,
            **fields,
        )
        for i in range(n)
    ]
    Sample.objects.bulk_create(rows, batch_size=1000)
    return list(Sample.objects.filter(dataset=dataset).order_by("id"))


def bulk_responses(samples: list[Sample], models: list[str]) -> list[ModelResponse]:
    """One distinct response per sample and model."""
    rows = [
        ModelResponse(
            dataset_id=sample.dataset_id,
            sample=sample,
            model_name=model,
            response=f"{model} says {'A' if (sample.pk + k) % 2 else 'I cannot tell'} for "
            f"{sample.external_id} because the picture shows item {sample.pk}.",
        )
        for sample in samples
        for k, model in enumerate(models)
    ]
    ModelResponse.objects.bulk_create(rows, batch_size=1000)
    return list(ModelResponse.objects.filter(sample__in=samples).order_by("id"))


def logicvista_dataset(name: str = "logicvista", limit: int | None = None) -> Dataset:
    """The real LogicVista items as samples of a new dataset (images stored for real); the
    first ``limit`` valid ones when given.

    160 of the 161 items are valid; v1_382 has neither question nor answer and is refused by
    the annotation services, as the sample importer refuses it.
    """
    dataset = annotation_services.dataset_create(name=name, kind=DatasetKind.IMAGE_QUESTION)
    made = 0
    for parsed in iter_logicvista(LOGICVISTA / "dataset.json"):
        assert isinstance(parsed, ParsedSample), parsed
        if limit is not None and made >= limit:
            break
        media = []
        for ref in parsed.media:
            assert ref.path
            data = (LOGICVISTA / ref.path).read_bytes()
            asset = annotation_services.media_asset_store(
                data=data, kind="image", source_url=parsed.source_url, licence="Apache-2.0"
            )
            media.append(("image", asset))
        if not parsed.question or not parsed.reference_answer:
            continue
        made += 1
        annotation_services.sample_create(
            dataset=dataset,
            external_id=parsed.external_id,
            media=media,
            extra=parsed.extra,
            **{
                key: getattr(parsed, key)
                for key in (
                    "question",
                    "question_format",
                    "options",
                    "reference_answer",
                    "explanation",
                    "category_code",
                    "source_dataset",
                )
            },
        )
    return dataset


def jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def run_job(capture: Any, **kwargs: Any) -> JudgeJob:
    """Start a judge job with its on-commit work run at once (`capture` is
    django_capture_on_commit_callbacks); the job as it ended."""
    with capture(execute=True):
        job = services.judge_job_start(**kwargs)
    job.refresh_from_db()
    return job
