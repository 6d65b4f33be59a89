// Tables (docs/layout.md): the column chooser of every table with a data-columns attribute, and
// the offset of the second sticky column of a table with class "sticky-2", and the sorted column
// scrolled into view in its box (a phone). Runs on page load and
// after every htmx swap (the leaderboard's tabs, sorting and filters replace the table).
//
// <table data-columns="overview" data-columns-hidden="organisation date tokens">: the top header
// row's cells are the choosable columns (a cell spanning several columns hides them together);
// the first column (the first two on sticky-2) always stays. A column's key is its header's
// data-col, else its sort link's data-sort, else its label. The choice is remembered per visitor
// in localStorage under "columns:<data-columns>" as {key: shown}; keys it does not name (columns
// added since) follow the defaults, data-columns-hidden (hidden) or shown.
(function () {
  "use strict";
  var PREFIX = "columns:";

  function label(th) {
    if (th.dataset.label) return th.dataset.label;
    var copy = th.cloneNode(true);
    copy.querySelectorAll(".better, .sr, [aria-hidden='true']").forEach(function (el) { el.remove(); });
    return copy.textContent.replace(/\s+/g, " ").trim();
  }

  function keyOf(th) {
    var sort = th.querySelector("[data-sort]");
    return th.dataset.col || (sort && sort.dataset.sort) || label(th).toLowerCase();
  }

  // Every cell with the first column it covers and how many, rowspans carried down within a section.
  function layout(table) {
    var cells = [];
    [table.tHead].concat(Array.prototype.slice.call(table.tBodies), [table.tFoot]).forEach(function (section) {
      if (!section) return;
      var busy = [];
      Array.prototype.forEach.call(section.rows, function (row) {
        var col = 0;
        Array.prototype.forEach.call(row.cells, function (cell) {
          while (busy[col] > 0) col++;
          cells.push({ cell: cell, start: col, span: cell.colSpan });
          for (var k = col; k < col + cell.colSpan; k++) busy[k] = cell.rowSpan;
          col += cell.colSpan;
        });
        busy = busy.map(function (n) { return n > 0 ? n - 1 : 0; });
      });
    });
    return cells;
  }

  function load(name) {
    try { return JSON.parse(window.localStorage.getItem(PREFIX + name)) || {}; } catch (e) { return {}; }
  }

  function save(name, choice) {
    try { window.localStorage.setItem(PREFIX + name, JSON.stringify(choice)); } catch (e) { /* private mode: not remembered */ }
  }

  function forget(name) {
    try { window.localStorage.removeItem(PREFIX + name); } catch (e) { /* nothing to forget */ }
  }

  function setUp(table) {
    var name = table.dataset.columns || table.id;
    var head = table.tHead && table.tHead.rows[0];
    if (!name || !head) return;
    var cells = layout(table);
    var fixed = table.classList.contains("sticky-2") ? 2 : 1;
    var defaults = (table.dataset.columnsHidden || "").split(/\s+/).filter(Boolean);
    var groups = [];
    var col = 0;
    Array.prototype.forEach.call(head.cells, function (th, i) {
      if (i >= fixed) groups.push({ key: keyOf(th), label: label(th), start: col, end: col + th.colSpan });
      col += th.colSpan;
    });
    if (!groups.length) return;

    function shown(group, choice) {
      return group.key in choice ? choice[group.key] : defaults.indexOf(group.key) < 0;
    }

    function apply(choice) {
      var hidden = [];
      groups.forEach(function (g) { if (!shown(g, choice)) for (var k = g.start; k < g.end; k++) hidden[k] = true; });
      cells.forEach(function (c) {
        var all = true;
        for (var k = c.start; k < c.start + c.span; k++) all = all && hidden[k] === true;
        c.cell.classList.toggle("col-hidden", all);
      });
      boxes.forEach(function (box, i) { box.checked = shown(groups[i], choice); });
      count.textContent = groups.filter(function (g) { return !shown(g, choice); }).length + " hidden";
    }

    var chooser = document.createElement("details");
    chooser.className = "col-chooser";
    chooser.dataset.for = table.id;
    var summary = document.createElement("summary");
    summary.textContent = "Columns ";
    var count = document.createElement("span");
    count.className = "muted";
    summary.appendChild(count);
    var fieldset = document.createElement("fieldset");
    var legend = document.createElement("legend");
    legend.textContent = "Show the columns (remembered in this browser)";
    fieldset.appendChild(legend);
    var boxes = groups.map(function (g) {
      var lab = document.createElement("label");
      var box = document.createElement("input");
      box.type = "checkbox";
      box.value = g.key;
      box.addEventListener("change", function () {
        var choice = {};
        groups.forEach(function (h, i) { choice[h.key] = boxes[i].checked; });
        save(name, choice);
        apply(choice);
      });
      lab.appendChild(box);
      lab.appendChild(document.createTextNode(" " + g.label));
      fieldset.appendChild(lab);
      return box;
    });
    var reset = document.createElement("button");
    reset.type = "button";
    reset.textContent = "Default columns";
    reset.addEventListener("click", function () { forget(name); apply({}); });
    fieldset.appendChild(reset);
    chooser.appendChild(summary);
    chooser.appendChild(fieldset);
    var wrap = table.closest(".table-wrap") || table;
    wrap.parentNode.insertBefore(chooser, wrap);
    apply(load(name));
  }

  function stickyOffset(table) {
    var first = table.tHead && table.tHead.rows[0] && table.tHead.rows[0].cells[0];
    if (first) table.style.setProperty("--sticky-left", first.offsetWidth + "px");
  }

  // A table sorted by a column its box has scrolled out of view (a phone): scroll the box so the sorted
  // column starts just after the pinned ones, which stay where they are.
  function showSorted(table) {
    var wrap = table.closest(".table-wrap");
    var head = table.tHead && table.tHead.rows[0];
    if (!wrap || !head || wrap.scrollWidth <= wrap.clientWidth) return;
    var th = head.querySelector('th[aria-sort="ascending"], th[aria-sort="descending"]');
    var fixed = table.classList.contains("sticky-2") ? 2 : 1;
    if (!th || th.classList.contains("col-hidden") || th.cellIndex < fixed) return;
    var pinned = 0;
    for (var i = 0; i < fixed; i++) pinned += head.cells[i].offsetWidth;
    var box = wrap.getBoundingClientRect(), cell = th.getBoundingClientRect();
    if (cell.left >= box.left + pinned && cell.right <= box.left + wrap.clientWidth) return;
    wrap.scrollLeft += cell.left - (box.left + pinned);
  }

  var observer = window.ResizeObserver ? new ResizeObserver(function (entries) {
    entries.forEach(function (e) { stickyOffset(e.target.closest("table")); });
  }) : null;

  function init() {
    document.querySelectorAll("table[data-columns]:not([data-columns-ready])").forEach(function (table) {
      table.dataset.columnsReady = "true";
      setUp(table);
    });
    document.querySelectorAll("table.sticky-2:not([data-sticky-ready])").forEach(function (table) {
      table.dataset.stickyReady = "true";
      stickyOffset(table);
      var first = table.tHead && table.tHead.rows[0] && table.tHead.rows[0].cells[0];
      if (observer && first) observer.observe(first);
    });
    document.querySelectorAll(".table-wrap > table:not([data-sort-shown])").forEach(function (table) {
      table.dataset.sortShown = "true";
      showSorted(table);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
  document.addEventListener("htmx:afterSwap", init);
})();
