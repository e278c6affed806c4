"""WSGI entry point (gunicorn mmooc_site.wsgi)."""

import gc
import os

from django.core.wsgi import get_wsgi_application
from django.urls import get_resolver

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings.production")

application = get_wsgi_application()

# Load the URL configuration (views, serializers, DRF) now rather than on the first request,
# then move every object loaded so far out of the garbage collector's reach. Under
# `gunicorn --preload` the master does both once, before forking, and the workers share
# those pages instead of each loading (or, by collecting, touching) a copy of their own.
get_resolver().url_patterns  # noqa: B018 - the attribute's side effect loads the URLconf
gc.freeze()
