"""Dataset services a lead uses from the settings pages: members by username, delete, archive."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation import extensions, services
from annotation.extensions import review_queue_register
from annotation.imports import services as import_services
from annotation.models import Dataset, DatasetMembership, Sample
from tests.annotation.factories import UserFactory, mmooc_dataset, mmooc_sample

pytestmark = pytest.mark.django_db


def _code(exc: pytest.ExceptionInfo[ValidationError]) -> str | None:
    return exc.value.code


def test_add_member_by_username_adds_annotators_and_auditors(annotator: Any, auditor: Any) -> None:
    """An annotator and an auditor are added by their usernames (surrounding blanks ignored)."""
    dataset = mmooc_dataset()
    services.dataset_add_member_by_username(dataset=dataset, username=f" {annotator.username} ")
    services.dataset_add_member_by_username(dataset=dataset, username=auditor.username)
    assert set(dataset.members.values_list("username", flat=True)) == {
        annotator.username,
        auditor.username,
    }


@pytest.mark.parametrize(
    ("who", "code", "text"),
    [
        ("nobody", "unknown_user", "There is no user named “nobody”."),
        ("lead", "no_member_role", "is neither an annotator nor an auditor"),
        ("plain", "no_member_role", "is neither an annotator nor an auditor"),
        ("member", "already_member", "is already a member of this dataset"),
    ],
)
def test_add_member_by_username_refuses_with_a_reason(
    annotator: Any, lead: Any, who: str, code: str, text: str
) -> None:
    """An unknown name, a user without the annotator or auditor role, or an existing member is
    refused with a message that says which, and adds nothing."""
    dataset = mmooc_dataset()
    services.dataset_add_member(dataset=dataset, user=annotator)
    username = {
        "nobody": "nobody",
        "lead": lead.username,
        "plain": UserFactory.create().username,
        "member": annotator.username,
    }[who]
    with pytest.raises(ValidationError) as exc:
        services.dataset_add_member_by_username(dataset=dataset, username=username)
    assert _code(exc) == code
    assert text in exc.value.messages[0]
    assert DatasetMembership.objects.filter(dataset=dataset).count() == 1


def test_remove_member_ends_access(annotator: Any) -> None:
    """A removed member no longer belongs to the dataset."""
    dataset = mmooc_dataset()
    services.dataset_add_member(dataset=dataset, user=annotator)
    services.dataset_remove_member(dataset=dataset, user=annotator)
    assert not dataset.members.exists()


class _Reviewed:
    def sync(self, *, dataset: Dataset, sample_ids: Sequence[int] | None = None) -> int:
        return 0

    def refresh(self, *, dataset_id: int, sample_ids: Sequence[int] | None = None) -> int:
        return 0

    def reviewed_by(self, *, dataset: Dataset, username: str) -> Any:
        return Sample.objects.none().values("pk")

    def has_reviews(self, *, dataset: Dataset) -> bool:
        return True

    def assignees_check(self, *, dataset: Dataset, usernames: Any) -> None:
        return None

    def assign(self, *, dataset: Dataset, sample_ids: Any, usernames: Any, by: Any) -> int:
        return 0

    def unassign(self, *, dataset: Dataset, sample_ids: Any, usernames: Any) -> int:
        return 0


def test_delete_removes_a_dataset_without_reviews() -> None:
    """A dataset nobody reviewed is deleted with its samples and terms."""
    dataset = mmooc_dataset()
    mmooc_sample(dataset)
    assert services.dataset_deletable(dataset=dataset)
    services.dataset_delete(dataset=dataset)
    assert not Dataset.objects.filter(pk=dataset.pk).exists()
    assert not Sample.objects.exists()


def test_delete_removes_the_uploaded_sources_once_committed(
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The files uploaded for the dataset's imports leave storage with it (after the commit)."""
    dataset = mmooc_dataset()
    upload = SimpleUploadedFile("rows.jsonl", b"{}\n")
    job = import_services.import_job_create(
        dataset=dataset, format="jsonl", source_kind="upload", upload=upload, queue=False
    )
    assert default_storage.exists(job.source)
    with django_capture_on_commit_callbacks(execute=True):
        services.dataset_delete(dataset=dataset)
    assert not default_storage.exists(job.source)


def test_delete_is_refused_when_the_review_port_reports_reviews() -> None:
    """Annotation asks review, through its port, whether the dataset holds reviews; if so the
    deletion is refused with a message that points to archiving, and nothing is deleted."""
    dataset = mmooc_dataset()
    mmooc_sample(dataset)
    plugged = extensions._queue
    review_queue_register(_Reviewed())
    try:
        assert not services.dataset_deletable(dataset=dataset)
        with pytest.raises(ValidationError) as exc:
            services.dataset_delete(dataset=dataset)
    finally:
        review_queue_register(plugged)
    assert _code(exc) == "has_reviews"
    assert "archive it instead" in exc.value.messages[0]
    assert Sample.objects.filter(dataset=dataset).count() == 1


def test_archived_dataset_refuses_imports(lead: Any) -> None:
    """An archived dataset takes no import, with a message naming it; unarchived, it does."""
    dataset = mmooc_dataset(name="old")
    services.dataset_set_archived(dataset=dataset, archived=True)
    dataset.refresh_from_db()
    assert dataset.archived
    upload = SimpleUploadedFile("rows.jsonl", b"{}\n")
    with pytest.raises(ValidationError) as exc:
        import_services.import_job_create(
            dataset=dataset, format="jsonl", source_kind="upload", upload=upload, queue=False
        )
    assert exc.value.messages == ["“old” is archived: nothing can be imported into it."]
    services.dataset_set_archived(dataset=dataset, archived=False)
    job = import_services.import_job_create(
        dataset=dataset, format="jsonl", source_kind="upload", upload=upload, queue=False
    )
    assert job.pk
