"""The Content-Security-Policy header on every response (Django 5.2 has none built in).

Scripts only from this site: no inline script, no inline event handler, no ``eval`` (htmx's
``js:`` values included), so markup that slips into a page cannot run. Styles may be inline
(``style=""`` attributes, and Plotly and htmx add style rules as they draw). A view that needs
more would widen the policy for its own responses with ``csp_allow``; none does today (the Swagger UI
at /api/docs/ is served from this site by drf-spectacular-sidecar and needs nothing more).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse

DEFAULT_POLICY: dict[str, tuple[str, ...]] = {
    "default-src": ("'self'",),
    "script-src": ("'self'",),
    "style-src": ("'self'", "'unsafe-inline'"),
    "img-src": ("'self'", "data:", "blob:"),
    "font-src": ("'self'", "data:"),
    "connect-src": ("'self'",),
    "object-src": ("'none'",),
    "base-uri": ("'self'",),
    "form-action": ("'self'",),
    "frame-ancestors": ("'none'",),
}


def policy_header(policy: dict[str, tuple[str, ...]], extra: dict[str, tuple[str, ...]] | None = None) -> str:
    merged = {k: list(v) for k, v in policy.items()}
    for directive, sources in (extra or {}).items():
        merged.setdefault(directive, [])
        merged[directive] += [s for s in sources if s not in merged[directive]]
    return "; ".join(f"{k} {' '.join(v)}" for k, v in merged.items())


def csp_allow(**sources: tuple[str, ...]) -> Callable:
    """Widen the policy for one view: ``csp_allow(script_src=("https://cdn.example",))``."""
    extra = {k.replace("_", "-"): v for k, v in sources.items()}

    def decorate(view: Callable) -> Callable:
        @wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            response = view(request, *args, **kwargs)
            response.csp_extra = extra
            return response
        return wrapped
    return decorate


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if "Content-Security-Policy" not in response:
            policy = getattr(settings, "CONTENT_SECURITY_POLICY", DEFAULT_POLICY)
            response["Content-Security-Policy"] = policy_header(policy, getattr(response, "csp_extra", None))
        return response
