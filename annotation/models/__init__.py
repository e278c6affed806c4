"""The data of a benchmark and its life: datasets, taxonomies, samples, media and history.

One model serves all three benchmarks (MMOOC, MCBench, MMT-Bench): the taxonomy is data held by
each dataset, the tri-modal fields are empty on image-question samples and vice versa. The
models live in one module per theme; the apps import them from here.
"""

from annotation.models.datasets import (
    MEMBER_ROLE_FIELDS,
    Dataset,
    DatasetKind,
    DatasetMembership,
    TaxonomyTerm,
    TermKind,
    term_kinds,
)
from annotation.models.jobs import (
    ImportedVersion,
    ImportJob,
    ImportJobStatus,
    ImportKind,
    ImportRowError,
    ImportSourceKind,
    SampleBulkJob,
)
from annotation.models.samples import (
    ChangeSource,
    DuplicatePair,
    MediaAsset,
    MediaKind,
    MediaRole,
    NoteKey,
    Pipeline,
    SafetyLabel,
    Sample,
    SampleMedia,
    SampleNote,
    SampleRevision,
    SampleStatus,
)
from annotation.models.saved_views import SampleListLayout, SavedView
from annotation.models.snapshots import Snapshot, SnapshotContent, SnapshotEntry
from annotation.models.webhooks import (
    SUBSCRIBABLE,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookEvent,
    WebhookWatermark,
)
from core.jobs import JobStatus

__all__ = [
    "MEMBER_ROLE_FIELDS",
    "SUBSCRIBABLE",
    "ChangeSource",
    "Dataset",
    "DatasetKind",
    "DatasetMembership",
    "DuplicatePair",
    "ImportJob",
    "ImportJobStatus",
    "ImportKind",
    "ImportRowError",
    "ImportSourceKind",
    "ImportedVersion",
    "JobStatus",
    "MediaAsset",
    "MediaKind",
    "MediaRole",
    "NoteKey",
    "Pipeline",
    "SafetyLabel",
    "Sample",
    "SampleBulkJob",
    "SampleListLayout",
    "SampleMedia",
    "SampleNote",
    "SampleRevision",
    "SampleStatus",
    "SavedView",
    "Snapshot",
    "SnapshotContent",
    "SnapshotEntry",
    "TaxonomyTerm",
    "TermKind",
    "WebhookAttempt",
    "WebhookDelivery",
    "WebhookEndpoint",
    "WebhookEvent",
    "WebhookWatermark",
    "term_kinds",
]
