"""The trace-review link of the site's navigation (templates/base.html)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest

from annotation.context_processors import user_flag
from trace_review.access import uses_trace_review


def navigation(request: HttpRequest) -> dict[str, Any]:
    return {"nav_trace_review": user_flag(request, uses_trace_review)}
