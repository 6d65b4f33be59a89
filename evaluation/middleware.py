"""Refuse an over-size upload by its declared length, before anything reads the body.

Django's CSRF check reads ``request.POST`` (a form's token rides in the body), and so does DRF's
session authentication: without this middleware, placed before ``CsrfViewMiddleware``, a 300 MB
upload is received and parsed whole before the view could say 413. The body Django reads is
bounded by ``Content-Length`` (``LimitedStream``), so checking the declared length bounds the read.
A view opts in with ``too_large_response``: a callable ``(request, message, view_kwargs) -> response``,
set on the view function or, for a DRF view, on its class.

A web form's view may also set ``upload_unavailable_response`` (same signature): the body is then parsed
here, where a full upload folder (``OSError``, ENOSPC, while Django spools the file to
``FILE_UPLOAD_TEMP_DIR``) is answered 503 with its cause, as the API answers it, instead of failing
inside the CSRF check with a 500.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import logging

from django.http import HttpRequest, HttpResponse

from evaluation.api import upload_too_large
from evaluation.services import unavailable_message

log = logging.getLogger(__name__)


def _hook(view_func: Any, name: str) -> Any:
    return getattr(view_func, name, None) or getattr(getattr(view_func, "cls", None), name, None)


class UploadSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func: Any, view_args: tuple, view_kwargs: dict) -> HttpResponse | None:
        if request.method != "POST":
            return None
        refuse = _hook(view_func, "too_large_response")
        if refuse is not None and (message := upload_too_large(request)):
            return refuse(request, message, view_kwargs)
        unavailable = _hook(view_func, "upload_unavailable_response")
        if unavailable is not None:
            try:
                request.POST  # noqa: B018 - parsing spools the upload to the upload folder, which may be full
            except OSError as exc:
                log.exception("upload to %s: the upload could not be spooled", request.path)
                return unavailable(request, unavailable_message("the upload folder", exc), view_kwargs)
        return None
