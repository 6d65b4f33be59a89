"""Production: refuses to start without SECRET_KEY (or with a weak one) and ALLOWED_HOSTS; secure
cookies and HSTS on. This is the default of manage.py, wsgi, asgi and the Celery app: a command run
without DJANGO_SETTINGS_MODULE never serves with DEBUG on. Locally, scripts/run and scripts/test
choose their settings themselves."""

from config.settings.base import *  # noqa: F401,F403
from config.settings.env import ImproperlyConfiguredEnv, env_bool, env_int, env_list, env_str, secret_key_problem

LOCAL_HINT = ("(These are the production settings, the default. For local development set "
              "DJANGO_SETTINGS_MODULE=config.settings.local, as ./scripts/run does.)")

DEBUG = False
SECRET_KEY = env_str("SECRET_KEY") or ""
if not SECRET_KEY:
    raise ImproperlyConfiguredEnv(f"The environment variable SECRET_KEY must be set. {LOCAL_HINT}")
if problem := secret_key_problem(SECRET_KEY):
    raise ImproperlyConfiguredEnv(problem)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
if not ALLOWED_HOSTS:
    raise ImproperlyConfiguredEnv("The environment variable ALLOWED_HOSTS must be set (comma-separated host names).")

SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"

# Static files under hashed names (cached for ever by browsers), each with a gzip copy WhiteNoise sends to
# browsers that accept it: plotly.js goes out as 1.4 MB instead of 4.8 MB. Needs `collectstatic` (the
# Dockerfile runs it); a {% static %} name missing from the manifest is an error, not a broken link.
STORAGES = {**STORAGES, "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"}}  # noqa: F405

# The throttles (the pages' rate limit, sign-in throttling) count in the cache: in-process memory counts per
# web process, so N processes let N times the limit through. Said at start-up, not refused: a one-process
# deployment is fine with it.
if CACHES[THROTTLE_CACHE]["BACKEND"].endswith("LocMemCache"):  # noqa: F405
    import warnings

    warnings.warn("CACHE_URL (or REDIS_URL) is not set: rate limits and sign-in throttling count per process. "
                  "Set it to a Redis URL shared by the web processes.", stacklevel=1)
