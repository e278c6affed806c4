"""factory_boy factories for the annotation app, and small generated media."""

from __future__ import annotations

import io
from typing import Any

import factory
import numpy as np
import soundfile as sf
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, User
from factory.declarations import PostGenerationMethodCall, Sequence
from factory.helpers import post_generation
from PIL import Image

from annotation import services
from annotation.models import Dataset, DatasetKind, MediaAsset, Sample, SampleStatus
from core.roles import ANNOTATOR


def png_bytes(
    width: int = 64, height: int = 48, colour: tuple[int, int, int] = (200, 30, 30)
) -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", (width, height), colour).save(buffer, "PNG")
    return buffer.getvalue()


def wav_bytes(seconds: float = 1.0, rate: int = 8000, freq: float = 440.0) -> bytes:
    t = np.arange(int(seconds * rate)) / rate
    buffer = io.BytesIO()
    sf.write(buffer, (0.5 * np.sin(2 * np.pi * freq * t)).astype(np.float32), rate, format="WAV")
    return buffer.getvalue()


class UserFactory(factory.django.DjangoModelFactory[User]):
    class Meta:
        model = get_user_model()
        skip_postgeneration_save = True

    username = Sequence(lambda n: f"user{n}")
    password = PostGenerationMethodCall("set_password", "pw-for-tests-1")

    @post_generation  # type: ignore[untyped-decorator]
    def role(self, create: bool, extracted: str | None, **kwargs: Any) -> None:
        if extracted:
            self.groups.add(Group.objects.get_or_create(name=extracted)[0])  # type: ignore[attr-defined]
        self.save()  # type: ignore[attr-defined]

    @post_generation  # type: ignore[untyped-decorator]
    def member_of(self, create: bool, extracted: Dataset | None, **kwargs: Any) -> None:
        """``UserFactory.create(member_of=dataset)``: an annotating member of the dataset."""
        if extracted is not None:
            services.dataset_add_member(dataset=extracted, user=self, roles={ANNOTATOR})  # type: ignore[arg-type]


class DatasetFactory(factory.django.DjangoModelFactory[Dataset]):
    class Meta:
        model = Dataset

    name = Sequence(lambda n: f"dataset-{n}")
    kind = DatasetKind.IMAGE_QUESTION


def mmooc_dataset(**kwargs: Any) -> Dataset:
    return services.dataset_create(
        name=kwargs.pop("name", f"mmooc-{Dataset.objects.count()}"),
        kind=DatasetKind.IMAGE_QUESTION,
        preset="mmooc",
        **kwargs,
    )


def image_asset(colour: tuple[int, int, int] = (200, 30, 30), **kwargs: Any) -> MediaAsset:
    return services.media_asset_store(data=png_bytes(colour=colour, **kwargs), kind="image")


_counter = iter(range(10**9))


def mmooc_sample(dataset: Dataset | None = None, **overrides: Any) -> Sample:
    """An MMOOC out-of-context multiple-choice sample with a distinct image."""
    dataset = dataset or mmooc_dataset()
    n = next(_counter)
    fields: dict[str, Any] = {
        "external_id": f"q{n}",
        "question": "What colour is the car behind the house?",
        "question_format": "mcq",
        "options": [
            {"label": "A", "text": "Red"},
            {"label": "B", "text": "Blue"},
            {"label": "C", "text": "None of the above"},
        ],
        "reference_answer": "C",
        "explanation": "There is no car in the image.",
        "answerability_group": "ooc",
        "category_code": "VFP",
        "scenario": "coarse_perception",
        "status": SampleStatus.PENDING_REVIEW,
        "media": [("image", image_asset(colour=(n % 256, (n // 256) % 256, 77)))],
    }
    fields.update(overrides)
    return services.sample_create(dataset=dataset, **fields)
