from django.contrib import admin

from annotation.models import (
    Dataset,
    DatasetMembership,
    DuplicatePair,
    ImportedVersion,
    ImportJob,
    ImportRowError,
    MediaAsset,
    Sample,
    SampleBulkJob,
    SampleListLayout,
    SampleMedia,
    SampleNote,
    SampleRevision,
    SavedView,
    Snapshot,
    SnapshotContent,
    SnapshotEntry,
    TaxonomyTerm,
    WebhookAttempt,
    WebhookDelivery,
    WebhookEndpoint,
    WebhookWatermark,
)


class TermInline(admin.TabularInline[TaxonomyTerm, Dataset]):
    model = TaxonomyTerm
    extra = 0


class MembershipInline(admin.TabularInline[DatasetMembership, Dataset]):
    model = DatasetMembership
    extra = 0
    autocomplete_fields = ["user"]


@admin.register(Dataset)
class DatasetAdmin(admin.ModelAdmin[Dataset]):
    list_display = ["name", "kind", "version", "preset", "created_at"]
    search_fields = ["name"]
    inlines = [TermInline, MembershipInline]


@admin.register(TaxonomyTerm)
class TaxonomyTermAdmin(admin.ModelAdmin[TaxonomyTerm]):
    list_display = ["dataset", "kind", "code", "name", "name_zh", "parent_code"]
    list_filter = ["kind", "dataset"]
    list_select_related = ["dataset"]


@admin.register(DatasetMembership)
class DatasetMembershipAdmin(admin.ModelAdmin[DatasetMembership]):
    list_display = ["dataset", "user", "added_at"]
    list_select_related = ["dataset", "user"]


@admin.register(MediaAsset)
class MediaAssetAdmin(admin.ModelAdmin[MediaAsset]):
    list_display = ["sha256", "kind", "mime_type", "size_bytes", "width", "height", "derived_at"]
    list_filter = ["kind"]
    search_fields = ["sha256"]
    readonly_fields = ["sha256", "peaks"]


class SampleMediaInline(admin.TabularInline[SampleMedia, Sample]):
    model = SampleMedia
    extra = 0
    raw_id_fields = ["asset"]


@admin.register(Sample)
class SampleAdmin(admin.ModelAdmin[Sample]):
    list_display = ["external_id", "dataset", "status", "category_code", "question_format"]
    list_filter = ["status", "dataset"]
    list_select_related = ["dataset"]
    search_fields = ["external_id", "question"]
    raw_id_fields = ["pair"]
    inlines = [SampleMediaInline]


@admin.register(SampleRevision)
class SampleRevisionAdmin(admin.ModelAdmin[SampleRevision]):
    list_display = ["sample", "number", "source", "changed_by", "changed_at"]
    list_select_related = ["sample", "changed_by"]
    raw_id_fields = ["sample"]


@admin.register(SampleMedia)
class SampleMediaAdmin(admin.ModelAdmin[SampleMedia]):
    list_display = ["sample", "role", "position", "asset"]
    list_select_related = ["sample", "asset"]
    raw_id_fields = ["sample", "asset"]


@admin.register(ImportedVersion)
class ImportedVersionAdmin(admin.ModelAdmin[ImportedVersion]):
    list_display = ["sample", "job", "updated_at"]
    list_select_related = ["sample", "job"]
    raw_id_fields = ["sample", "job"]


@admin.register(SampleNote)
class SampleNoteAdmin(admin.ModelAdmin[SampleNote]):
    list_display = ["sample", "key", "updated_at"]
    list_filter = ["key"]
    list_select_related = ["sample"]
    raw_id_fields = ["sample"]


class ImportRowErrorInline(admin.TabularInline[ImportRowError, ImportJob]):
    model = ImportRowError
    extra = 0
    readonly_fields = ["row", "external_id", "message"]


@admin.register(ImportJob)
class ImportJobAdmin(admin.ModelAdmin[ImportJob]):
    list_display = ["id", "dataset", "format", "status", "rows_done", "imported", "rejected"]
    list_filter = ["status", "format"]
    list_select_related = ["dataset"]
    inlines = [ImportRowErrorInline]


@admin.register(DuplicatePair)
class DuplicatePairAdmin(admin.ModelAdmin[DuplicatePair]):
    list_display = ["dataset", "original", "sample", "image_distance", "job", "created_at"]
    list_select_related = ["dataset", "original", "sample", "job"]
    raw_id_fields = ["original", "sample", "job"]


@admin.register(ImportRowError)
class ImportRowErrorAdmin(admin.ModelAdmin[ImportRowError]):
    list_display = ["job", "row", "external_id", "message"]
    list_select_related = ["job"]
    raw_id_fields = ["job"]


@admin.register(SampleBulkJob)
class SampleBulkJobAdmin(admin.ModelAdmin[SampleBulkJob]):
    list_display = ["id", "dataset", "action", "status", "selected", "changed", "created_at"]
    list_filter = ["status", "action"]
    list_select_related = ["dataset"]
    readonly_fields = ["params"]


@admin.register(SavedView)
class SavedViewAdmin(admin.ModelAdmin[SavedView]):
    list_display = ["name", "dataset", "owner", "shared", "updated_at"]
    list_filter = ["shared"]
    list_select_related = ["dataset", "owner"]


@admin.register(SampleListLayout)
class SampleListLayoutAdmin(admin.ModelAdmin[SampleListLayout]):
    list_display = ["user", "dataset", "page_size", "updated_at"]
    list_select_related = ["user", "dataset"]


@admin.register(Snapshot)
class SnapshotAdmin(admin.ModelAdmin[Snapshot]):
    list_display = ["name", "dataset", "format", "status", "done", "created_at"]
    list_filter = ["status", "format"]
    list_select_related = ["dataset"]
    raw_id_fields = ["previous"]


@admin.register(SnapshotEntry)
class SnapshotEntryAdmin(admin.ModelAdmin[SnapshotEntry]):
    list_display = ["snapshot", "external_id", "content_hash"]
    list_select_related = ["snapshot"]
    raw_id_fields = ["snapshot", "sample"]


@admin.register(SnapshotContent)
class SnapshotContentAdmin(admin.ModelAdmin[SnapshotContent]):
    list_display = ["content_hash"]
    search_fields = ["content_hash"]
    readonly_fields = ["fields"]


@admin.register(WebhookEndpoint)
class WebhookEndpointAdmin(admin.ModelAdmin[WebhookEndpoint]):
    list_display = ["url", "dataset", "enabled", "created_at"]
    list_filter = ["enabled"]
    # The signing secrets are shown once, on the site's page; never here.
    exclude = ["secret", "previous_secret"]


@admin.register(WebhookDelivery)
class WebhookDeliveryAdmin(admin.ModelAdmin[WebhookDelivery]):
    list_display = ["message_id", "event", "endpoint", "status", "tries", "created_at"]
    list_filter = ["status", "event"]


@admin.register(WebhookAttempt)
class WebhookAttemptAdmin(admin.ModelAdmin[WebhookAttempt]):
    list_display = ["delivery", "number", "status_code", "started_at"]


@admin.register(WebhookWatermark)
class WebhookWatermarkAdmin(admin.ModelAdmin[WebhookWatermark]):
    list_display = ["dataset", "event", "seen_until"]
