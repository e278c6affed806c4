"""A dataset's settings pages for its lead: members, taxonomy, and deleting or archiving it.

Annotators and auditors get a 403 page that says why.
"""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.http import require_http_methods, require_POST

from annotation import selectors, services
from annotation.forms import (
    MEMBER_ROLE_CHOICES,
    DatasetInstructionsForm,
    MemberAddForm,
    MemberRolesForm,
    PresetLoadForm,
    TermAddForm,
    TermRenameForm,
    choice_of_roles,
)
from annotation.lookups import dataset_or_404
from annotation.models import Dataset, TaxonomyTerm
from core.roles import ANNOTATOR, AUDITOR, LEAD, acting_user, is_lead

ROLE_LABELS = {
    ANNOTATOR: gettext_lazy("Annotator"),
    AUDITOR: gettext_lazy("Auditor"),
    LEAD: gettext_lazy("Lead"),
}


def _lead_dataset(request: HttpRequest, dataset_id: int) -> Dataset:
    if not is_lead(request.user):
        raise PermissionDenied(_("Only project leads may change a dataset's settings."))
    return dataset_or_404(request, dataset_id)


def _errors(request: HttpRequest, exc: ValidationError) -> None:
    for message in exc.messages:
        messages.error(request, message)


@require_http_methods(["GET", "POST"])
def dataset_instructions(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """The instructions reviewers read above each sample (Markdown), with how they look."""
    dataset = _lead_dataset(request, dataset_id)
    form = DatasetInstructionsForm(
        request.POST or None, initial={"instructions": dataset.instructions}
    )
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                services.dataset_set_instructions(
                    dataset=dataset, instructions=form.cleaned_data["instructions"]
                )
            except ValidationError as exc:
                form.add_error("instructions", exc)
            else:
                messages.success(request, _("The instructions were saved."))
                return redirect("annotation:dataset_instructions", dataset_id=dataset.pk)
        status = 400
    return render(
        request,
        "annotation/dataset_instructions.html",
        {"dataset": dataset, "form": form},
        status=status,
    )


@require_http_methods(["GET", "POST"])
def dataset_members(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """The dataset's members with their roles, and a form to add one by username."""
    dataset = _lead_dataset(request, dataset_id)
    form = MemberAddForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            membership = services.dataset_add_member_by_username(
                dataset=dataset,
                username=form.cleaned_data["username"],
                roles=form.roles(),
                actor=acting_user(request.user),
            )
        except ValidationError as exc:
            form.add_error("username", exc)
        else:
            messages.success(
                request, _("%(username)s was added.") % {"username": membership.user.get_username()}
            )
            return redirect("annotation:dataset_members", dataset_id=dataset.pk)
    members = [
        (
            member,
            [str(ROLE_LABELS[role]) for role in member.roles],
            choice_of_roles(frozenset(member.roles)),
        )
        for member in selectors.dataset_members(dataset=dataset)
    ]
    return render(
        request,
        "annotation/dataset_members.html",
        {
            "dataset": dataset,
            "form": form,
            "members": members,
            "candidates": selectors.dataset_member_candidates(dataset=dataset),
            "role_choices": MEMBER_ROLE_CHOICES,
        },
        status=400 if form.errors else 200,
    )


@require_POST
def dataset_member_remove(request: HttpRequest, dataset_id: int, user_id: int) -> HttpResponse:
    dataset = _lead_dataset(request, dataset_id)
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise Http404(_("No such user."))
    services.dataset_remove_member(dataset=dataset, user=user, actor=acting_user(request.user))
    messages.success(request, _("%(username)s was removed.") % {"username": user.get_username()})
    return redirect("annotation:dataset_members", dataset_id=dataset.pk)


@require_POST
def dataset_member_roles(request: HttpRequest, dataset_id: int, user_id: int) -> HttpResponse:
    """Change the roles a member holds in this dataset (annotator, auditor or both)."""
    dataset = _lead_dataset(request, dataset_id)
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None:
        raise Http404(_("No such user."))
    form = MemberRolesForm(request.POST)
    if not form.is_valid():
        messages.error(request, _("Choose annotator, auditor or both."))
    else:
        try:
            services.dataset_member_set_roles(
                dataset=dataset, user=user, roles=form.roles(), actor=acting_user(request.user)
            )
        except ValidationError as exc:
            _errors(request, exc)
        else:
            messages.success(
                request,
                _("%(username)s's role in this dataset was changed.")
                % {"username": user.get_username()},
            )
    return redirect("annotation:dataset_members", dataset_id=dataset.pk)


@require_http_methods(["GET", "POST"])
def dataset_taxonomy(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """The dataset's terms by kind; add a term, or load a preset's terms for empty kinds."""
    dataset = _lead_dataset(request, dataset_id)
    action = request.POST.get("action", "")
    add_form = TermAddForm(request.POST if action == "add" else None, dataset_kind=dataset.kind)
    preset_form = PresetLoadForm(
        request.POST if action == "load_preset" else None, dataset_kind=dataset.kind
    )
    if action == "add" and add_form.is_valid():
        try:
            term = services.taxonomy_term_add(dataset=dataset, **add_form.cleaned_data)
        except ValidationError as exc:
            add_form.add_error(None, exc)
        else:
            messages.success(request, _("The term “%(code)s” was added.") % {"code": term.code})
            return redirect("annotation:dataset_taxonomy", dataset_id=dataset.pk)
    if action == "load_preset" and preset_form.is_valid():
        try:
            copied = services.taxonomy_load_preset(
                dataset=dataset, preset=preset_form.cleaned_data["preset"]
            )
        except ValidationError as exc:
            preset_form.add_error(None, exc)
        else:
            messages.success(
                request,
                ngettext("%(n)d term was loaded.", "%(n)d terms were loaded.", copied)
                % {"n": copied},
            )
            return redirect("annotation:dataset_taxonomy", dataset_id=dataset.pk)
    return render(
        request,
        "annotation/dataset_taxonomy.html",
        {
            "dataset": dataset,
            "kinds": selectors.taxonomy_by_kind(dataset=dataset),
            "add_form": add_form,
            "preset_form": preset_form,
        },
        status=400 if add_form.errors or preset_form.errors else 200,
    )


def _term(dataset: Dataset, term_id: int) -> TaxonomyTerm:
    term = selectors.taxonomy_terms(dataset=dataset).filter(pk=term_id).first()
    if term is None:
        raise Http404(_("No such term."))
    return term


@require_POST
def taxonomy_term_edit(request: HttpRequest, dataset_id: int, term_id: int) -> HttpResponse:
    """Rename a term, or retire it or bring it back (``action``: rename, retire, restore)."""
    dataset = _lead_dataset(request, dataset_id)
    term = _term(dataset, term_id)
    action = request.POST.get("action", "")
    if action in ("retire", "restore"):
        services.taxonomy_term_set_retired(term=term, retired=action == "retire")
        if action == "retire":
            messages.success(request, _("“%(code)s” is retired.") % {"code": term.code})
        else:
            messages.success(request, _("“%(code)s” is offered again.") % {"code": term.code})
    else:
        form = TermRenameForm(request.POST)
        if not form.is_valid():
            messages.error(request, _("A term needs a name."))
        else:
            try:
                services.taxonomy_term_rename(term=term, **form.cleaned_data)
            except ValidationError as exc:
                _errors(request, exc)
            else:
                messages.success(request, _("“%(code)s” was renamed.") % {"code": term.code})
    return redirect("annotation:dataset_taxonomy", dataset_id=dataset.pk)


@require_http_methods(["GET", "POST"])
def dataset_delete(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Confirm and delete a dataset that holds no reviews; otherwise offer to archive it."""
    dataset = _lead_dataset(request, dataset_id)
    if request.method == "POST":
        name = dataset.name
        try:
            services.dataset_delete(dataset=dataset)
        except ValidationError as exc:
            _errors(request, exc)
            return redirect("annotation:dataset_delete", dataset_id=dataset.pk)
        messages.success(request, _("The dataset “%(name)s” was deleted.") % {"name": name})
        return redirect("annotation:dataset_list")
    return render(
        request,
        "annotation/dataset_delete.html",
        {
            "dataset": dataset,
            "deletable": services.dataset_deletable(dataset=dataset),
            "samples": selectors.sample_list(dataset=dataset).count(),
        },
    )


@require_POST
def dataset_archive(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """Archive a dataset (``archived=1``) or bring it back (``archived=0``)."""
    dataset = _lead_dataset(request, dataset_id)
    archived = request.POST.get("archived") == "1"
    services.dataset_set_archived(dataset=dataset, archived=archived)
    if archived:
        messages.success(request, _("The dataset is archived."))
    else:
        messages.success(request, _("The dataset is no longer archived."))
    return redirect("annotation:dataset_detail", dataset_id=dataset.pk)


@require_POST
def dataset_auto_send(request: HttpRequest, dataset_id: int) -> HttpResponse:
    dataset = _lead_dataset(request, dataset_id)
    enabled = request.POST.get("auto_send_to_review") == "on"
    services.dataset_set_auto_send(dataset=dataset, enabled=enabled)
    if enabled:
        messages.success(request, _("New imports will be sent to review automatically."))
    else:
        messages.success(request, _("New imports will stay imported until you send them."))
    return redirect("annotation:dataset_detail", dataset_id=dataset.pk)
