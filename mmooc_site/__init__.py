"""The site: settings, URL routing, the Celery app and the shell pages."""

from mmooc_site.celery import app as celery_app

__all__ = ["celery_app"]
