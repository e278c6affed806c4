from django.contrib import admin

from accounts.models import UserPreference


@admin.register(UserPreference)
class UserPreferenceAdmin(admin.ModelAdmin[UserPreference]):
    list_display = ["user", "language"]
    list_select_related = ["user"]
