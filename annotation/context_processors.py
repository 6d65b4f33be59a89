"""The "Annotate" link of the site's navigation (templates/base.html)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

from django.http import HttpRequest

from annotation.workbench.access import uses_workbench


def user_flag(request: HttpRequest, test: Callable[[Any], bool]) -> Callable[[], bool]:
    """A menu flag as a callable, which the template calls when it renders the link: a page without the
    site's header (htmx fragments, files) pays no query, and a page asks at most once."""
    @cache
    def flag() -> bool:
        user = getattr(request, "user", None)  # a request that never passed the auth middleware
        return user is not None and test(user)

    return flag


def navigation(request: HttpRequest) -> dict[str, Any]:
    return {"nav_annotate": user_flag(request, uses_workbench)}
