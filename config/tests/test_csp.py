"""The Content-Security-Policy header, and templates that live within it (no inline script or handler).

The browser tests check the pages themselves: every one fails on a policy violation (conftest.py).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = sorted(p for p in ROOT.glob("**/templates/**/*.html") if ".venv" not in p.parts)


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", "/accounts/login/", "/api/v1/benchmarks/", "/admin/login/"])
def test_every_response_carries_the_policy(client, url) -> None:
    policy = client.get(url)["Content-Security-Policy"]
    directives = dict(d.split(" ", 1) for d in policy.split("; "))
    assert directives["script-src"] == "'self'"  # no inline script, no eval, no other site
    assert directives["object-src"] == "'none'" and directives["frame-ancestors"] == "'none'"
    assert directives["default-src"] == "'self'"


@pytest.mark.django_db
def test_the_api_docs_keep_the_sites_policy_and_load_every_file_from_this_site(client) -> None:
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    directives = dict(d.split(" ", 1) for d in docs["Content-Security-Policy"].split("; "))
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self' 'unsafe-inline'"
    page = docs.content.decode()
    # every script of the page is a file from this site (the sidecar's static files); the start-up script is ours
    scripts = re.findall(r"<script([^>]*)>", page)
    assert scripts and all("src=" in attrs for attrs in scripts)
    # every file it loads is from this site; its links (the way back to the site) stay on it too
    sources = re.findall(r'src="([^"]+)"', page) + re.findall(r'<link[^>]*href="([^"]+)"', page)
    assert sources and all(src.startswith(("/static/drf_spectacular_sidecar/", "/api/docs/")) for src in sources)
    links = re.findall(r'<a[^>]*href="([^"]+)"', page)
    assert "/" in links and all(link.startswith("/") and not link.startswith("//") for link in links)
    start = client.get("/api/docs/?script=")
    assert start.status_code == 200 and "SwaggerUIBundle" in start.content.decode()
    assert '"validatorUrl": null' in start.content.decode()  # no badge fetched from swagger.io


@pytest.mark.parametrize("template", TEMPLATES, ids=[str(p.relative_to(ROOT)) for p in TEMPLATES])
def test_templates_have_no_inline_script_or_event_handler(template: Path) -> None:
    text = template.read_text()
    for attrs in re.findall(r"<script\b([^>]*)>", text):
        assert "src=" in attrs or 'type="application/json"' in attrs, f"inline <script{attrs}> in {template.name}"
    handlers = re.findall(r"\son[a-z]+\s*=\s*[\"']", text)
    assert not handlers, f"inline event handler {handlers} in {template.name}: use a script file"
    assert "js:" not in text, f"an htmx 'js:' value in {template.name} needs eval, which the policy forbids"
