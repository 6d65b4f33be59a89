"""Refuse an over-size upload by its declared length, before anything reads the body.

Django's CSRF check reads ``request.POST`` (a form's token rides in the body), and so does DRF's
session authentication: without this middleware, placed before ``CsrfViewMiddleware``, a 300 MB
upload is received and parsed whole before the view could say 413. The body Django reads is
bounded by ``Content-Length`` (``LimitedStream``), so checking the declared length bounds the read.
A view opts in with ``too_large_response``: a callable ``(request, message, view_kwargs) -> response``,
set on the view function or, for a DRF view, on its class.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.http import HttpRequest, HttpResponse

from evaluation.api import upload_too_large


class UploadSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func: Any, view_args: tuple, view_kwargs: dict) -> HttpResponse | None:
        refuse = getattr(view_func, "too_large_response", None) or getattr(
            getattr(view_func, "cls", None), "too_large_response", None)
        if refuse is None or request.method != "POST":
            return None
        message = upload_too_large(request)
        return refuse(request, message, view_kwargs) if message else None
