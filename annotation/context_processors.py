"""The "Annotate" link of the site's navigation (templates/base.html)."""

from __future__ import annotations

from functools import cache
from typing import Any

from django.http import HttpRequest

from annotation.workbench.access import uses_workbench


def navigation(request: HttpRequest) -> dict[str, Any]:
    # A callable, as trace review's: a page without the site's header pays no query, and a page asks once.
    @cache
    def nav_annotate() -> bool:
        user = getattr(request, "user", None)  # a request that never passed the auth middleware
        return user is not None and uses_workbench(user)

    return {"nav_annotate": nav_annotate}
