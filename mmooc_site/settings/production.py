"""Production settings, the default of manage.py, WSGI and Celery: the shared settings
(`base`) and what makes DEBUG-off safe without any extra variable. The embedded run
(`dev.py run`) uses these too, with DEBUG on, which relaxes what needs HTTPS and a secret.
"""

from django.core.exceptions import ImproperlyConfigured

from mmooc_site.settings.base import *  # noqa: F403
from mmooc_site.settings.base import DEBUG, SECRET_KEY, env

if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "insecure-local-development-key-only-for-debug"  # noqa: S105

# HTTPS: with DEBUG off every protection is on, each with a variable (named like the setting)
# to turn it off, e.g. SECURE_SSL_REDIRECT=0 when nothing in front of the site speaks TLS.
# The site expects a TLS-terminating proxy that sets X-Forwarded-Proto.
_HTTPS = not DEBUG
SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=_HTTPS)
SECURE_REDIRECT_EXEMPT = [r"^healthz/$"]
SESSION_COOKIE_SECURE = env.bool("SESSION_COOKIE_SECURE", default=_HTTPS)
CSRF_COOKIE_SECURE = env.bool("CSRF_COOKIE_SECURE", default=_HTTPS)
SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=365 * 24 * 3600 if _HTTPS else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", default=_HTTPS)
SECURE_HSTS_PRELOAD = env.bool("SECURE_HSTS_PRELOAD", default=_HTTPS)
if env.bool("SECURE_PROXY_SSL_HEADER", default=_HTTPS):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
