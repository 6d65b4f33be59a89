"""Production: refuses to start without SECRET_KEY and ALLOWED_HOSTS; secure cookies and HSTS on."""

from config.settings.base import *  # noqa: F401,F403
from config.settings.env import env_bool, env_int, env_list, env_required

DEBUG = False
SECRET_KEY = env_required("SECRET_KEY")
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
if not ALLOWED_HOSTS:
    from config.settings.env import ImproperlyConfiguredEnv

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
