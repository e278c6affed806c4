"""Writes and business rules of the annotation app.

Import from the submodules' names re-exported here: ``from annotation import services``.
"""

from annotation.services.bulk import (
    BulkResult,
    dataset_send_imports_on,
    samples_bulk_action,
    samples_move_in_review,
    samples_restore,
    samples_send_to_review,
    samples_set_priority,
    samples_take_down,
)
from annotation.services.bulk_jobs import (
    sample_bulk_job_create,
    sample_bulk_job_run,
    samples_bulk_start,
)
from annotation.services.datasets import (
    dataset_add_member,
    dataset_add_member_by_username,
    dataset_create,
    dataset_deletable,
    dataset_delete,
    dataset_member_set_roles,
    dataset_remove_member,
    dataset_set_archived,
    dataset_set_auto_send,
    dataset_set_instructions,
    member_roles,
)
from annotation.services.media import media_asset_derive, media_asset_store, media_assets_derive
from annotation.services.samples import (
    LABEL_FIELDS,
    SampleInvalid,
    sample_advance_status,
    sample_create,
    sample_flag_judges,
    sample_link_pair,
    sample_mark_inferred_answerability,
    sample_set_note,
    sample_set_status,
    sample_update,
)
from annotation.services.taxonomy import (
    taxonomy_load_preset,
    taxonomy_term_add,
    taxonomy_term_rename,
    taxonomy_term_set_retired,
)

__all__ = [
    "LABEL_FIELDS",
    "BulkResult",
    "SampleInvalid",
    "dataset_add_member",
    "dataset_add_member_by_username",
    "dataset_create",
    "dataset_deletable",
    "dataset_delete",
    "dataset_member_set_roles",
    "dataset_remove_member",
    "dataset_send_imports_on",
    "dataset_set_archived",
    "dataset_set_auto_send",
    "dataset_set_instructions",
    "media_asset_derive",
    "media_asset_store",
    "media_assets_derive",
    "member_roles",
    "sample_advance_status",
    "sample_bulk_job_create",
    "sample_bulk_job_run",
    "sample_create",
    "sample_flag_judges",
    "sample_link_pair",
    "sample_mark_inferred_answerability",
    "sample_set_note",
    "sample_set_status",
    "sample_update",
    "samples_bulk_action",
    "samples_bulk_start",
    "samples_move_in_review",
    "samples_restore",
    "samples_send_to_review",
    "samples_set_priority",
    "samples_take_down",
    "taxonomy_load_preset",
    "taxonomy_term_add",
    "taxonomy_term_rename",
    "taxonomy_term_set_retired",
]

from annotation.services.samples import sample_content_hash

__all__ += [
    "sample_content_hash",
]
