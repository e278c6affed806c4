from django.apps import AppConfig


class AccountsConfig(AppConfig):
    """People on the site: preferences, invitations, roles and datasets, sign-in (password,
    second factor, single sign-on) and the access log."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "accounts"

    def ready(self) -> None:
        from axes.signals import user_locked_out
        from django.contrib.auth.signals import user_login_failed

        from accounts import observers
        from annotation import extensions

        # Every change of a dataset's members is a line of the access log.
        extensions.membership_changed_register(observers.membership_changed)
        # Failed sign-ins and lockouts happen inside Django's authenticate() and django-axes;
        # their signals are the only place to see them.
        user_login_failed.connect(observers.sign_in_failed, dispatch_uid="accounts-failed")
        user_locked_out.connect(observers.locked_out, dispatch_uid="accounts-locked")
