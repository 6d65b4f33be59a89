"""Settings shared by every environment. Everything that differs comes from the environment."""

from __future__ import annotations

from pathlib import Path

import dj_database_url

from config.settings.env import env_bool, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
# Everything the app writes at run time (SQLite file, media, embedded broker) lives under var/.
VAR_DIR = Path(env_str("VAR_DIR", str(BASE_DIR / "var")))
# SQLite cannot create a database file in a folder that does not exist yet (a fresh clone).
VAR_DIR.mkdir(parents=True, exist_ok=True)

SECRET_KEY = env_str("SECRET_KEY", "insecure-local-development-key-change-me")
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

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
    "drf_spectacular_sidecar",  # the Swagger UI's files, served from this site (no CDN)
    "django_htmx",
    "annotation",
    # before evaluation: its `submit` command extends evaluation's with --router
    "routers",
    "evaluation",
    "leaderboard",
    "trace_review",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # before the CSRF check, which reads the body: an over-size upload is refused by its declared length
    "evaluation.middleware.UploadSizeLimitMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # after authentication (a signed-in user is counted per account); counters in the cache (THROTTLE_CACHE)
    "config.rate_limit.PageRateLimitMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "annotation.context_processors.navigation",
                "trace_review.context_processors.navigation",
            ],
        },
    },
]


def database_config(url: str | None, var_dir: Path) -> dict:
    """SQLite under var/ unless DATABASE_URL names another database."""
    if url:
        return dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True)
    return {"ENGINE": "django.db.backends.sqlite3", "NAME": var_dir / "db.sqlite3"}


DATABASES = {"default": database_config(env_str("DATABASE_URL"), VAR_DIR)}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
    "config.staticfinders.PackageFileFinder",  # vendor/plotly.min.js from the plotly package
]
MEDIA_URL = "media/"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
# Prediction files and sample images: a root of their own, never under MEDIA_ROOT, with no URL; they
# are served only by views that check access (config/storages.py, docs/security.md).
PRIVATE_MEDIA_ROOT = Path(env_str("PRIVATE_MEDIA_ROOT", str(VAR_DIR / "private")))
STORAGES = {
    "default": {"BACKEND": "config.storages.AtomicFileSystemStorage"},
    "private": {"BACKEND": "config.storages.PrivateFileSystemStorage", "OPTIONS": {"location": str(PRIVATE_MEDIA_ROOT)}},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
# Images of a sample are small PNGs, but a benchmark import may carry large scans.
DATA_UPLOAD_MAX_MEMORY_SIZE = 10 * 1024 * 1024

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"
LOGOUT_REDIRECT_URL = "/"

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.AllowAny"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # config/api_throttle.py: API_THROTTLE_ANON per address, API_THROTTLE_USER per account (429 beyond)
    "DEFAULT_THROTTLE_CLASSES": ["config.api_throttle.AnonApiThrottle", "config.api_throttle.UserApiThrottle"],
}
API_THROTTLE_ANON = env_str("API_THROTTLE_ANON", "300/minute")
API_THROTTLE_USER = env_str("API_THROTTLE_USER", "1200/minute")
SPECTACULAR_SETTINGS = {
    "TITLE": "Adaptive tool-use VLM benchmark platform API",
    "DESCRIPTION": "Benchmarks, submissions, leaderboards and the visual tool registry.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # /api/docs/ works offline: Swagger UI's files come from drf-spectacular-sidecar's static files
    # (pinned in requirements.txt), not from a CDN at an unpinned @latest; no validator badge either
    # (Swagger UI would fetch it from swagger.io).
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
}


def celery_broker_url(url: str | None, var_dir: Path) -> str:
    """Redis or RabbitMQ when CELERY_BROKER_URL is set, else kombu's filesystem transport (its host named: without
    one, kombu warns "No hostname was supplied" at every connection)."""
    return url or "filesystem://localhost//"


def celery_broker_options(url: str | None, var_dir: Path) -> dict:
    if url:
        # Redis re-delivers an unacknowledged task after this many seconds: the backstop when a
        # whole worker is killed and the sweeper is not running. A stage still running when its
        # message comes back is harmless: the second delivery finds the stage claimed and returns
        # (evaluation/pipeline/claims.py, _claim). Keep it above the longest countdown of a retry (judge:
        # SUBMISSION_JUDGE_RETRY_SECONDS x 2^(retries-1)), since Redis also re-delivers those.
        timeout = env_int("CELERY_VISIBILITY_TIMEOUT", 300, minimum=30)
        return {"visibility_timeout": timeout} if url.startswith(("redis://", "rediss://")) else {}
    folder = var_dir / "broker"
    for sub in ("queue", "processed", "control"):
        (folder / sub).mkdir(parents=True, exist_ok=True)
    return {
        "data_folder_in": str(folder / "queue"),
        "data_folder_out": str(folder / "queue"),
        "processed_folder": str(folder / "processed"),
        "control_folder": str(folder / "control"),  # else kombu writes control/ into the working directory
        "store_processed": False,
    }


CELERY_BROKER_URL = celery_broker_url(env_str("CELERY_BROKER_URL"), VAR_DIR)
CELERY_BROKER_TRANSPORT_OPTIONS = celery_broker_options(env_str("CELERY_BROKER_URL"), VAR_DIR)
CELERY_RESULT_BACKEND = None  # results live in our own tables, not in Celery's backend
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ALWAYS_EAGER = False  # only the unit-test settings may turn this on
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A worker (and beat) rides out a broker outage of any length: it retries the connection forever (Celery's
# default gives up after 100 tries and the worker exits), every BROKER_RECONNECT_MAX_SECONDS at most, so it
# is consuming again within seconds of the broker's return. A stage running when the broker goes keeps
# running (it needs the database and the judge, not the broker); its message, which can no longer be
# acknowledged, comes back later and finds the stage finished or claimed (evaluation/pipeline/claims.py).
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
CELERY_WORKER_CANCEL_LONG_RUNNING_TASKS_ON_CONNECTION_LOSS = False
BROKER_RECONNECT_MAX_SECONDS = env_int("BROKER_RECONNECT_MAX_SECONDS", 5, minimum=1)
CELERY_WORKER_CONSUMER = "config.celery:PromptConsumer"
CELERY_BEAT_SCHEDULER = "config.celery:PromptScheduler"
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 1800, minimum=1)

# Judges (docs/metrics.md, section 9). Without JUDGE_OPENAI_BASE_URL the offline judge is used.
JUDGE_OPENAI_MODEL = env_str("JUDGE_OPENAI_MODEL", "gpt-4o-mini")
JUDGE_OPENAI_BASE_URL = env_str("JUDGE_OPENAI_BASE_URL")
JUDGE_OPENAI_API_KEY = env_str("JUDGE_OPENAI_API_KEY")
JUDGE_OPENAI_TIMEOUT = env_int("JUDGE_OPENAI_TIMEOUT", 60, minimum=1)
# Requests in flight at once, each carrying up to JUDGE_OPENAI_BATCH questions of one kind
# (1 = one question per request, for a model that cannot follow the batch format; docs/judges.md).
JUDGE_OPENAI_CONCURRENCY = env_int("JUDGE_OPENAI_CONCURRENCY", 16, minimum=1)
JUDGE_OPENAI_BATCH = env_int("JUDGE_OPENAI_BATCH", 20, minimum=1)
JUDGE_OPENAI_MAX_RETRIES = env_int("JUDGE_OPENAI_MAX_RETRIES", 3, minimum=0)
# A flaky judge is slow, not dead: past JUDGE_OPENAI_MAX_RETRIES a failing request is still tried again, with
# backoff (at most 30 s apart), as long as the judge answered some request within this many seconds, until
# the scoring stage's time limit is near (0.9 x CELERY_TASK_TIME_LIMIT) or JUDGE_BUDGET_USD is reached.
JUDGE_OPENAI_PATIENCE_SECONDS = env_int("JUDGE_OPENAI_PATIENCE_SECONDS", 120, minimum=0)
# The provider's limits, kept by every request thread together (0 = none): requests and estimated
# tokens (input + output) per minute.
JUDGE_OPENAI_RPM = env_int("JUDGE_OPENAI_RPM", 0, minimum=0)
JUDGE_OPENAI_TPM = env_int("JUDGE_OPENAI_TPM", 0, minimum=0)
# The judge's prices in dollars per million tokens (input, output): the real spend of each run is
# stored with its results. JUDGE_BUDGET_USD (0 = none): one scoring run stops, failing the
# submission with the reason, before a request would take its spend past it.
JUDGE_PRICE_INPUT = env_float("JUDGE_PRICE_INPUT", 0.0)
JUDGE_PRICE_OUTPUT = env_float("JUDGE_PRICE_OUTPUT", 0.0)
JUDGE_BUDGET_USD = env_float("JUDGE_BUDGET_USD", 0.0)

# Benchmark import limits.
BENCHMARK_IMPORT_MAX_ERRORS = env_int("BENCHMARK_IMPORT_MAX_ERRORS", 50, minimum=1)
IMAGE_MAX_PIXELS = env_int("IMAGE_MAX_PIXELS", 64_000_000, minimum=1)
# A zip is unpacked counting the bytes actually written, not its headers' claims (zip bombs).
BENCHMARK_IMPORT_MAX_UNPACKED_BYTES = env_int("BENCHMARK_IMPORT_MAX_UNPACKED_BYTES", 512 * 1024**2, minimum=1)

EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "leaderboard@localhost")
# The site's address as a reader of an e-mail reaches it (scheme and host, no trailing slash): mails carry
# absolute links built on it (evaluation.services.absolute_url), never a bare "/submissions/15/".
SITE_URL = (env_str("SITE_URL", "http://localhost:8000") or "").rstrip("/")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    # httpx logs every request at INFO; the judge logs one line per batch instead.
    "loggers": {"httpx": {"level": "WARNING"}, "httpx2": {"level": "WARNING"}},  # (openai 3 ships httpx2)
}

# ---------------------------------------------------------------------------------------------
# Submissions (evaluation app; docs/submissions.md). Limits, quotas and the stuck-submission sweeper.
SUBMISSION_MAX_FILE_BYTES = env_int("SUBMISSION_MAX_FILE_BYTES", 200 * 1024 * 1024, minimum=1)
SUBMISSION_MAX_LINE_BYTES = env_int("SUBMISSION_MAX_LINE_BYTES", 1024 * 1024, minimum=1)
SUBMISSION_MAX_ERRORS = env_int("SUBMISSION_MAX_ERRORS", 50, minimum=1)
# Per researcher, per benchmark, in any 24 hours; failed submissions do not count; staff are exempt.
SUBMISSIONS_PER_DAY = env_int("SUBMISSIONS_PER_DAY", 5, minimum=1)
# Submissions of one researcher that may be in the pipeline at once (queued to judging).
SUBMISSIONS_MAX_ACTIVE_PER_USER = env_int("SUBMISSIONS_MAX_ACTIVE_PER_USER", 2, minimum=1)
# Recovery (docs/submissions.md, "Recovery bounds"). A worker running a stage renews its claim's
# heartbeat every SUBMISSION_HEARTBEAT_SECONDS from a thread, however long the stage takes; a
# non-final submission with no heartbeat for SUBMISSION_STUCK_SECONDS has lost its worker, and the
# sweeper (every SUBMISSION_SWEEP_SECONDS, on its own queue) sends its stage again.
SUBMISSION_HEARTBEAT_SECONDS = env_int("SUBMISSION_HEARTBEAT_SECONDS", 10, minimum=1)
SUBMISSION_STUCK_SECONDS = env_int("SUBMISSION_STUCK_SECONDS", 60, minimum=1)
SUBMISSION_SWEEP_SECONDS = env_int("SUBMISSION_SWEEP_SECONDS", 15, minimum=1)
# A queued submission nobody has claimed is re-sent after this long (its message was lost, or the
# broker was down at upload); longer than SUBMISSION_STUCK_SECONDS so a backlog is not flooded with copies.
SUBMISSION_QUEUED_RESEND_SECONDS = env_int("SUBMISSION_QUEUED_RESEND_SECONDS", 300, minimum=1)
# A stage is claimed (started) at most this many times; the next claim fails it with a reason.
SUBMISSION_MAX_ATTEMPTS = env_int("SUBMISSION_MAX_ATTEMPTS", 3, minimum=1)
# A lost database or broker connection in a stage: retried this many times, after 1, 2, 4 ... x
# SUBMISSION_TRANSIENT_RETRY_SECONDS (then the sweeper's turn); never a failure of the submission.
SUBMISSION_TRANSIENT_RETRIES = env_int("SUBMISSION_TRANSIENT_RETRIES", 5, minimum=0)
SUBMISSION_TRANSIENT_RETRY_SECONDS = env_int("SUBMISSION_TRANSIENT_RETRY_SECONDS", 1, minimum=0)
# Each worker records a heartbeat every WORKER_HEARTBEAT_SECONDS (evaluation/worker_beats.py); when no
# worker on SUBMISSIONS_QUEUE has for WORKER_SILENT_SECONDS, the submission page, the API and the health
# page say that nothing can progress until one is started.
WORKER_HEARTBEAT_SECONDS = env_int("WORKER_HEARTBEAT_SECONDS", 15, minimum=1)
WORKER_SILENT_SECONDS = env_int("WORKER_SILENT_SECONDS", 120, minimum=1)
# The admin health page flags an active submission older than this (queue wait included).
SUBMISSION_ALERT_AGE_SECONDS = env_int("SUBMISSION_ALERT_AGE_SECONDS", 3600, minimum=1)
# Judge failures (after the judge's own retries) retry the scoring task this many times, with backoff.
SUBMISSION_JUDGE_RETRIES = env_int("SUBMISSION_JUDGE_RETRIES", 3, minimum=0)
SUBMISSION_JUDGE_RETRY_SECONDS = env_int("SUBMISSION_JUDGE_RETRY_SECONDS", 30, minimum=0)
# When a worker starts it sends itself one task per pool process that prepares (reads and digests)
# the benchmarks submitted to in the last SCORING_WARMUP_DAYS days, so the first submission after a
# restart does not wait for it (evaluation/benchmark_cache.py, evaluation/tasks.py).
SCORING_WARMUP = env_bool("SCORING_WARMUP", True)
SCORING_WARMUP_DAYS = env_int("SCORING_WARMUP_DAYS", 30, minimum=0)
# The Celery queue the pipeline's tasks go to (tests give their worker a private one).
SUBMISSIONS_QUEUE = env_str("SUBMISSIONS_QUEUE", "celery")
# A benchmark's public downloads (annotation/downloads, docs/downloads.md): their build task's queue (the
# pipeline worker's by default), and how long a build may hold its claim before another delivery takes it over.
DOWNLOADS_QUEUE = env_str("DOWNLOADS_QUEUE", SUBMISSIONS_QUEUE)
DOWNLOAD_BUILD_STALE_SECONDS = env_int("DOWNLOAD_BUILD_STALE_SECONDS", 3600, minimum=60)
# Approvals send their builds this much later (under the Redis visibility timeout), so a burst builds once.
DOWNLOAD_APPROVAL_DELAY_SECONDS = env_int("DOWNLOAD_APPROVAL_DELAY_SECONDS", 120, minimum=0)
# The refresh of each derived kind (evaluation/derived.py; docs/architecture.md, "Derived figures"), told by
# name with the benchmark's id on commit of evaluation.services.benchmark_results_bump: the board's entries
# and ranks, the router pool and its baselines, the guessability audit. Readers never build them.
RESULTS_CHANGED_TASKS = ("leaderboard.tasks.board_refresh", "routers.pool_refresh",
                         "evaluation.tasks.guessability_refresh", "evaluation.tasks.agentx_refresh")
# Each refresh is sent this many seconds after the change (a countdown), so that a burst of changes (twenty
# finishes within a second) is built once: the first message due builds the latest version and the others find
# it current (one query each). Pages say "updating" meanwhile and filter what must hold at once at read time.
RESULTS_CHANGED_DELAY_SECONDS = env_float("RESULTS_CHANGED_DELAY_SECONDS", 2.0)
# Tasks told (by name, with the benchmark's id) on commit of a change of a benchmark's scoring profile
# (annotation.services.benchmark_scoring_set: the admin, an import): evaluation re-scores its submissions.
SCORING_CHANGED_TASKS = ("evaluation.tasks.benchmark_rescore",)
# The sweeper's own queue, consumed by a small worker of its own (scripts/run, docker-compose.yml):
# it runs when no pipeline worker is up and is not stuck behind a backlog of submissions.
SUBMISSIONS_SWEEP_QUEUE = env_str("SUBMISSIONS_SWEEP_QUEUE", "sweeper")
# Hosted runs (docs/runs.md, "Hosted runs"): their own queue and worker (scripts/run, docker-compose.yml),
# so a long run never holds up scoring. A running run renews its heartbeat every RUNS_HEARTBEAT_SECONDS;
# after RUNS_STUCK_SECONDS of silence its worker is taken for dead and the sweeper sends it again (it
# resumes from the request cache, RUNS_CACHE_PATH); after RUNS_MAX_ATTEMPTS deliveries it fails.
RUNS_QUEUE = env_str("RUNS_QUEUE", "runs")
# Pixels of decoded original images the harness's pairs may hold at once per process (evaluation/harness/loop.py,
# DecodedBudget): a pair in flight keeps its originals for the tools; four 8K images (~400 MB) by default.
RUNS_DECODED_PIXELS_MAX = env_int("RUNS_DECODED_PIXELS_MAX", 2 * 7680 * 4320, minimum=1)
# A dead worker's run is taken over within RUNS_STUCK_SECONDS + RUNS_HEARTBEAT_SECONDS + SUBMISSION_SWEEP_SECONDS
# (45 s at the defaults; issue 40 asked for 60). A running run reads its owner's cancel every RUNS_CANCEL_POLL_SECONDS.
RUNS_HEARTBEAT_SECONDS = env_int("RUNS_HEARTBEAT_SECONDS", 5, minimum=1)
RUNS_STUCK_SECONDS = env_int("RUNS_STUCK_SECONDS", 25, minimum=1)
RUNS_CANCEL_POLL_SECONDS = env_float("RUNS_CANCEL_POLL_SECONDS", 1.0)
RUNS_QUEUED_RESEND_SECONDS = env_int("RUNS_QUEUED_RESEND_SECONDS", 300, minimum=1)
# Deliveries in a row that made no progress (one that answered anything resets the count: a long run is
# never failed for the deliveries a few worker restarts cost it).
RUNS_MAX_ATTEMPTS = env_int("RUNS_MAX_ATTEMPTS", 3, minimum=1)
# A run's own task time limit (7 days): the pipeline's CELERY_TASK_TIME_LIMIT would cut a long run.
RUNS_TASK_TIME_LIMIT = env_int("RUNS_TASK_TIME_LIMIT", 7 * 24 * 3600, minimum=60)
RUNS_MAX_ACTIVE_PER_USER = env_int("RUNS_MAX_ACTIVE_PER_USER", 2, minimum=1)
RUNS_CACHE_PATH = Path(env_str("RUNS_CACHE_PATH", str(VAR_DIR / "run_cache.sqlite3")))
RUNS_CONCURRENCY_MAX = env_int("RUNS_CONCURRENCY_MAX", 16, minimum=1)
RUNS_REQUEST_TIMEOUT = env_int("RUNS_REQUEST_TIMEOUT", 120, minimum=1)
# An unavailable provider (timeouts, 5xx, refused connections, 429s) is waited out (docs/runs.md, "When the
# provider fails"): its pairs are asked again in later passes, the n-th after RUNS_RETRY_BACKOFF_SECONDS x 2^(n-1)
# (at most RUNS_RETRY_BACKOFF_MAX_SECONDS, with jitter), until RUNS_PATIENCE_SECONDS go by without one answer;
# then the run stops ("the provider was unavailable"), its answers kept for a start again.
RUNS_PATIENCE_SECONDS = env_int("RUNS_PATIENCE_SECONDS", 1800, minimum=1)
RUNS_RETRY_BACKOFF_SECONDS = env_float("RUNS_RETRY_BACKOFF_SECONDS", 2.0)
RUNS_RETRY_BACKOFF_MAX_SECONDS = env_float("RUNS_RETRY_BACKOFF_MAX_SECONDS", 60.0)
# One request's own retries (a timeout, a connection error, a 5xx) before its pair waits for the next pass.
RUNS_REQUEST_RETRIES = env_int("RUNS_REQUEST_RETRIES", 3, minimum=0)
RUNS_REQUEST_BACKOFF_SECONDS = env_float("RUNS_REQUEST_BACKOFF_SECONDS", 0.5)
# Loopback, private, link-local and multicast endpoints: refused unless this is on (local and test
# settings turn it on; production leaves it off unless the environment says otherwise).
RUNS_ALLOW_PRIVATE_ENDPOINTS = env_bool("RUNS_ALLOW_PRIVATE_ENDPOINTS", False)
# The key that encrypts endpoints' API keys at rest (a Fernet key: 32 url-safe base64 bytes). Unset, it
# is derived from SECRET_KEY (which production requires to be strong); rotate by setting it.
RUNS_ENCRYPTION_KEY = env_str("RUNS_ENCRYPTION_KEY", "")
CELERY_BEAT_SCHEDULE = {
    "runs-sweep": {  # hosted runs left queued (broker down) or silent (worker lost): docs/runs.md
        "task": "evaluation.tasks.runs_sweep",
        "schedule": float(SUBMISSION_SWEEP_SECONDS),
        "options": {"queue": SUBMISSIONS_SWEEP_QUEUE, "expires": float(SUBMISSION_SWEEP_SECONDS)},
    },
    "submissions-sweep": {
        "task": "evaluation.tasks.submissions_sweep",
        "schedule": float(SUBMISSION_SWEEP_SECONDS),
        "options": {"queue": SUBMISSIONS_SWEEP_QUEUE, "expires": float(SUBMISSION_SWEEP_SECONDS)},
    },
    "routers-sweep": {  # router submissions left queued (broker down) or stuck scoring (worker lost): docs/routers.md
        "task": "routers.sweep",
        "schedule": float(SUBMISSION_SWEEP_SECONDS),
        "options": {"queue": SUBMISSIONS_SWEEP_QUEUE, "expires": float(SUBMISSION_SWEEP_SECONDS)},
    },
    "ranks-fold": {  # the boards' rank shifts folded into their rows, off the refresh's way: docs/architecture.md
        "task": "leaderboard.tasks.ranks_fold",
        "schedule": float(SUBMISSION_SWEEP_SECONDS),
        "options": {"queue": SUBMISSIONS_SWEEP_QUEUE, "expires": float(SUBMISSION_SWEEP_SECONDS)},
    },
}
# SQLite (the default, local runs and tests): scoring a large file writes ~100k rows in one
# transaction, for seconds. In WAL mode, pages reading a submission's status are not blocked by
# that write, and a second writer waits up to 30 s instead of failing with "database is locked".
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"timeout": 30, "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
         # A transaction that reads, then writes, would be refused at once ("database is locked") when
         # another writer went first (SQLite cannot upgrade it while waiting); taking the write lock at
         # BEGIN makes it wait its turn, up to the timeout, instead: a web request and a worker that
         # rebuild the same board at once take turns.
         "transaction_mode": "IMMEDIATE"}
    )

# ---------------------------------------------------------------------------------------------
# Cache (leaderboard pages and fragments; leaderboard/cache.py). In-process memory by default;
# Redis when REDIS_URL or CACHE_URL names one (shared by every web process, so an invalidation
# reaches them all).
_CACHE_URL = env_str("CACHE_URL") or env_str("REDIS_URL")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _CACHE_URL, "KEY_PREFIX": "vlmlb"}
        if _CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "leaderboard",
              "OPTIONS": {"MAX_ENTRIES": 5000}}
    )
}

# ---------------------------------------------------------------------------------------------
# Security headers and sign-in throttling (config/csp.py, config/login_throttle.py; docs/security.md).
MIDDLEWARE.insert(MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1,
                  "config.csp.ContentSecurityPolicyMiddleware")
# The store of the throttles' counters (config/rate_limit.py, config/login_throttle.py): the default cache,
# shared by every web process when it is Redis; in-process memory counts per process.
THROTTLE_CACHE = "default"
# Pages outside the API (config/rate_limit.py): requests per address (anonymous) or per account (signed in);
# beyond, the 429 page with Retry-After. "off" turns one off.
PAGE_RATE_LIMIT_ANON = env_str("PAGE_RATE_LIMIT_ANON", "300/minute")
PAGE_RATE_LIMIT_USER = env_str("PAGE_RATE_LIMIT_USER", "1200/minute")
# Not limited: static files and media (WhiteNoise serves static ones before any middleware in production),
# the favicon, the API (DRF's throttles, config/api_throttle.py) and the health page.
RATE_LIMIT_EXEMPT = [f"/{STATIC_URL.lstrip('/')}", f"/{MEDIA_URL.lstrip('/')}", "/favicon.ico", "/api/",
                     "/submissions/health/"]
# After this many failed sign-ins for one username from one address, that pair waits LOGIN_LOCKOUT_SECONDS.
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
LOGIN_LOCKOUT_SECONDS = env_int("LOGIN_LOCKOUT_SECONDS", 900, minimum=1)

# MMReason's guessability audit (docs/metrics.md, "Blind mode"): a sample is guessable when at
# least GUESSABLE_K of the benchmark's public blind submissions answer it correctly; nothing is
# flagged before GUESSABLE_MIN_BLIND such submissions exist.
GUESSABLE_K = env_int("GUESSABLE_K", 2, minimum=1)
GUESSABLE_MIN_BLIND = env_int("GUESSABLE_MIN_BLIND", 3, minimum=1)
