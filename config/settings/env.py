"""Small, typed readers for settings that come from the environment.

Kept free of Django so that they can be unit-tested on their own.
"""

from __future__ import annotations

import os
from collections.abc import Mapping


class ImproperlyConfiguredEnv(RuntimeError):
    """A required environment variable is missing or malformed."""


def env_str(name: str, default: str | None = None, *, environ: Mapping[str, str] | None = None) -> str | None:
    environ = os.environ if environ is None else environ
    value = environ.get(name)
    if value is None or value.strip() == "":
        return default
    return value.strip()


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off"}


def env_bool(name: str, default: bool, *, environ: Mapping[str, str] | None = None) -> bool:
    value = env_str(name, environ=environ)
    if value is None:
        return default
    lowered = value.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfiguredEnv(f"{name}={value!r} is not a boolean (use one of 1/0, true/false, yes/no, on/off).")


def env_int(name: str, default: int, *, environ: Mapping[str, str] | None = None, minimum: int | None = None) -> int:
    value = env_str(name, environ=environ)
    if value is None:
        return default
    try:
        parsed = int(value)
    except ValueError:
        raise ImproperlyConfiguredEnv(f"{name}={value!r} is not a whole number.") from None
    if minimum is not None and parsed < minimum:
        raise ImproperlyConfiguredEnv(f"{name}={parsed} is below the minimum {minimum}.")
    return parsed


def env_float(name: str, default: float, *, environ: Mapping[str, str] | None = None) -> float:
    """A number that is not negative (a price, a budget)."""
    value = env_str(name, environ=environ)
    if value is None:
        return default
    try:
        parsed = float(value)
    except ValueError:
        raise ImproperlyConfiguredEnv(f"{name}={value!r} is not a number.") from None
    if not parsed >= 0:
        raise ImproperlyConfiguredEnv(f"{name}={value!r} must be 0 or more.")
    return parsed


def env_list(name: str, default: list[str] | None = None, *, environ: Mapping[str, str] | None = None) -> list[str]:
    value = env_str(name, environ=environ)
    if value is None:
        return list(default or [])
    return [item.strip() for item in value.split(",") if item.strip()]


# Keys that are in this repository (development, test, image build) or Django's own placeholder prefix.
KNOWN_SECRET_KEYS = frozenset({
    "insecure-local-development-key-change-me", "test-secret-key-not-for-production", "build", "changeme",
    "change-me", "secret", "secret-key", "your-secret-key",
})
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE = 5


def secret_key_problem(key: str) -> str | None:
    """Why ``key`` is too weak to sign production sessions and tokens, or None when it will do.

    The same bar as Django's deployment check (security.W009), plus the keys known from this
    repository; the check only warns, production refuses to start.
    """
    how = "Generate one with: python -c 'import secrets; print(secrets.token_urlsafe(50))'"
    if key.strip().lower() in KNOWN_SECRET_KEYS or key.startswith("django-insecure-"):
        return f"SECRET_KEY is a published development or placeholder value; production needs its own. {how}"
    if len(key) < SECRET_KEY_MIN_LENGTH:
        return (f"SECRET_KEY is too short for production: {len(key)} characters, at least "
                f"{SECRET_KEY_MIN_LENGTH} needed. {how}")
    if len(set(key)) < SECRET_KEY_MIN_UNIQUE:
        return (f"SECRET_KEY is too weak for production: only {len(set(key))} different characters, at least "
                f"{SECRET_KEY_MIN_UNIQUE} needed. {how}")
    return None
