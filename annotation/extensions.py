"""Extension points: apps built on annotation add to its pages without annotation importing
them (review adds each dataset's work left for the reader to the dataset list)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.utils.functional import Promise

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from annotation.models import Dataset


@dataclass(frozen=True)
class DatasetListColumn:
    """A column of the dataset list: its heading, the template of a cell (given ``value``),
    and a loader that returns the values of a whole page of datasets at once, by dataset id."""

    heading: str | Promise
    template: str
    load: Callable[..., Mapping[int, Any]]  # load(*, user, datasets) -> {dataset id: value}


_dataset_list_columns: list[DatasetListColumn] = []


def dataset_list_column_register(column: DatasetListColumn) -> None:
    """Add a column to the dataset list (an app calls this from its ``AppConfig.ready``)."""
    if column not in _dataset_list_columns:
        _dataset_list_columns.append(column)


def dataset_list_columns() -> list[DatasetListColumn]:
    return list(_dataset_list_columns)


def dataset_list_cells(
    *, user: User | None, datasets: list[Dataset]
) -> list[tuple[Dataset, list[tuple[str, Any]]]]:
    """Each dataset with its extra cells: (template, value) per registered column."""
    columns = dataset_list_columns()
    loaded = [column.load(user=user, datasets=datasets) if user else {} for column in columns]
    return [
        (dataset, [(c.template, v.get(dataset.pk)) for c, v in zip(columns, loaded, strict=True)])
        for dataset in datasets
    ]
