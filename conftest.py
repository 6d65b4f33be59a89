"""Suite-wide: every browser test also fails on a Content-Security-Policy violation.

Each page a browser test opens reports ``securitypolicyviolation`` events to its console; the test
fails if there was any (an inline script or handler, an eval, a source the policy does not list).
A test's own ``page.wait_for_function("expression")`` is eval'd in the page and counts too: write
``page.wait_for_function("() => expression")``, which is not.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

# Subprocesses the tests start (`python -c "import evaluation.metrics ..."`, workers, scripts) find the project
# by this variable, not by the working directory they inherit: a CI run's second path once saw them fail
# with "No module named 'evaluation'" in one pytest-xdist process.
_ROOT = str(Path(__file__).resolve().parent)
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, os.environ.get("PYTHONPATH", "")) if p)

def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """.ci/run's second path (PostgreSQL and Redis) skips what its first path (SQLite, the embedded broker) already
    ran exactly as it would run here: tests marked ``same_on_every_path``."""
    if os.environ.get("CI_SECOND_PATH") != "1":
        return
    once = pytest.mark.skip(reason="same on every path: run by .ci/run's first path (SQLite, embedded broker)")
    for item in items:
        if item.get_closest_marker("same_on_every_path") is not None:
            item.add_marker(once)


CSP_MARK = "CSP violation:"
REPORT = ("document.addEventListener('securitypolicyviolation', e => console.error("
          f"'{CSP_MARK} ' + e.effectiveDirective + ' blocked ' + (e.blockedURI || 'inline') + ' in ' + e.documentURI"
          " + ' ' + (e.sample || '')));")


@pytest.fixture(autouse=True)
def _no_csp_violations(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch):  # noqa: ANN202
    if request.node.get_closest_marker("browser") is None:
        yield
        return
    from playwright.sync_api import Browser, BrowserContext

    seen: list[str] = []

    def watched(real):  # noqa: ANN001, ANN202
        def new_page(self, *args, **kwargs):  # noqa: ANN001, ANN202
            page = real(self, *args, **kwargs)
            page.add_init_script(REPORT)
            page.on("console", lambda m: seen.append(m.text) if CSP_MARK in m.text else None)
            return page
        return new_page

    for cls in (Browser, BrowserContext):
        monkeypatch.setattr(cls, "new_page", watched(cls.new_page))
    yield
    assert not seen, ("Content-Security-Policy violations (for 'blocked eval' from the test itself: "
                      "wait_for_function('() => ...')):\n" + "\n".join(seen))
