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

  document.addEventListener("DOMContentLoaded", function () { draw(document); });
  document.addEventListener("htmx:afterSettle", function (evt) { draw(evt.detail.elt.parentNode || document); });
})();
