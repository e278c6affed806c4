from django.urls import URLPattern, path

from accounts import views

app_name = "accounts"
urlpatterns: list[URLPattern] = [
    path("account/token/", views.api_token, name="api_token"),
]
