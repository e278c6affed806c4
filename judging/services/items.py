"""What a judge is shown for each item: prompt fields, media, and the rule judge's view."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.core.files.storage import default_storage

from annotation.models import MediaKind, Sample, SampleMedia
from judging import rule_judge
from judging.calls.client import AudioInput, ImageInput, build_messages
from judging.consensus import sample_answerability
from judging.models import Judge, JudgeTask, ModelResponse
from judging.prompts import get_prompt

_AUDIO_FORMATS = {
    "audio/wav": "wav",
    "audio/x-wav": "wav",
    "audio/wave": "wav",
    "audio/mpeg": "mp3",
}


def answerability_group(sample: Sample) -> str:
    """The sample's own group; only a sample without one is inferred from its answer."""
    return sample_answerability(sample.answerability_group, sample.reference_answer).group


def rule_sample(sample: Sample) -> rule_judge.Sample:
    """The rule judge's view of a sample."""
    options = {
        str(o.get("label", "")): str(o.get("text", ""))
        for o in sample.options or []
        if isinstance(o, dict)
    }
    return rule_judge.Sample(
        question=sample.question,
        reference_answer=sample.reference_answer,
        question_format=sample.question_format or "mcq",
        group=answerability_group(sample),
        category=sample.category_code or None,
        options=options,
        reference_reasoning=sample.explanation,
    )


def _options_text(sample: Sample) -> str:
    return "; ".join(
        f"{o.get('label', '')}. {o.get('text', '')}"
        for o in sample.options or []
        if isinstance(o, dict)
    )


def _media(links: Sequence[SampleMedia]) -> tuple[list[ImageInput], list[AudioInput]]:
    """Images as data URLs (or presigned URLs on S3); audio as base64 input_audio."""
    on_s3 = hasattr(default_storage, "bucket_name")
    images: list[ImageInput] = []
    audio: list[AudioInput] = []
    for link in links:
        asset = link.asset
        if asset.kind == MediaKind.IMAGE and on_s3:
            images.append(default_storage.url(asset.file.name))
            continue
        with default_storage.open(asset.file.name, "rb") as handle:
            data = handle.read()
        if asset.kind == MediaKind.IMAGE:
            images.append((data, asset.mime_type))
        else:
            audio.append(
                (data, _AUDIO_FORMATS.get(asset.mime_type, asset.mime_type.split("/")[-1]))
            )
    return images, audio


def answerability_messages(
    judge: Judge, sample: Sample, categories: Sequence[str]
) -> list[dict[str, Any]]:
    """The chat messages asking a judge whether a sample can be answered."""
    fields = {
        "question": sample.question or sample.speech_utterance,
        "options": _options_text(sample) or "none",
        "reference_answer": sample.reference_answer,
        "categories": ", ".join(categories) or "none",
        "image_description": sample.image_description,
        "audio_description": sample.audio_description,
    }
    template = get_prompt(JudgeTask.ANSWERABILITY, judge.prompt_version)
    if judge.text_only:
        return build_messages(template, fields, text_only=True)
    images, audio = _media(list(sample.media_links.all()))
    return build_messages(template, fields, images, audio)


def scoring_messages(judge: Judge, task: str, response: ModelResponse) -> list[dict[str, Any]]:
    """The chat messages asking a judge to score (or label) one model response."""
    sample = response.sample
    fields: dict[str, object] = {
        "question": sample.question or sample.speech_utterance,
        "reference_answer": sample.reference_answer,
        "reference_reasoning": sample.explanation,
        "response": response.response,
        "speech": sample.speech_utterance,
        "image_description": sample.image_description,
        "audio_description": sample.audio_description,
    }
    template = get_prompt(task, judge.prompt_version)
    # The benchmarks' judge prompts are textual: the reference stands in for the media.
    return build_messages(template, fields, text_only=judge.text_only)
