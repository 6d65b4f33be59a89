"""The Pareto chart in headless Chromium: every baseline label inside the drawing, points not hidden under
the baseline stars, a caption that names only the markers the legend has, and the token view."""

from __future__ import annotations

import pytest

from leaderboard.tests.test_browser import page  # noqa: F401 - the fixture: the hand-made board, Chromium

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _chart(page, query: str = "") -> None:  # noqa: ANN001
    page.set_viewport_size({"width": 1280, "height": 900})
    page.goto(f"{page.base}/b/hand/cost/{query}")
    page.wait_for_selector('#pareto-chart[data-rendered="true"]', timeout=20_000)


def _labels_cut(page) -> list[str]:  # noqa: ANN001
    """The baseline labels that are cut: running out of the drawing, or out of the plot area when they are
    drawn in its clipping group (Plotly's default: a label above the top point loses its top)."""
    return page.evaluate("""() => {
      const svg = document.querySelector('#pareto-chart .main-svg').getBoundingClientRect();
      const plot = document.querySelector('#pareto-chart .nsewdrag').getBoundingClientRect();
      const gd = document.getElementById('pareto-chart');
      const i = gd.data.findIndex(t => t.name === 'Routing baselines');
      const texts = document.querySelectorAll('#pareto-chart .scatterlayer .trace')[i].querySelectorAll('.textpoint text');
      if (!texts.length) return ['no labels'];
      const within = (r, b) => r.left >= b.left - 1 && r.right <= b.right + 1 && r.top >= b.top - 1 && r.bottom <= b.bottom + 1;
      return [...texts].filter(t => {
        const r = t.getBoundingClientRect();
        return !within(r, svg) || (t.closest('[clip-path]') && !within(r, plot));
      }).map(t => t.textContent);
    }""")


def test_baseline_labels_are_inside_the_chart(page) -> None:
    for query in ("", "?mode=text", "?unit=tokens"):
        _chart(page, query)
        assert _labels_cut(page) == [], query


def _pixel(png: bytes, x: float, y: float) -> tuple[int, int, int]:
    from io import BytesIO

    from PIL import Image
    return Image.open(BytesIO(png)).convert("RGB").getpixel((round(x), round(y)))


def _rgb(css: str) -> tuple[int, int, int]:
    if css.startswith("#"):
        return tuple(int(css[k:k + 2], 16) for k in (1, 3, 5))  # type: ignore[return-value]
    return tuple(int(v) for v in css[css.index("(") + 1:css.index(")")].split(",")[:3])  # type: ignore[return-value]


def test_every_model_marker_shows_in_its_own_colour_even_under_a_baseline_star(page) -> None:
    _chart(page)
    markers = page.evaluate("""() => {
      const gd = document.getElementById('pareto-chart');
      const chart = gd.getBoundingClientRect();
      const layers = document.querySelectorAll('#pareto-chart .scatterlayer .trace');
      const out = [];
      gd._fullData.forEach((t, i) => {
        if (!t.meta || t.meta.role !== 'points') return;
        layers[i].querySelectorAll('.points path').forEach((p, k) => {
          const r = p.getBoundingClientRect();
          out.push({name: t.name, model: t.text[k], colour: t.marker.color,
                    x: r.left - chart.left + r.width / 2, y: r.top - chart.top + r.height / 2});
        });
      });
      return out;
    }""")
    names = {m["name"] for m in markers}
    assert {"Open weights", "Closed weights"} <= names  # Beta (closed) is the Cheapest baseline: a star on it
    png = page.locator("#pareto-chart").screenshot()
    for m in markers:
        got, want = _pixel(png, m["x"], m["y"]), _rgb(m["colour"])
        assert max(abs(a - b) for a, b in zip(got, want)) < 40, (m["model"], got, want)


_SHAPES = {"circles": "Open weights", "squares": "Closed weights", "diamonds": "Weights not stated",
           "triangles": "Reported by the authors", "stars": "Routing baselines", "step line": "Pareto frontier"}


def _caption_matches_legend(page) -> set[str]:  # noqa: ANN001
    legend = set(page.evaluate(
        "() => [...document.querySelectorAll('#pareto-chart .legend .traces .legendtext')].map(t => t.textContent)"))
    caption = page.inner_text("#pareto-caption").lower()
    named = {legend_name for word, legend_name in _SHAPES.items() if word in caption}
    assert named == legend, (caption, legend)
    return legend


def test_the_caption_names_exactly_the_markers_the_legend_has(page) -> None:
    _chart(page)  # adaptive: Gamma has no adaptive run, so no "weights not stated" diamond
    assert "Weights not stated" not in _caption_matches_legend(page)
    _chart(page, "?mode=text&unit=tokens")  # Gamma (weights not stated) has tokens in text mode
    assert "Weights not stated" in _caption_matches_legend(page)


def test_the_token_view_plots_the_reported_models_and_the_dollar_view_says_why_it_cannot(page) -> None:
    from django.db import connections

    from leaderboard.models import ReportedResult
    from leaderboard.reported import reported_results_load
    reported_results_load()
    with_tokens = sorted(r.model_name for r in ReportedResult.objects.filter(benchmark__slug="adaptmmbench")
                         if (r.figures.get("process") or {}).get("tokens"))
    connections.close_all()
    assert len(with_tokens) == 9
    page.goto(f"{page.base}/b/adaptmmbench/cost/?unit=tokens")
    page.wait_for_selector('#pareto-chart[data-rendered="true"]', timeout=20_000)
    plotted = page.evaluate("""() => document.getElementById('pareto-chart').data
        .filter(t => t.name === 'Reported by the authors').flatMap(t => t.text)""")
    assert sorted(plotted) == with_tokens
    assert page.locator("#pareto-chart .scatterlayer .trace .points path").count() == 9
    _caption_matches_legend(page)
    page.goto(f"{page.base}/b/adaptmmbench/cost/?unit=usd")  # dollars, asked for: the paper gives none
    assert page.locator("#pareto-chart").count() == 0
    assert "give no $ per sample" in page.inner_text("#pareto-empty")
    assert "tokens per sample for the adaptive mode" in page.inner_text("#pareto-empty")


def test_question_mark_links_have_a_spoken_name(page) -> None:
    page.goto(f"{page.base}/b/hand/")
    links = page.get_by_role("link", name="Alpha: how far the judge behind its key-step coverage agrees with people")
    assert links.count() == 1 and links.locator('[aria-hidden="true"]').inner_text() == "?"  # what is seen
    assert page.get_by_role("link", name="?", exact=True).count() == 0



LABELS = """() => {
  const gd = document.getElementById('pareto-chart');
  const i = gd.data.findIndex(t => t.name === 'Routing baselines');
  const layer = document.querySelectorAll('#pareto-chart .scatterlayer .trace')[i];
  const boxes = [...layer.querySelectorAll('.textpoint text')].map(t => t.getBoundingClientRect());
  const clash = boxes.some((a, j) => boxes.slice(j + 1).some(b =>
    a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom));
  return {n: boxes.length, clash, hover: gd.data[i].hovertemplate || ''};
}"""


@pytest.mark.parametrize("width", [1440, 390])
def test_baseline_labels_never_overlap_and_the_hover_stays(page, width: int) -> None:
    """Issue 26, item 6: at phone width the labels would cover each other: they go, the hover stays."""
    page.set_viewport_size({"width": width, "height": 900})
    page.goto(f"{page.base}/b/hand/cost/")
    page.wait_for_selector('#pareto-chart[data-rendered="true"]', timeout=20_000)
    labels = page.evaluate(LABELS)
    assert not labels["clash"], labels
    assert "accuracy" in labels["hover"]
    if width == 1440:
        assert labels["n"] >= 2  # room enough: the stars keep their names
    else:
        assert labels["n"] == 0 and page.get_attribute("#pareto-chart", "data-labels") == "hover"
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    # Nor does the legend cover the axis title on a narrow chart.
    page.wait_for_timeout(300)
    assert not page.evaluate("""() => {
      const a = document.querySelector('#pareto-chart .legend').getBoundingClientRect();
      const b = document.querySelector('#pareto-chart .xtitle').getBoundingClientRect();
      return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
    }""")
