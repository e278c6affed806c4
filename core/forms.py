"""The base of the site's HTML forms: a required field says so in its label, visibly and in
the reader's language, besides carrying the ``required`` attribute."""

from __future__ import annotations

from typing import Any

from django import forms
from django.forms.boundfield import BoundField
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _


class MarkedBoundField(BoundField):
    def label_tag(
        self,
        contents: str | None = None,
        attrs: dict[str, Any] | None = None,
        label_suffix: str | None = None,
        tag: str | None = None,
    ) -> SafeString:
        text = str(contents or self.label)
        if self.field.required and text:
            text = format_html('{} <span class="required-mark">{}</span>', text, _("(required)"))
        return super().label_tag(text, attrs, label_suffix, tag)


class Form(forms.Form):
    """A form whose required fields are labelled "(required)" and given the ``required``
    class on their label."""

    bound_field_class = MarkedBoundField
    required_css_class = "required"
