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
          el.dataset.rendered = "true";
        });
      });
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
