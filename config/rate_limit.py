"""A per-address rate limit on the site's pages (docs/security.md, "Rate limits").

Anonymous visitors are counted per address (an IPv6 address by its /64, which one household or host
is given whole), signed-in users per account, each against its own limit (``PAGE_RATE_LIMIT_ANON``,
``PAGE_RATE_LIMIT_USER``: "N/second|minute|hour", or "off"). Beyond it the visitor gets
the 429 page (``templates/429.html``) with ``Retry-After``: the seconds left of the window.

The counters live in the cache named by ``THROTTLE_CACHE`` (the default cache: Redis in production,
so every web process shares one count; the embedded default's in-process memory counts per process,
which only loosens the limit by the number of processes). Nothing is written to the database: a page
read stays a read. The API has DRF's throttles (``config/api_throttle.py``); static files, media and
the health page are not limited (``RATE_LIMIT_EXEMPT``).

The window is fixed (a counter per period, expiring with it): a visitor may get up to twice the
limit across a window's edge, the price of one cache round trip (add + incr) per request.
"""

from __future__ import annotations

import hashlib
import ipaddress
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import BaseCache
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils.cache import add_never_cache_headers

PERIODS = {"second": 1, "minute": 60, "hour": 3600}


@dataclass(frozen=True, slots=True)
class Rate:
    count: int
    seconds: int

    @classmethod
    def parse(cls, text: str | None) -> Rate | None:
        """"120/minute" -> Rate(120, 60); "off" (or None): no limit. A malformed rate is a settings error."""
        if not text or text.strip().lower() in ("off", "none"):
            return None
        count, _, period = text.partition("/")
        if period not in PERIODS or not count.strip().isdigit() or int(count) < 1:
            raise ValueError(f"a rate is N/second, N/minute or N/hour, not {text!r}")
        return cls(int(count), PERIODS[period])


def throttle_cache() -> BaseCache:
    """The store of every throttle's counters (this limit and sign-in throttling): shared across processes
    when the cache is (Redis)."""
    return caches[settings.THROTTLE_CACHE]


def client_address(request: HttpRequest) -> str:
    """``REMOTE_ADDR``, an IPv6 address as its /64 network (behind a proxy, have it set REMOTE_ADDR)."""
    raw = request.META.get("REMOTE_ADDR") or "unknown"
    try:
        ip = ipaddress.ip_address(raw)
    except ValueError:
        return raw
    if ip.version == 6 and ip.ipv4_mapped is None:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip.ipv4_mapped or ip) if ip.version == 6 else str(ip)


def hit(scope: str, ident: str, rate: Rate, now: float | None = None) -> int:
    """Count one request of ``ident`` in the current window; returns 0 when within ``rate``, else the
    seconds until the window ends (the Retry-After)."""
    now = time.time() if now is None else now
    window = int(now // rate.seconds)
    digest = hashlib.sha256(ident.encode()).hexdigest()[:24]
    key = f"rate:{scope}:{digest}:{window}"
    store = throttle_cache()
    store.add(key, 0, timeout=rate.seconds + 1)  # the window's counter, gone with it
    try:
        count = store.incr(key)
    except ValueError:  # expired between add and incr
        store.set(key, count := 1, timeout=rate.seconds + 1)
    if count <= rate.count:
        return 0
    return max(1, math.ceil((window + 1) * rate.seconds - now))


def exempt(path: str) -> bool:
    return path.startswith(tuple(settings.RATE_LIMIT_EXEMPT))


def too_many_requests(request: HttpRequest, retry_after: int) -> HttpResponse:
    html = render_to_string("429.html", {"retry_after": retry_after, "minutes": math.ceil(retry_after / 60)},
                            request=request)
    response = HttpResponse(html, status=429)
    response["Retry-After"] = str(retry_after)
    add_never_cache_headers(response)
    return response


class PageRateLimitMiddleware:
    """After the authentication middleware (a signed-in user is counted per account)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not exempt(request.path_info):
            user = getattr(request, "user", None)
            if user is not None and user.is_authenticated:
                scope, ident, rate = "user", str(user.pk), Rate.parse(settings.PAGE_RATE_LIMIT_USER)
            else:
                scope, ident, rate = "anon", client_address(request), Rate.parse(settings.PAGE_RATE_LIMIT_ANON)
            if rate is not None and (retry_after := hit(scope, ident, rate)):
                return too_many_requests(request, retry_after)
        return self.get_response(request)
