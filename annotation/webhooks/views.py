"""The webhook pages (leads only): endpoints site-wide and per dataset, an endpoint's delivery
log with its test event and secret rotation, and a delivery's attempts with Redeliver."""

from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation.lookups import dataset_or_404
from annotation.models import Dataset, WebhookEndpoint
from annotation.webhooks import selectors, sending, services
from annotation.webhooks.forms import EndpointForm
from core.roles import acting_user, is_lead


def _require_lead(request: HttpRequest) -> None:
    if not is_lead(request.user):
        raise PermissionDenied(_("Only project leads may configure webhooks."))


def _endpoint(request: HttpRequest, endpoint_id: int) -> WebhookEndpoint:
    _require_lead(request)
    endpoint = selectors.webhook_endpoint_get(endpoint_id=endpoint_id)
    if endpoint is None:
        raise Http404(_("No such webhook endpoint."))
    return endpoint


def _form_errors(form: EndpointForm, exc: ValidationError) -> None:
    if hasattr(exc, "error_dict"):
        for field, errors in exc.error_dict.items():
            for error in errors:
                form.add_error(field if field in form.fields else None, error)
    else:
        form.add_error(None, exc)


def _list(request: HttpRequest, dataset: Dataset | None) -> HttpResponse:
    form = EndpointForm(request.POST or None)
    status = 200
    if request.method == "POST":
        status = 400
        if form.is_valid():
            data = form.cleaned_data
            try:
                endpoint, secret = services.webhook_endpoint_create(
                    url=data["url"],
                    events=data["events"],
                    dataset=dataset,
                    description=data["description"],
                    created_by=acting_user(request.user),
                )
            except ValidationError as exc:
                _form_errors(form, exc)
            else:
                return _detail(request, endpoint, secret=secret, status=201)
    return render(
        request,
        "annotation/webhooks/endpoint_list.html",
        {
            "dataset": dataset,
            "endpoints": selectors.webhook_endpoints(dataset=dataset),
            "form": form,
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
def webhook_list(request: HttpRequest) -> HttpResponse:
    """Every endpoint; a new one made here gets every dataset's events."""
    _require_lead(request)
    return _list(request, None)


@require_http_methods(["GET", "POST"])
def dataset_webhooks(request: HttpRequest, dataset_id: int) -> HttpResponse:
    """A dataset's endpoints; a new one made here gets this dataset's events."""
    _require_lead(request)
    return _list(request, dataset_or_404(request, dataset_id))


def _detail(
    request: HttpRequest,
    endpoint: WebhookEndpoint,
    *,
    form: EndpointForm | None = None,
    secret: str = "",
    status: int = 200,
) -> HttpResponse:
    return render(
        request,
        "annotation/webhooks/endpoint_detail.html",
        {
            "endpoint": endpoint,
            "form": form
            or EndpointForm(
                initial={
                    "url": endpoint.url,
                    "description": endpoint.description,
                    "events": endpoint.events,
                    "enabled": endpoint.enabled,
                }
            ),
            "deliveries": selectors.webhook_deliveries(endpoint=endpoint),
            "secret": secret,
        },
        status=status,
    )


@require_http_methods(["GET", "POST"])
def webhook_detail(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    """An endpoint: its settings (POST changes them) and its delivery log."""
    endpoint = _endpoint(request, endpoint_id)
    if request.method == "GET":
        return _detail(request, endpoint)
    form = EndpointForm(request.POST)
    if form.is_valid():
        data = form.cleaned_data
        try:
            services.webhook_endpoint_update(
                endpoint=endpoint,
                url=data["url"],
                events=data["events"],
                description=data["description"],
                enabled=data["enabled"],
            )
        except ValidationError as exc:
            _form_errors(form, exc)
        else:
            messages.success(request, _("The endpoint was saved."))
            return redirect("annotation:webhook_detail", endpoint_id=endpoint.pk)
    return _detail(request, endpoint, form=form, status=400)


@require_POST
def webhook_rotate(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    """A new signing secret, shown once (the old one signs too for a while)."""
    endpoint = _endpoint(request, endpoint_id)
    secret = services.webhook_secret_rotate(endpoint=endpoint)
    return _detail(request, endpoint, secret=secret)


@require_POST
def webhook_test(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    delivery = services.webhook_test_send(endpoint=endpoint, by=acting_user(request.user))
    messages.success(request, _("A test event is on its way."))
    return redirect("annotation:webhook_delivery", delivery_id=delivery.pk)


@require_POST
def webhook_delete(request: HttpRequest, endpoint_id: int) -> HttpResponse:
    endpoint = _endpoint(request, endpoint_id)
    dataset_id = endpoint.dataset_id
    services.webhook_endpoint_delete(endpoint=endpoint)
    messages.success(request, _("The endpoint and its delivery log were deleted."))
    if dataset_id is not None:
        return redirect("annotation:dataset_webhooks", dataset_id=dataset_id)
    return redirect("annotation:webhook_list")


@require_GET
def webhook_delivery(request: HttpRequest, delivery_id: int) -> HttpResponse:
    """A delivery: the message, each attempt's request, answer or error, and what is next."""
    _require_lead(request)
    delivery = selectors.webhook_delivery_get(delivery_id=delivery_id)
    if delivery is None:
        raise Http404(_("No such delivery."))
    return render(
        request,
        "annotation/webhooks/delivery_detail.html",
        {
            "delivery": delivery,
            "attempts": selectors.webhook_attempts(delivery=delivery),
            "body": sending.body_of(delivery.payload),
        },
    )


@require_POST
def webhook_redeliver(request: HttpRequest, delivery_id: int) -> HttpResponse:
    _require_lead(request)
    delivery = selectors.webhook_delivery_get(delivery_id=delivery_id)
    if delivery is None:
        raise Http404(_("No such delivery."))
    try:
        services.webhook_redeliver(delivery=delivery)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, _("The delivery is sent again, as the same message."))
    return redirect("annotation:webhook_delivery", delivery_id=delivery.pk)
