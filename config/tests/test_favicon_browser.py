"""The site's icon: pages name it, /favicon.ico (asked for by pages that are not ours: the admin, the
browsable API) leads to it, and no page of the site logs a 404 for it."""

from __future__ import annotations

import os

import pytest

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def test_pages_have_an_icon_and_no_request_for_it_is_a_404(live_server, chromium) -> None:
    missing: list[str] = []
    page = chromium.new_page()
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    for path in ("/", "/accounts/login/", "/admin/login/"):
        page.goto(f"{live_server.url}{path}")
    page.goto(f"{live_server.url}/")
    href = page.locator('link[rel="icon"]').get_attribute("href")
    icon = page.request.get(f"{live_server.url}{href}")
    assert icon.status == 200 and icon.headers["content-type"].startswith("image/svg+xml")
    assert b"<svg" in icon.body()
    fallback = page.goto(f"{live_server.url}/favicon.ico")  # follows the redirect
    assert fallback.status == 200 and fallback.url.endswith(href)
    assert not missing, f"404s: {missing}"
