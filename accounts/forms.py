"""HTML forms of people and sign-in pages."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib.auth import authenticate, get_user_model
from django.contrib.auth.forms import AuthenticationForm, PasswordChangeForm
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from accounts.invitations import parse_addresses
from accounts.models import AccessEventKind, InvitedRole
from accounts.people import NO_ACCESS
from annotation.forms import MEMBER_ROLE_CHOICES
from annotation.models import Dataset
from core.forms import Form as MarkedForm
from core.roles import ANNOTATOR, AUDITOR, LEAD

DEACTIVATED = "deactivated"


class SignInForm(AuthenticationForm):
    """Django's sign-in form; a deactivated person who gives their right password is told
    so (the attempt still counts as a failed sign-in)."""

    def clean(self) -> dict[str, Any]:
        try:
            return super().clean()
        except ValidationError:
            if not getattr(self.request, "axes_locked_out", False):
                username = self.cleaned_data.get("username") or ""
                password = self.cleaned_data.get("password") or ""
                person = get_user_model().objects.filter(username=username, is_active=False).first()
                if person is not None and password and person.check_password(password):
                    raise ValidationError(
                        _("This account is deactivated: ask a lead to reactivate it."),
                        code=DEACTIVATED,
                    ) from None
            raise


class SecondFactorForm(MarkedForm):
    code = forms.CharField(
        label=_("Code"),
        max_length=32,
        widget=forms.TextInput(
            attrs={"autocomplete": "one-time-code", "inputmode": "text", "autofocus": True}
        ),
        help_text=_("The six digits your authenticator app shows, or one of your recovery codes."),
    )


class SetUpForm(MarkedForm):
    code = forms.CharField(
        label=_("Code from the app"),
        max_length=16,
        widget=forms.TextInput(attrs={"autocomplete": "one-time-code", "inputmode": "numeric"}),
    )


class PasswordConfirmForm(MarkedForm):
    password = forms.CharField(
        label=_("Your password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )


class PasswordChangeWithLockoutForm(PasswordChangeForm):
    """Django's password change, whose current password is checked as a sign-in is: a wrong
    one counts toward the lockout, and a locked-out person is refused."""

    def __init__(self, user: Any, *args: Any, request: Any = None, **kwargs: Any) -> None:
        self.request = request
        super().__init__(user, *args, **kwargs)

    def clean_old_password(self) -> str:
        old = str(self.cleaned_data.get("old_password") or "")
        person = authenticate(self.request, username=self.user.get_username(), password=old)
        if person is None or person.pk != self.user.pk:
            raise ValidationError(
                self.error_messages["password_incorrect"], code="password_incorrect"
            )
        return old


def _open_datasets() -> Any:
    return Dataset.objects.filter(archived=False).order_by("name")


class InviteForm(MarkedForm):
    emails = forms.CharField(
        label=_("E-mail addresses"),
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=_("One or more, one a line or separated by commas."),
    )
    role = forms.ChoiceField(label=_("Role"), choices=InvitedRole.choices, initial=ANNOTATOR)
    datasets = forms.ModelMultipleChoiceField(
        label=_("Datasets they join"),
        queryset=Dataset.objects.none(),
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text=_("Annotators and auditors work in these; leads see every dataset."),
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["datasets"].queryset = _open_datasets()  # type: ignore[attr-defined]

    def clean_emails(self) -> list[str]:
        return parse_addresses(self.cleaned_data["emails"])


class AcceptForm(MarkedForm):
    username = forms.CharField(
        label=_("Username"),
        max_length=150,
        widget=forms.TextInput(attrs={"autocomplete": "username"}),
        help_text=_("Letters, digits and @ . + - _ only."),
    )
    password1 = forms.CharField(
        label=_("Password"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    password2 = forms.CharField(
        label=_("The same password again"),
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("password1") and data.get("password1") != data.get("password2"):
            self.add_error("password2", _("The two passwords differ."))
        return data


SITE_ROLE_LABELS = [
    (ANNOTATOR, _("Annotator")),
    (AUDITOR, _("Auditor")),
    (InvitedRole.BOTH.value, _("Annotator and auditor")),
    (LEAD, _("Lead")),
    (NO_ACCESS, _("No access")),
]


class PersonRoleForm(MarkedForm):
    role = forms.ChoiceField(label=_("Role"), choices=SITE_ROLE_LABELS)


class PersonDatasetForm(MarkedForm):
    dataset = forms.ModelChoiceField(label=_("Dataset"), queryset=Dataset.objects.none())
    role = forms.ChoiceField(label=_("Role in it"), choices=MEMBER_ROLE_CHOICES)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["dataset"].queryset = _open_datasets()  # type: ignore[attr-defined]


class AccessFilterForm(forms.Form):
    kind = forms.ChoiceField(
        label=_("What"), choices=[("", _("Everything")), *AccessEventKind.choices], required=False
    )
    person = forms.CharField(label=_("Person"), max_length=150, required=False)
    since = forms.DateField(
        label=_("From"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
    until = forms.DateField(
        label=_("To"), required=False, widget=forms.DateInput(attrs={"type": "date"})
    )
