"""factory_boy factories for the sample list's saved views and kept layouts."""

from __future__ import annotations

import factory
from factory.declarations import LazyFunction, Sequence, SubFactory

from annotation.models import SampleListLayout, SavedView
from tests.annotation.factories import UserFactory, mmooc_dataset


class SavedViewFactory(factory.django.DjangoModelFactory[SavedView]):
    class Meta:
        model = SavedView

    dataset = LazyFunction(mmooc_dataset)
    owner = SubFactory(UserFactory, role="lead")
    name = Sequence(lambda n: f"view {n}")
    shared = False
    query = "status=imported"
    columns = LazyFunction(lambda: ["external_id", "status"])
    page_size = 50


class SampleListLayoutFactory(factory.django.DjangoModelFactory[SampleListLayout]):
    class Meta:
        model = SampleListLayout

    user = SubFactory(UserFactory)
    dataset = LazyFunction(mmooc_dataset)
    columns = LazyFunction(lambda: ["external_id", "question"])
    page_size = 25
