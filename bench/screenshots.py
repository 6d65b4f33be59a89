"""Screenshots of the main pages at a laptop's and a phone's width, for the docs and for looking.

One command: builds a scratch database (SQLite in a temporary VAR_DIR, nothing of yours touched),
loads the demo data into it (``load_demo``), serves it (``runserver`` with the local settings on a
free port of 127.0.0.1), signs in as the demo account each page is for, and writes
``<page>-<width>.png`` into the output folder (docs/screenshots/ by default; git ignores the PNGs).
It also prints, for every page and width, how far the page scrolls sideways (the document's
``scrollWidth`` beyond the window's width): 0 is the goal everywhere (docs/layout.md).

    .venv/bin/python bench/screenshots.py [--out docs/screenshots] [--widths 1440,390] [--full]
        [--only overview,home] [--keep]

``--full`` takes the whole page (tall PNGs) instead of the first screenful; ``--keep`` leaves the
scratch folder (its path is printed). Chromium is Debian's, /usr/bin/chromium.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = ROOT / ".venv" / "bin" / "python"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
DEMO = "adaptmm-demo"
PASSWORDS = {"admin": "admin-demo", "annotator1": "annotator1-demo", "reviewer": "reviewer-demo",
             "researcher": "researcher-demo"}


@dataclass(frozen=True)
class Shot:
    name: str
    account: str | None  # the demo account signed in, None for a visitor
    path: str | Callable[[object, str], str]  # a URL path, or a function (page, base) -> path that finds one
    menu_open: bool = False  # at phone width, open the navigation menu before the picture


def _first_href(selector: str, start: str) -> Callable[[object, str], str]:
    def find(page: object, base: str) -> str:
        page.goto(base + start)  # type: ignore[attr-defined]
        return page.locator(selector).first.get_attribute("href")  # type: ignore[attr-defined]
    return find


def _compare(page: object, base: str) -> str:
    # The overview's first two models: they share the adaptive mode, so the comparison has figures.
    page.goto(f"{base}/b/{DEMO}/")  # type: ignore[attr-defined]
    hrefs = page.locator("#overview-table th.model a").evaluate_all("as => as.map(a => a.getAttribute('href'))")  # type: ignore[attr-defined]
    a, b = (h.rstrip("/").rsplit("/", 1)[-1] for h in hrefs[:2])
    return f"/b/{DEMO}/compare/?a={a}&b={b}"


def _next_trace(page: object, base: str) -> str:
    page.goto(f"{base}/review/")  # type: ignore[attr-defined]
    page.locator("button.next-trace").first.click()  # type: ignore[attr-defined]
    page.wait_for_url("**/review/a/*/")  # type: ignore[attr-defined]
    return page.url.removeprefix(base)  # type: ignore[attr-defined]


def _next_item(page: object, base: str) -> str:
    page.goto(f"{base}/annotate/")  # type: ignore[attr-defined]
    return page.locator("table.assignments a").first.get_attribute("href")  # type: ignore[attr-defined]


SHOTS: tuple[Shot, ...] = (
    Shot("home", None, "/"),
    Shot("overview", None, f"/b/{DEMO}/"),
    Shot("domains", None, f"/b/{DEMO}/domains/"),
    Shot("mode-selection", None, f"/b/{DEMO}/mode-selection/"),
    Shot("process", None, f"/b/{DEMO}/process/"),
    Shot("toolchains", None, f"/b/{DEMO}/toolchains/"),
    Shot("cost", None, f"/b/{DEMO}/cost/"),
    Shot("routers", None, f"/b/{DEMO}/routers/"),
    Shot("guessability", None, f"/b/{DEMO}/guessability/"),
    Shot("progress", None, f"/b/{DEMO}/progress/"),
    Shot("agentx", None, "/b/agent-x-demo/agentx/"),
    Shot("model", None, _first_href("#overview-table th.model a", f"/b/{DEMO}/")),
    Shot("compare", None, _compare),
    Shot("compare-flipped", None, lambda page, base: _compare(page, base) + "#flipped"),
    Shot("compare-sample", None, lambda page, base: _first_href("#flipped-table th a", _compare(page, base))(page, base)),
    Shot("agent-x-reported", None, "/b/agent-x/"),
    Shot("login", None, "/accounts/login/"),
    Shot("nav-menu", "annotator1", "/", menu_open=True),
    Shot("submissions", "admin", "/submissions/"),
    Shot("submission-new", "researcher", f"/submissions/new/{DEMO}/"),
    Shot("submission", "admin", _first_href("main table a[href^='/submissions/']", "/submissions/")),
    Shot("annotate", "annotator1", "/annotate/"),
    Shot("workbench", "annotator1", _next_item),
    Shot("review-list", "reviewer", f"/annotate/review/{DEMO}/"),
    Shot("trace-review-queue", "annotator1", "/review/"),
    Shot("trace-review", "annotator1", _next_trace),
    Shot("agreement", None, "/review/agreement/"),
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_until_up(url: str, server: subprocess.Popen, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if server.poll() is not None:
            raise SystemExit(f"the server stopped (exit {server.returncode})")
        try:
            urllib.request.urlopen(url, timeout=2).close()  # noqa: S310 - our own server on 127.0.0.1
            return
        except OSError:
            time.sleep(0.3)
    raise SystemExit(f"the server did not answer {url} within {seconds:.0f} s")


def _sign_in(page: object, base: str, account: str) -> None:
    page.goto(f"{base}/accounts/login/")  # type: ignore[attr-defined]
    page.fill("#id_username", account)  # type: ignore[attr-defined]
    page.fill("#id_password", PASSWORDS[account])  # type: ignore[attr-defined]
    page.click("main form button[type=submit]")  # type: ignore[attr-defined]
    page.wait_for_load_state()  # type: ignore[attr-defined]


def _settle(page: object) -> None:
    page.wait_for_load_state("networkidle")  # type: ignore[attr-defined]
    # Charts draw after the page loads; give each a moment (a page without charts returns at once).
    page.wait_for_function(  # type: ignore[attr-defined]
        "() => [...document.querySelectorAll('.plotly-chart[data-source]')].every(c => c.dataset.rendered)",
        timeout=20_000)


def take(base: str, out: Path, widths: list[int], shots: tuple[Shot, ...], full: bool) -> list[tuple[str, int, int]]:
    from playwright.sync_api import sync_playwright

    overflow: list[tuple[str, int, int]] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        for width in widths:
            contexts: dict[str | None, object] = {}
            for shot in shots:
                if shot.account not in contexts:
                    context = browser.new_context(viewport={"width": width, "height": 900 if width > 600 else 844})
                    if shot.account:
                        _sign_in(context.new_page(), base, shot.account)
                    contexts[shot.account] = context
                page = contexts[shot.account].new_page()  # type: ignore[attr-defined]
                path = shot.path if isinstance(shot.path, str) else shot.path(page, base)
                page.goto(base + path)
                _settle(page)
                if shot.menu_open and page.locator(".nav-toggle").is_visible():
                    page.click(".nav-toggle")
                extra = page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth")
                overflow.append((shot.name, width, extra))
                page.screenshot(path=str(out / f"{shot.name}-{width}.png"), full_page=full)
                page.close()
            for context in contexts.values():
                context.close()  # type: ignore[attr-defined]
        browser.close()
    return overflow


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument("--widths", default="1440,390")
    parser.add_argument("--only", default="", help="comma-separated page names (default: all)")
    parser.add_argument("--full", action="store_true", help="the whole page, not the first screenful")
    parser.add_argument("--keep", action="store_true", help="keep the scratch database folder")
    parser.add_argument("--base", help="use a server already running with the demo data (e.g. http://127.0.0.1:8000)"
                                       " instead of a scratch one")
    args = parser.parse_args()
    only = {n for n in args.only.split(",") if n}
    unknown = only - {s.name for s in SHOTS}
    if unknown:
        raise SystemExit(f"unknown page(s): {', '.join(sorted(unknown))}; known: {', '.join(s.name for s in SHOTS)}")
    shots = tuple(s for s in SHOTS if not only or s.name in only)
    widths = [int(w) for w in args.widths.split(",")]
    args.out.mkdir(parents=True, exist_ok=True)

    if args.base:
        _report(take(args.base.rstrip("/"), args.out, widths, shots, args.full), args.out)
        return
    scratch = Path(tempfile.mkdtemp(prefix="screenshots-"))
    env = {k: v for k, v in os.environ.items()
           if k not in {"DATABASE_URL", "CELERY_BROKER_URL", "CACHE_URL", "REDIS_URL"}}  # nothing shared
    env.update(DJANGO_SETTINGS_MODULE="config.settings.local", VAR_DIR=str(scratch), DEBUG="1")
    server = None
    try:
        started = time.monotonic()
        for command in (["migrate", "--noinput"], ["load_demo"]):
            subprocess.run([str(PYTHON), "manage.py", *command], cwd=ROOT, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print(f"demo data loaded into {scratch} in {time.monotonic() - started:.0f} s")
        port = _free_port()
        server = subprocess.Popen([str(PYTHON), "manage.py", "runserver", "--noreload", f"127.0.0.1:{port}"],
                                  cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        base = f"http://127.0.0.1:{port}"
        _wait_until_up(base + "/", server)
        overflow = take(base, args.out, widths, shots, args.full)
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=10)
        if args.keep:
            print(f"scratch folder kept: {scratch}")
        else:
            shutil.rmtree(scratch, ignore_errors=True)
    _report(overflow, args.out)


def _report(overflow: list[tuple[str, int, int]], out: Path) -> None:
    print(f"{len(overflow)} screenshots in {out}")
    print("page                  width  sideways scroll (px)")
    for name, width, extra in overflow:
        print(f"{name:<21} {width:>5}  {extra}{'  <- scrolls sideways' if extra > 0 else ''}")
    if any(extra > 0 for _, _, extra in overflow):
        sys.exit(1)


if __name__ == "__main__":
    main()
