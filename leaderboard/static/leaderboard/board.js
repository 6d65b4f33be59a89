// Draws the Plotly charts of the leaderboard: on page load and after every htmx swap. plotly.js is
// loaded on first need from our own server (the plotly package ships it), never from a CDN.
(function () {
  "use strict";
  var script = document.currentScript;
  var plotlySrc = script && script.dataset.plotlySrc;
  var loading = null;

  function loadPlotly() {
    if (window.Plotly) return Promise.resolve(window.Plotly);
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        var s = document.createElement("script");
        s.src = plotlySrc;
        s.onload = function () { resolve(window.Plotly); };
        s.onerror = reject;
        document.head.appendChild(s);
      });
    }
    return loading;
  }

  function draw(root) {
    var charts = (root || document).querySelectorAll(".plotly-chart[data-source]");
    if (!charts.length) return;
    loadPlotly().then(function (Plotly) {
      charts.forEach(function (el) {
        var data = document.getElementById(el.dataset.source);
        if (!data) return;
        var fig = JSON.parse(data.textContent);
        Plotly.newPlot(el, fig.data, fig.layout, { responsive: true, displaylogo: false }).then(function () {
          declutter(Plotly, el);
          el.on("plotly_afterplot", function () { declutter(Plotly, el); });  // after a resize too
          el.dataset.rendered = "true";
        });
      });
    });
  }

  // Point labels (the Pareto chart's baseline stars) that would cover each other, or run out of the drawing,
  // as on a phone: the labels go and the hover stays (the table under the chart names every point).
  function overlap(a, b) {
    return a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  }

  function declutter(Plotly, el) {
    var svg = el.querySelector(".main-svg");
    if (!svg || !el.data) return;
    var frame = svg.getBoundingClientRect();
    // The legend under the axis title on a narrow chart: moved down until they no longer meet.
    var legend = el.querySelector(".legend"), title = el.querySelector(".xtitle");
    var tries = Number(el.dataset.legendMoves || 0);
    if (legend && title && tries < 6 && overlap(legend.getBoundingClientRect(), title.getBoundingClientRect())) {
      el.dataset.legendMoves = String(tries + 1);
      Plotly.relayout(el, { "legend.y": (el.layout.legend && el.layout.legend.y !== undefined ? el.layout.legend.y : -0.25) - 0.08 });
      return;
    }
    var layers = el.querySelectorAll(".scatterlayer .trace");
    el.data.forEach(function (trace, i) {
      if (!trace.mode || trace.mode.indexOf("text") < 0 || !layers[i]) return;
      var boxes = Array.prototype.map.call(layers[i].querySelectorAll(".textpoint text"), function (t) {
        return t.getBoundingClientRect();
      });
      var clash = boxes.some(function (a, j) {
        return a.left < frame.left - 1 || a.right > frame.right + 1 ||
          boxes.slice(j + 1).some(function (b) { return overlap(a, b); });
      });
      if (clash) {
        el.dataset.labels = "hover";
        Plotly.restyle(el, { mode: trace.mode.replace("+text", "").replace("text+", "") }, [i]);
      }
    });
  }

  // On a phone the tabs are one row that scrolls sideways (board.css): centre the current one in it.
  function showCurrentTab() {
    var current = document.querySelector(".tabs a.current");
    var row = current && current.closest("ul");
    if (row && row.scrollWidth > row.clientWidth) {
      row.scrollLeft = current.offsetLeft - row.offsetLeft - (row.clientWidth - current.offsetWidth) / 2;
    }
  }

  document.addEventListener("DOMContentLoaded", function () { draw(document); showCurrentTab(); });
  document.addEventListener("htmx:afterSettle", function (evt) { draw(evt.detail.elt.parentNode || document); showCurrentTab(); });
})();
