"""Sign-in throttling: after LOGIN_FAILURE_LIMIT failed sign-ins for one username from one address,
that pair is refused for LOGIN_LOCKOUT_SECONDS (a bounded lockout: it ends by itself, and the same
account stays open from elsewhere, so nobody can lock a colleague out from their own desk).

Counters live in the throttles' cache (``config.rate_limit.throttle_cache``, with the pages' rate limit:
Redis in production, so every web process shares them). Used by the site's login page and the admin's.
"""

from __future__ import annotations

import hashlib
import math
import time
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.http import HttpRequest, HttpResponse

from config.rate_limit import client_address, throttle_cache


def _keys(request: HttpRequest | None, username: str) -> tuple[str, str]:
    address = client_address(request) if request is not None else "unknown"
    digest = hashlib.sha256(f"{username.strip().lower()}\0{address}".encode()).hexdigest()[:32]
    return f"login-failures:{digest}", f"login-locked:{digest}"


def locked_for(request: HttpRequest | None, username: str) -> int:
    """Seconds left of this username+address's lockout (0: not locked)."""
    until = throttle_cache().get(_keys(request, username)[1])
    return max(0, math.ceil(until - time.time())) if until else 0


def record_failure(request: HttpRequest | None, username: str) -> None:
    failures, lock = _keys(request, username)
    window = settings.LOGIN_LOCKOUT_SECONDS
    cache = throttle_cache()
    cache.add(failures, 0, timeout=window)  # the window starts at the first failure
    try:
        count = cache.incr(failures)
    except ValueError:  # expired between add and incr
        cache.set(failures, count := 1, timeout=window)
    if count >= settings.LOGIN_FAILURE_LIMIT:
        cache.set(lock, time.time() + window, timeout=window)
        cache.delete(failures)


def clear_failures(request: HttpRequest | None, username: str) -> None:
    throttle_cache().delete_many(list(_keys(request, username)))


def lockout_message(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return (f"Too many failed sign-ins for this username from your address. Sign-in is paused for "
            f"{minutes} minute{'s' if minutes != 1 else ''}; try again then, or ask an administrator to reset "
            "your password.")


class ThrottleMixin:
    """For an AuthenticationForm: refuse while locked out, count failures, clear them on success."""

    request: HttpRequest | None
    throttled = False

    def clean(self) -> dict[str, Any]:
        username = self.data.get("username", "") or ""
        if username and (left := locked_for(self.request, username)):
            self.throttled = True
            raise forms.ValidationError(lockout_message(left), code="throttled")
        try:
            cleaned = super().clean()  # type: ignore[misc]
        except forms.ValidationError as error:
            if username and any(e.code == "invalid_login" for e in error.error_list):
                record_failure(self.request, username)
            raise
        clear_failures(self.request, username)
        return cleaned


class ThrottledAuthenticationForm(ThrottleMixin, AuthenticationForm):
    pass


class ThrottledAdminAuthenticationForm(ThrottleMixin, AdminAuthenticationForm):
    pass


class ThrottledLoginView(LoginView):
    form_class = ThrottledAuthenticationForm

    def form_invalid(self, form: Any) -> HttpResponse:
        response = super().form_invalid(form)
        if getattr(form, "throttled", False):
            response.status_code = 429
        return response
