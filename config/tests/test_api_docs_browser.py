"""/api/docs/ in headless Chromium with every request routed: the Swagger UI and the schema come from
this site, so the page works without the internet (drf-spectacular-sidecar)."""

from __future__ import annotations

import os
from urllib.parse import urlsplit

import pytest

os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]



def test_api_docs_show_their_operations_with_no_request_leaving_this_machine(live_server, chromium) -> None:
    local, remote = [], []

    def route(r) -> None:  # noqa: ANN001
        host = urlsplit(r.request.url).hostname
        if host in ("127.0.0.1", "localhost"):
            local.append(r.request.url)
            r.continue_()
        else:  # the internet is "down": the page must not need it
            remote.append(r.request.url)
            r.abort()

    browser = chromium
    page = browser.new_page()
    page.route("**/*", route)
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".opblock", timeout=20_000)
    paths = page.locator(".opblock .opblock-summary-path").all_inner_texts()
    title = page.locator(".info .title").inner_text()
    assert not remote, f"requests left 127.0.0.1: {remote}"
    assert "Adaptive tool-use VLM benchmark platform API" in title
    assert any(p.startswith("/api/v1/benchmarks/") for p in paths) and any("/submissions/" in p for p in paths)
    assert any("swagger-ui-bundle.js" in u for u in local) and any("/api/schema/" in u for u in local)
    back = page.get_by_role("link", name="← Back to the leaderboards")  # a way back to the site
    back.click()
    page.wait_for_url(f"{live_server.url}/")
