"""The Celery app. Brokers: Redis in production and CI; a safe filesystem broker locally."""

from __future__ import annotations

import os

from celery import Celery
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mmooc_site.settings")

# kombu's own filesystem transport loses messages under concurrency (celery/kombu#1551);
# "filesystem://" is served by the patched transport instead.
TRANSPORT_ALIASES["filesystem"] = "mmooc_site.fsbroker:Transport"

app = Celery("mmooc_site")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
