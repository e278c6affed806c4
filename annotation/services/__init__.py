"""Writes and business rules of the annotation app.

Import from the submodules' names re-exported here: ``from annotation import services``.
"""

from annotation.services.datasets import (
    dataset_add_member,
    dataset_create,
    dataset_remove_member,
)
from annotation.services.media import media_asset_derive, media_asset_store
from annotation.services.samples import (
    LABEL_FIELDS,
    SampleInvalid,
    sample_create,
    sample_flag_judges,
    sample_link_pair,
    sample_set_note,
    sample_set_status,
    sample_update,
)

__all__ = [
    "LABEL_FIELDS",
    "SampleInvalid",
    "dataset_add_member",
    "dataset_create",
    "dataset_remove_member",
    "media_asset_derive",
    "media_asset_store",
    "sample_create",
    "sample_flag_judges",
    "sample_link_pair",
    "sample_set_note",
    "sample_set_status",
    "sample_update",
]
