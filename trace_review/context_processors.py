"""The trace-review link of the site's navigation (templates/base.html)."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest

from trace_review.access import uses_trace_review


def navigation(request: HttpRequest) -> dict[str, Any]:
    # A callable, which the template calls when it renders the link: pages without the site's header
    # (htmx fragments, files) pay no query, and a page asks at most once.
    @cache
    def nav_trace_review() -> bool:
        user = getattr(request, "user", None)  # a request that never passed the auth middleware
        return user is not None and uses_trace_review(user)

    return {"nav_trace_review": nav_trace_review}
