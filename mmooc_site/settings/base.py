"""The settings every process shares, each read once from the environment, with defaults that
run locally with nothing installed. Every variable is listed in the README.

Not a settings module of its own: `mmooc_site.settings.production` (the default of manage.py,
WSGI and Celery) adds what makes DEBUG-off safe, `mmooc_site.settings.test` the suite's defaults.
"""

from datetime import timedelta
from pathlib import Path
from urllib.parse import unquote

import django_stubs_ext
import environ
from csp.constants import NONE, SELF
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

django_stubs_ext.monkeypatch()

BASE_DIR = Path(__file__).resolve().parent.parent.parent

env = environ.Env()
if (BASE_DIR / ".env").exists():
    environ.Env.read_env(BASE_DIR / ".env")

DEBUG = env.bool("DEBUG", default=False)
SECRET_KEY = env.str("SECRET_KEY", default="")

ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

VAR_DIR = Path(env.str("VAR_DIR", default=str(BASE_DIR / "var")))

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "axes",
    # The second factor: TOTP devices and recovery codes (django-otp), checked by accounts'
    # sign-in; single sign-on through OpenID Connect (django-allauth's social accounts).
    "django_otp",
    "django_otp.plugins.otp_totp",
    "django_otp.plugins.otp_static",
    "allauth",
    "allauth.account",
    "allauth.socialaccount",
    "allauth.socialaccount.providers.openid_connect",
    "core",
    "accounts",
    "annotation",
    "review",
    "judging",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "csp.middleware.CSPMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "mmooc_site.middleware.RefuseNulMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "mmooc_site.middleware.LoginRequiredMiddleware",
    # django-allauth's: runs its login flows' redirects (single sign-on only, here).
    "allauth.account.middleware.AccountMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    # The second step of a password sign-in (a TOTP or recovery code), through authenticate()
    # so that django-axes counts a wrong code and locks out as it does for a wrong password.
    "accounts.backends.SecondFactorBackend",
]

ROOT_URLCONF = "mmooc_site.urls"
WSGI_APPLICATION = "mmooc_site.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "accounts.context_processors.people",
                "accounts.context_processors.theme",
            ],
        },
    },
]

# PostgreSQL only (psycopg 3). `python3 dev.py run` and `python3 dev.py test` start a server of
# their own (var/postgres) when DATABASE_URL is unset; a Unix socket's folder is given as the
# URL's host, percent-encoded (postgres://postgres@%2Fpath%2Fto%2Fsockets:5432/name).
DATABASE_URL = env.str("DATABASE_URL", default="")
if not DATABASE_URL.startswith(("postgres://", "postgresql://", "pgsql://")):
    raise ImproperlyConfigured(
        "DATABASE_URL must name a PostgreSQL database (postgres://user@host:port/name); "
        "`python3 dev.py run` starts one of its own when it is unset."
    )
_database = env.db_url_config(DATABASE_URL)
_database["HOST"] = unquote(_database["HOST"])
_database["ATOMIC_REQUESTS"] = False
_database["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=0)
# Parameters are bound by PostgreSQL (server-side binding), and psycopg prepares a statement
# once a connection has run it 5 times (its prepare_threshold): where connections persist
# across requests (CONN_MAX_AGE), the statements the site runs all day are parsed and
# planned once per connection. PREPARE_STATEMENTS=0 turns preparing off, behind a connection
# pooler in transaction mode that does not keep prepared statements (PgBouncer before 1.21).
PREPARE_STATEMENTS = env.bool("PREPARE_STATEMENTS", default=_database["CONN_MAX_AGE"] != 0)
_database["OPTIONS"] = {
    "server_side_binding": True,
    "prepare_threshold": 5 if PREPARE_STATEMENTS else None,
}
DATABASES = {"default": _database}

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

# Internationalisation: the interface ships in English and Simplified Chinese.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", _("English")), ("zh-hans", _("Simplified Chinese"))]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env.str("TIME_ZONE", default="UTC")
USE_I18N = True
USE_TZ = True
# One date style in both languages (mmooc_site/formats): "2026-12-02 18:58".
FORMAT_MODULE_PATH = ["mmooc_site.formats"]

STATIC_URL = "static/"
STATIC_ROOT = Path(env.str("STATIC_ROOT", default=str(VAR_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]

# Media storage: local files by default, S3 when S3_BUCKET is set. Media are never served
# publicly: annotation.views streams them after a permission check.
MEDIA_ROOT = Path(env.str("MEDIA_ROOT", default=str(VAR_DIR / "media")))
MEDIA_URL = "/media-not-public/"
S3_BUCKET = env.str("S3_BUCKET", default="")
S3_ENDPOINT_URL = env.str("S3_ENDPOINT_URL", default="") or None
S3_REGION = env.str("S3_REGION", default="us-east-1")
S3_PRESIGN_SECONDS = env.int("S3_PRESIGN_SECONDS", default=300)
# Credentials for the S3 media storage and for s3:// import sources alike.
S3_ACCESS_KEY_ID = env.str("S3_ACCESS_KEY_ID", default="")
S3_SECRET_ACCESS_KEY = env.str("S3_SECRET_ACCESS_KEY", default="")
if S3_BUCKET:
    _media_storage = {
        "BACKEND": "storages.backends.s3.S3Storage",
        "OPTIONS": {
            "bucket_name": S3_BUCKET,
            "endpoint_url": S3_ENDPOINT_URL,
            "region_name": S3_REGION,
            "access_key": S3_ACCESS_KEY_ID or None,
            "secret_key": S3_SECRET_ACCESS_KEY or None,
            "default_acl": None,
            "querystring_auth": True,
            "querystring_expire": S3_PRESIGN_SECONDS,
            "file_overwrite": True,
            "addressing_style": "path",
            "signature_version": "s3v4",
        },
    }
else:
    _media_storage = {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(MEDIA_ROOT), "base_url": MEDIA_URL},
    }
STORAGES = {
    "default": _media_storage,
    "staticfiles": {
        "BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"
        if not DEBUG
        else "django.contrib.staticfiles.storage.StaticFilesStorage"
    },
}

# Upload and media limits.
MEDIA_MAX_IMAGE_BYTES = env.int("MEDIA_MAX_IMAGE_BYTES", default=25 * 1024 * 1024)
MEDIA_MAX_AUDIO_BYTES = env.int("MEDIA_MAX_AUDIO_BYTES", default=100 * 1024 * 1024)
MEDIA_MAX_IMAGE_PIXELS = env.int("MEDIA_MAX_IMAGE_PIXELS", default=64_000_000)
DATA_UPLOAD_MAX_MEMORY_SIZE = env.int("DATA_UPLOAD_MAX_MEMORY_SIZE", default=10 * 1024 * 1024)
# The longest text field of a sample (a list or object field: its JSON), imported or edited.
SAMPLE_MAX_TEXT_CHARS = env.int("SAMPLE_MAX_TEXT_CHARS", default=65_536)
# The longest model response (and other fields of its row, as JSON) or verdict line imported:
# reasoning models' answers run far longer than a sample's text.
JUDGING_ROW_MAX_CHARS = env.int("JUDGING_ROW_MAX_CHARS", default=262_144)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440

REDIS_URL = env.str("REDIS_URL", default="")

# One cache shared by every web and worker process (throttle counts, cached figures): Redis
# when REDIS_URL is set, otherwise a database table (made by `migrate`, core 0001).
# A Redis that does not answer costs a request at most CACHE_TIMEOUT_SECONDS (redis-py's
# connections from Django's pool do not retry): the API's rate limit then lets calls through.
CACHE_TIMEOUT_SECONDS = env.float("CACHE_TIMEOUT_SECONDS", default=2.0)
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env.str("CACHE_KEY_PREFIX", default="mmooc"),
            "OPTIONS": {
                "socket_connect_timeout": CACHE_TIMEOUT_SECONDS,
                "socket_timeout": CACHE_TIMEOUT_SECONDS,
            },
        }
    }
else:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "django_cache",
        }
    }

# Background work: Celery. REDIS_URL (or CELERY_BROKER_URL) in production and CI; without
# either, kombu's filesystem transport under VAR_DIR, consumed by the worker that the run
# command starts (mmooc_site.fsbroker patches its message-losing race).
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL or "filesystem://localhost//")
CELERY_BROKER_FOLDER = Path(env.str("CELERY_BROKER_FOLDER", default=str(VAR_DIR / "broker")))
CELERY_TASK_ALWAYS_EAGER = env.bool("CELERY_TASK_ALWAYS_EAGER", default=False)
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A pool process whose resident memory passed this many KiB during a task is replaced by a
# fresh fork of the main process once the task has ended (Celery's public
# worker_max_memory_per_child; the task itself always completes): Python keeps the memory a
# big import or snapshot once used, so without it a worker stayed at 670 MB after imports.
# Celery reads the process's peak (ru_maxrss), so a process goes after the task that lifted
# it past the limit. 0 turns it off.
CELERY_WORKER_MAX_MEMORY_PER_CHILD = (
    env.int("CELERY_WORKER_MAX_MEMORY_PER_CHILD", default=250_000) or None
)
CELERY_TASK_DEFAULT_QUEUE = env.str("CELERY_QUEUE", default="default")
# The periodic sweeps have a queue of their own, which workers read too (a worker started
# without -Q reads both): sweeps that piled up while no worker ran never look like a backlog
# of jobs to the sweep (core.jobs.broker_queue_size counts the jobs' queue only).
CELERY_SWEEP_QUEUE = f"{CELERY_TASK_DEFAULT_QUEUE}.sweeps"
CELERY_TASK_QUEUES = {
    name: {"exchange": name, "routing_key": name}
    for name in (CELERY_TASK_DEFAULT_QUEUE, CELERY_SWEEP_QUEUE)
}
CELERY_TASK_ROUTES = {"*.sweep_jobs": {"queue": CELERY_SWEEP_QUEUE}}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker outlives its broker: it tries to reconnect for as long as the broker is away
# (Celery's default gives up after 100 attempts, about 45 minutes), and a task running when
# the connection drops runs to its end (its writes go to PostgreSQL, fenced by its attempt;
# the job sweep deals with a message lost meanwhile) rather than being cancelled.
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
CELERY_BROKER_TRANSPORT_OPTIONS: dict[str, object] = {}
if CELERY_BROKER_URL.startswith("redis"):
    # How soon the Redis broker hands a message whose worker died to another worker (kombu's
    # default is an hour); judging's worker-kill test shortens it.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600),
        "unacked_restore_interval": env.int("CELERY_UNACKED_RESTORE_INTERVAL", default=10),
        "unacked_restore_throttle": env.int("CELERY_UNACKED_RESTORE_THROTTLE", default=10),
    }
elif CELERY_BROKER_URL.startswith("filesystem"):
    # Absolute folders (kombu's defaults are relative to the working directory); the
    # transport (mmooc_site.fsbroker) makes them when it first opens a channel.
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(CELERY_BROKER_FOLDER / "queue"),
        "data_folder_out": str(CELERY_BROKER_FOLDER / "queue"),
        "processed_folder": str(CELERY_BROKER_FOLDER / "processed"),
        "control_folder": str(CELERY_BROKER_FOLDER / "control"),
        "store_processed": False,
    }

# Recovery of background jobs (core.jobs): running jobs beat a heartbeat; a periodic sweep
# (Celery beat) queues again those whose heartbeat stopped and sends again the tasks of queued
# jobs whose message was lost, and fails a job with the reason after JOB_MAX_ATTEMPTS attempts.
JOB_HEARTBEAT_SECONDS = env.float("JOB_HEARTBEAT_SECONDS", default=10.0)
JOB_STALE_SECONDS = env.float("JOB_STALE_SECONDS", default=60.0)
JOB_QUEUED_TIMEOUT_SECONDS = env.float("JOB_QUEUED_TIMEOUT_SECONDS", default=60.0)
JOB_MAX_ATTEMPTS = env.int("JOB_MAX_ATTEMPTS", default=3)
JOB_SWEEP_SECONDS = env.float("JOB_SWEEP_SECONDS", default=30.0)
# The leaderboard's kept aggregates (judging.leaderboard_store): changes marked longer ago than
# this are counted by a recomputation that the sweep or a page view requests (a judge job or an
# import that ends requests one at once).
LEADERBOARD_REFRESH_SECONDS = env.float("LEADERBOARD_REFRESH_SECONDS", default=60.0)
CELERY_BEAT_SCHEDULE = {
    f"{app}-sweep-jobs": {
        "task": f"{app}.sweep_jobs",
        "schedule": JOB_SWEEP_SECONDS,
        # A sweep that waited longer than the interval is dropped: the next one is on its way.
        "options": {"expires": JOB_SWEEP_SECONDS},
    }
    for app in ("annotation", "judging", "review")
}
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
# Publishing a task gives up quickly when the broker is down: the job stays queued and the
# sweep sends it once the broker is back, so a request never hangs on it.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}

REST_FRAMEWORK = {
    # Token first: DRF answers a refused or missing credential with the first class's
    # challenge, so a bad token gets 401 with ``WWW-Authenticate: Token`` (session
    # authentication has no challenge and would make it a 403). A request without an
    # Authorization header falls through to the session.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.authentication.ExpiringTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_THROTTLE_CLASSES": [
        "core.throttling.AnonRateThrottle",
        "core.throttling.UserRateThrottle",
    ],
    "DEFAULT_THROTTLE_RATES": {
        "anon": env.str("API_THROTTLE_ANON", default="30/minute"),
        "user": env.str("API_THROTTLE_USER", default="3000/minute"),
    },
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # Size, depth and NUL checks: bad bodies get a 400 with a message, never a 500.
    "DEFAULT_PARSER_CLASSES": [
        "core.parsers.JSONParser",
        "core.parsers.FormParser",
        "core.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "core.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "core.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 50,
    "EXCEPTION_HANDLER": "core.api.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "MMOOC review studio API",
    "DESCRIPTION": "Datasets, samples, media, review, judging and calibration.",
    "VERSION": "0.1.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.IsAuthenticated"],
    # API clients authenticate with a token; the session (with CSRF) is the pages' own.
    "AUTHENTICATION_WHITELIST": ["core.authentication.ExpiringTokenAuthentication"],
    # Request bodies described as the views read them (uploads as binary); PATCH bodies:
    # core.schema.AutoSchema.
    "COMPONENT_SPLIT_REQUEST": True,
    # 3.1: JSON Schema's ``propertyNames`` states that no key holds a NUL (core.schema).
    "OAS_VERSION": "3.1.0",
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "core.schema.describe_request_limits",
    ],
    "ENUM_NAME_OVERRIDES": {
        "DatasetKindEnum": "annotation.models.DatasetKind",
        "TermKindEnum": "annotation.models.TermKind",
        "MediaKindEnum": "annotation.models.MediaKind",
        "SampleStatusEnum": "annotation.models.SampleStatus",
        "JobStatusEnum": "annotation.models.JobStatus",
        "ImportJobStatusEnum": "annotation.models.ImportJobStatus",
        "ImportKindEnum": "annotation.models.ImportKind",
    },
}

SESSION_COOKIE_HTTPONLY = True
X_FRAME_OPTIONS = "DENY"


# Content-Security-Policy (django-csp): scripts and styles only from the site's own static
# files, no inline code at all. Media are served by the site, or on S3 by a redirect to a
# presigned URL, whose origin images and audio must be allowed to load from: CSP_MEDIA_ORIGINS
# (comma-separated), by default the origin of S3_ENDPOINT_URL or of AWS's S3 in S3_REGION.
if S3_BUCKET and S3_ENDPOINT_URL:
    _scheme, _, _host = S3_ENDPOINT_URL.partition("://")
    _s3_origins = [f"{_scheme}://{_host.split('/', 1)[0]}"]
elif S3_BUCKET:
    _s3_origins = [f"https://s3.{S3_REGION}.amazonaws.com", "https://s3.amazonaws.com"]
else:
    _s3_origins = []
CSP_MEDIA_ORIGINS = env.list("CSP_MEDIA_ORIGINS", default=_s3_origins)
# Single sign-on starts with a form posted to the site that redirects to the identity
# provider, which form-action must allow.
OIDC_ISSUER = env.str("OIDC_ISSUER", default="")
_oidc_scheme, _, _oidc_host = OIDC_ISSUER.partition("://")
CSP_FORM_ORIGINS = [f"{_oidc_scheme}://{_oidc_host.split('/', 1)[0]}"] if _oidc_host else []
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": [SELF],
        "script-src": [SELF],
        "style-src": [SELF],
        "img-src": [SELF, "data:", "blob:", *CSP_MEDIA_ORIGINS],
        "media-src": [SELF, "blob:", *CSP_MEDIA_ORIGINS],
        "connect-src": [SELF],
        "font-src": [SELF],
        "object-src": [NONE],
        "base-uri": [SELF],
        "form-action": [SELF, *CSP_FORM_ORIGINS],
        "frame-ancestors": [NONE],
    }
}

# Login throttling (django-axes): after AXES_FAILURE_LIMIT wrong passwords for one username
# from one address, that pair is locked out for AXES_COOLOFF_MINUTES.
AXES_ENABLED = env.bool("AXES_ENABLED", default=True)
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=5)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "accounts.views.locked_out"
AXES_IPWARE_PROXY_COUNT = env.int("AXES_PROXY_COUNT", default=0)
# What django-axes leaves out of the request data it keeps of a failed sign-in.
AXES_SENSITIVE_PARAMETERS = ["username", "ip_address", "password", "code", "old_password"]

# API tokens expire after API_TOKEN_DAYS; a user makes and revokes theirs on their token page.
API_TOKEN_DAYS = env.int("API_TOKEN_DAYS", default=30)

# E-mail (invitations, password resets): printed on the console in the embedded run (DEBUG),
# sent by SMTP otherwise.
EMAIL_BACKEND = env.str(
    "EMAIL_BACKEND",
    default="django.core.mail.backends.console.EmailBackend"
    if DEBUG
    else "django.core.mail.backends.smtp.EmailBackend",
)
EMAIL_HOST = env.str("EMAIL_HOST", default="localhost")
EMAIL_PORT = env.int("EMAIL_PORT", default=25)
EMAIL_HOST_USER = env.str("EMAIL_HOST_USER", default="")
EMAIL_HOST_PASSWORD = env.str("EMAIL_HOST_PASSWORD", default="")
EMAIL_USE_TLS = env.bool("EMAIL_USE_TLS", default=False)
EMAIL_USE_SSL = env.bool("EMAIL_USE_SSL", default=False)
EMAIL_TIMEOUT = env.int("EMAIL_TIMEOUT", default=10)
DEFAULT_FROM_EMAIL = env.str("DEFAULT_FROM_EMAIL", default="review-studio@localhost")

# People (accounts): invitations expire after INVITATION_DAYS; with REQUIRE_LEAD_2FA (on
# outside the embedded run) a lead signs in with a password only together with a second
# factor, and sets one up at the first sign-in.
INVITATION_DAYS = env.int("INVITATION_DAYS", default=7)
REQUIRE_LEAD_2FA = env.bool("REQUIRE_LEAD_2FA", default=not DEBUG)
OTP_TOTP_ISSUER = env.str("OTP_TOTP_ISSUER", default="Review studio")
PASSWORD_RESET_TIMEOUT = env.int("PASSWORD_RESET_TIMEOUT", default=3 * 24 * 3600)

# Single sign-on through OpenID Connect (django-allauth), on when OIDC_ISSUER is set. People
# whose OIDC_GROUPS_CLAIM holds a group of OIDC_GROUP_ROLES ("idp-group=role,…", a role being
# lead, annotator or auditor) get that role; others get no access until a lead grants it.
# (OIDC_ISSUER is read with the Content-Security-Policy above.)
OIDC_CLIENT_ID = env.str("OIDC_CLIENT_ID", default="")
OIDC_CLIENT_SECRET = env.str("OIDC_CLIENT_SECRET", default="")
OIDC_PROVIDER_NAME = env.str("OIDC_PROVIDER_NAME", default="Single sign-on")
OIDC_SCOPES = env.list("OIDC_SCOPES", default=["openid", "profile", "email"])
OIDC_GROUPS_CLAIM = env.str("OIDC_GROUPS_CLAIM", default="groups")
OIDC_GROUP_ROLES = env.dict("OIDC_GROUP_ROLES", default={})
OIDC_EMAIL_AUTHENTICATION = env.bool("OIDC_EMAIL_AUTHENTICATION", default=False)
if OIDC_ISSUER and not OIDC_CLIENT_ID:
    raise ImproperlyConfigured("OIDC_ISSUER is set: set OIDC_CLIENT_ID (and OIDC_CLIENT_SECRET).")
SOCIALACCOUNT_PROVIDERS = {
    "openid_connect": {
        "SCOPE": OIDC_SCOPES,
        "OAUTH_PKCE_ENABLED": True,
        "APPS": [
            {
                "provider_id": "sso",
                "name": OIDC_PROVIDER_NAME,
                "client_id": OIDC_CLIENT_ID,
                "secret": OIDC_CLIENT_SECRET,
                "settings": {"server_url": OIDC_ISSUER},
            }
        ]
        if OIDC_ISSUER
        else [],
    }
}
# django-allauth serves single sign-on only: people sign in with a password through Django's
# own login view (accounts.sign_in_views), and no account is made but by an invitation or by
# the identity provider.
SOCIALACCOUNT_ONLY = True
ACCOUNT_ADAPTER = "accounts.sso.AccountAdapter"
SOCIALACCOUNT_ADAPTER = "accounts.sso.SocialAccountAdapter"
ACCOUNT_EMAIL_VERIFICATION = "none"
ACCOUNT_LOGIN_METHODS = {"username"}
ACCOUNT_SIGNUP_FIELDS = ["username*", "email"]
SOCIALACCOUNT_AUTO_SIGNUP = True
SOCIALACCOUNT_LOGIN_ON_GET = False
SOCIALACCOUNT_STORE_TOKENS = False
SOCIALACCOUNT_EMAIL_AUTHENTICATION = OIDC_EMAIL_AUTHENTICATION
SOCIALACCOUNT_EMAIL_AUTHENTICATION_AUTO_CONNECT = OIDC_EMAIL_AUTHENTICATION

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
}

# Imports (annotation.imports.services): folders the site may import server paths from (the
# import_samples command, run by an operator, may import any path), and the credentials of
# s3:// import sources (the S3_* settings above apply to them too).
IMPORT_SERVER_ROOTS = env.list("IMPORT_SERVER_ROOTS", default=[])
IMPORT_MAX_UPLOAD_BYTES = env.int("IMPORT_MAX_UPLOAD_BYTES", default=5 * 1024**3)
# Near-duplicates (annotation.duplicates): an import hashes each new image and keys each
# question, and records the possible duplicates it finds. Off, it does neither (what the import
# bench compares against); `manage.py duplicate_keys_refresh` keys and pairs the data later.
IMPORT_FIND_DUPLICATES = env.bool("IMPORT_FIND_DUPLICATES", default=True)

# Judges (core.egress): a judge's key is read only from a variable whose name starts with
# this prefix, so no other secret of the workers can be sent to a judge; judges are called only
# on public addresses unless their host:port is listed (a local vLLM or Ollama, say).
JUDGE_KEY_ENV_PREFIX = env.str("JUDGE_KEY_ENV_PREFIX", default="JUDGE_KEY_")
if not JUDGE_KEY_ENV_PREFIX:
    raise ImproperlyConfigured("JUDGE_KEY_ENV_PREFIX cannot be empty.")
JUDGE_ALLOWED_HOSTS = env.list("JUDGE_ALLOWED_HOSTS", default=[])
# Webhooks (annotation.webhooks): endpoints follow the judges' egress rules (core.egress), with
# their own list of host:port entries allowed although not public. A delivery is tried until
# its endpoint answers 2xx, waiting WEBHOOK_BACKOFF_SECONDS, then twice as long each time (at
# most WEBHOOK_BACKOFF_MAX_SECONDS), at most WEBHOOK_MAX_ATTEMPTS times and never past
# WEBHOOK_RETRY_WINDOW_SECONDS after the event; each request waits WEBHOOK_TIMEOUT_SECONDS.
# After a secret is rotated the old one signs too for WEBHOOK_SECRET_GRACE_SECONDS.
WEBHOOK_ALLOWED_HOSTS = env.list("WEBHOOK_ALLOWED_HOSTS", default=[])
WEBHOOK_TIMEOUT_SECONDS = env.float("WEBHOOK_TIMEOUT_SECONDS", default=10.0)
WEBHOOK_MAX_ATTEMPTS = env.int("WEBHOOK_MAX_ATTEMPTS", default=8)
WEBHOOK_BACKOFF_SECONDS = env.float("WEBHOOK_BACKOFF_SECONDS", default=30.0)
WEBHOOK_BACKOFF_MAX_SECONDS = env.float("WEBHOOK_BACKOFF_MAX_SECONDS", default=3600.0)
WEBHOOK_RETRY_WINDOW_SECONDS = env.float("WEBHOOK_RETRY_WINDOW_SECONDS", default=24 * 3600.0)
WEBHOOK_SECRET_GRACE_SECONDS = env.float("WEBHOOK_SECRET_GRACE_SECONDS", default=24 * 3600.0)
# A judge job's calls to endpoints run in lanes: each lane (one worker process) keeps every
# judge busy with its share of the judge's concurrency, a call starting as soon as one ends.
# Match JUDGE_JOB_LANES to the worker processes free for judging; a lane takes at most
# JUDGE_LANE_ITEMS items (more lanes are queued for a larger job).
JUDGE_JOB_LANES = env.int("JUDGE_JOB_LANES", default=2)
JUDGE_LANE_ITEMS = env.int("JUDGE_LANE_ITEMS", default=1000)

SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]["JudgeKindEnum"] = "judging.models.JudgeKind"  # type: ignore[index]
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"]["ResponseFormatEnum"] = (  # type: ignore[index]
    "judging.services.responses.RESPONSE_FORMAT_CHOICES"
)
