"""Settings of the bench's "floor site" (``bench/floor_urls.py`` has its two views).

The site's own settings (same middleware, database connection and gunicorn workers) with the
floor's URLs instead of the product's; used by ``bench_review.py`` only, never deployed.
"""

from mmooc_site.settings.production import *  # noqa: F403

ROOT_URLCONF = "bench.floor_urls"
MIDDLEWARE = [m for m in MIDDLEWARE if "LoginRequired" not in m]  # noqa: F405
