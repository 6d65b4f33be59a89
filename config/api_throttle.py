"""Request throttling for the API (DRF): per address for anonymous callers, per account otherwise.

The rates are read from the settings at each request (DRF's own classes bind them at import), so
they can be changed per environment and per test; ``None`` turns a throttle off.
"""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle


class AnonApiThrottle(AnonRateThrottle):
    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_ANON


class UserApiThrottle(UserRateThrottle):
    def get_rate(self) -> str | None:
        return settings.API_THROTTLE_USER
