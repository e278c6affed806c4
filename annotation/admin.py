from django.contrib import admin

from annotation.models import (
    Dataset,
    DatasetMembership,
    MediaAsset,
    Sample,
    SampleMedia,
    SampleRevision,
    TaxonomyTerm,
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
