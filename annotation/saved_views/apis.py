"""The saved views' API (leads, as on the page): the views of a dataset a lead may open, a new
view, and a view's own changes and deletion by its owner. Opening a view gives its filter as
the sample list's query, and the sample list API's URL with it.

Every check is the services' and selectors' (``annotation.saved_views``): the filter is sent
as an object of the sample list's parameters (their schema is the sample list API's) and
checked as the page checks its query string.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from django.core.exceptions import ValidationError as DjangoValidationError
from django.urls import reverse
from django.utils.translation import gettext as _
from drf_spectacular.plumbing import build_basic_type
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import NotAuthenticated, NotFound
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.apis import FILTER_PARAMETERS
from annotation.lookups import dataset_or_404
from annotation.models import Dataset, SavedView
from annotation.models.saved_views import NAME_MAX
from annotation.saved_views import columns as list_columns
from annotation.saved_views import selectors, services
from annotation.saved_views.query import query_clean
from core.api import IsLead
from core.parsers import JSONParser
from core.roles import acting_user
from core.schema import NOT_BLANK

if TYPE_CHECKING:
    from django.contrib.auth.models import User


def _parameter_schema(parameter: Any) -> dict[str, Any]:
    schema = (
        parameter.type if isinstance(parameter.type, dict) else build_basic_type(parameter.type)
    )
    schema = dict(schema or {"type": "string"})
    if parameter.enum:
        schema["enum"] = list(parameter.enum)
    if parameter.many:
        schema = {"type": "array", "items": schema}
    if parameter.description:
        schema["description"] = parameter.description
    return schema


# The sample list API's filter and sort parameters, as the properties of one object.
FILTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {p.name: _parameter_schema(p) for p in FILTER_PARAMETERS},
    "additionalProperties": False,
}
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "boolean": (bool,),
    "number": (int, float),
    "array": (list,),
}


def _pairs(name: str, value: object) -> list[tuple[str, str]]:
    """A filter value as query parameters, if it is of its parameter's JSON type."""
    schema = FILTER_SCHEMA["properties"].get(name)
    if schema is None:
        return [(name, str(value))]  # the query's check names the unknown parameter
    kind = schema.get("type", "string")
    wrong_bool = isinstance(value, bool) and kind != "boolean"
    items = value if isinstance(value, list) else [value]
    if (
        not isinstance(value, _JSON_TYPES.get(kind, (str,)))
        or wrong_bool
        or (kind == "array" and not all(isinstance(item, str) for item in items))
    ):
        raise serializers.ValidationError(
            _("Filter “%(name)s”: not a value of its type (%(type)s).")
            % {"name": name[:50], "type": kind}
        )
    return [
        (name, ("true" if item else "false") if kind == "boolean" else str(item)) for item in items
    ]


@extend_schema_field(FILTER_SCHEMA)
class FilterField(serializers.Field[str, dict[str, Any], str, Any]):
    """The sample list's filter and sort as an object of its parameters; read as the list's
    query string (``query_clean``: known parameters, usable values, within the length)."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, dict):
            raise serializers.ValidationError(_("Give the filter as an object of parameters."))
        pairs = [pair for name, value in data.items() for pair in _pairs(str(name), value)]
        try:
            return query_clean(urlencode(pairs))
        except DjangoValidationError as exc:
            raise serializers.ValidationError(exc.messages) from exc

    def to_representation(self, value: str) -> str:
        return value


class SavedViewOutput(serializers.ModelSerializer[SavedView]):
    owner = serializers.CharField(source="owner.username")
    mine = serializers.SerializerMethodField()
    samples_url = serializers.SerializerMethodField()
    page_url = serializers.SerializerMethodField()

    class Meta:
        model = SavedView
        fields = [
            "id",
            "dataset",
            "name",
            "owner",
            "mine",
            "shared",
            "query",
            "columns",
            "page_size",
            "created_at",
            "updated_at",
            "samples_url",
            "page_url",
        ]

    def get_mine(self, view: SavedView) -> bool:
        return bool(view.owner_id == self.context["user_id"])

    def get_samples_url(self, view: SavedView) -> str:
        """The sample list API with the view's filter and sort."""
        url = reverse("api_dataset_samples", args=[view.dataset_id])
        return f"{url}?{view.query}" if view.query else url

    def get_page_url(self, view: SavedView) -> str:
        """The sample list page with the view open."""
        url = reverse("annotation:sample_list", args=[view.dataset_id])
        return f"{url}?{urlencode([('view', view.pk)])}"


class SavedViewInput(serializers.Serializer[Any]):
    """A view's name, sharing, filter, columns (in the order they show) and page size."""

    refuses_unknown = True
    # The name is not blank once trimmed, as the service asks (which tidies it).
    schema_rules = [{"properties": {"name": NOT_BLANK}}]

    name = serializers.CharField(max_length=NAME_MAX, trim_whitespace=False)
    shared = serializers.BooleanField(default=False)
    filter = FilterField(
        required=False, help_text="The sample list API's parameters; none when left out."
    )
    columns = serializers.ListField(
        child=serializers.ChoiceField(choices=list(list_columns.BY_KEY)),
        default=list(list_columns.DEFAULT_COLUMNS),
        help_text="Column keys in the order they show; the external id is always shown.",
    )
    page_size = serializers.ChoiceField(
        choices=list(list_columns.PAGE_SIZES), default=list_columns.DEFAULT_PAGE_SIZE
    )

    def to_internal_value(self, data: Any) -> Any:
        if isinstance(data, dict):
            # A name is a JSON string: DRF's CharField would take a number as its digits.
            errors = {
                str(name)[:50]: [_("Not a field of a saved view.")]
                for name in sorted(set(data) - set(self.fields))
            } | (
                {"name": [_("Not a valid string.")]}
                if not isinstance(data.get("name", ""), str)
                else {}
            )
            if errors:
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


def _user(request: Request) -> User:
    user = acting_user(request.user)
    if user is None:  # IsLead lets only signed-in leads through
        raise NotAuthenticated
    return user


def _context(request: Request) -> dict[str, Any]:
    return {"user_id": request.user.pk}


def _view(request: Request, dataset: Dataset, view_id: int) -> SavedView:
    view = selectors.saved_view_get(user=request.user, dataset=dataset, view_id=view_id)
    if view is None:
        raise NotFound(_("No such view."))
    return view


class SavedViewListCreateApi(APIView):
    permission_classes = [IsLead]
    parser_classes = [JSONParser]  # the filter is an object: JSON only

    @extend_schema(responses=SavedViewOutput(many=True))
    def get(self, request: Request, dataset_id: int) -> Response:
        """The views of the dataset this lead may open: their own and every shared one."""
        dataset = dataset_or_404(request, dataset_id)
        views = selectors.saved_views_visible(user=request.user, dataset=dataset)
        return Response(SavedViewOutput(views, many=True, context=_context(request)).data)

    @extend_schema(request=SavedViewInput, responses={201: SavedViewOutput})
    def post(self, request: Request, dataset_id: int) -> Response:
        """Save a view (409 when the lead has one of that name in the dataset)."""
        dataset = dataset_or_404(request, dataset_id)
        payload = SavedViewInput(data=request.data)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        view = services.saved_view_create(
            dataset=dataset,
            owner=_user(request),
            name=data["name"],
            shared=data["shared"],
            query=data.get("filter", ""),
            columns=data["columns"],
            page_size=data["page_size"],
        )
        return Response(
            SavedViewOutput(view, context=_context(request)).data, status=status.HTTP_201_CREATED
        )


class SavedViewDetailApi(APIView):
    permission_classes = [IsLead]
    parser_classes = [JSONParser]  # the filter is an object: JSON only

    patch_is_partial = True  # the schema describes its PATCH body as partial

    @extend_schema(responses=SavedViewOutput)
    def get(self, request: Request, dataset_id: int, view_id: int) -> Response:
        """Open a view: its filter and sort (``query``, the sample list's parameters), its
        columns and page size. 404 for another lead's private view."""
        view = _view(request, dataset_or_404(request, dataset_id), view_id)
        return Response(SavedViewOutput(view, context=_context(request)).data)

    @extend_schema(request=SavedViewInput, responses=SavedViewOutput)
    def patch(self, request: Request, dataset_id: int, view_id: int) -> Response:
        """Change a view, the fields given (its owner only: 403 for another lead's shared
        view)."""
        view = _view(request, dataset_or_404(request, dataset_id), view_id)
        payload = SavedViewInput(data=request.data, partial=True)
        payload.is_valid(raise_exception=True)
        data = payload.validated_data
        services.saved_view_update(
            view=view,
            by=_user(request),
            name=data.get("name", view.name),
            shared=data.get("shared", view.shared),
            query=data.get("filter", view.query),
            columns=data.get("columns", view.columns),
            page_size=data.get("page_size", view.page_size),
        )
        return Response(SavedViewOutput(view, context=_context(request)).data)

    @extend_schema(responses={204: None})
    def delete(self, request: Request, dataset_id: int, view_id: int) -> Response:
        """Delete a view (its owner only)."""
        view = _view(request, dataset_or_404(request, dataset_id), view_id)
        services.saved_view_delete(view=view, by=_user(request))
        return Response(status=status.HTTP_204_NO_CONTENT)
