"""The report's inline CSS and JavaScript (self-contained: no CDN, no network, no external file).

The script sorts the leaderboard, filters tasks, opens the drill-down named in the URL's #fragment
(`#ID` also scrolls to it, `#open=ID` does not),
and records a render self-check on <body data-render-check=...>: which key elements are shown and
where (page rectangles), how many chart shapes were drawn and how many steps of open episodes are
visible (the headless-browser test reads it and looks at those rectangles in a screenshot)."""

CSS = """
:root { --fg:#1d2330; --muted:#667085; --line:#e4e7ec; --bg:#fff; --soft:#f6f7f9; --bad:#b42318; --good:#067647;
        --fault:#fff4e5; --fault-line:#f79009; --constraint:#eef4ff; --constraint-line:#2e5bff; }
* { box-sizing: border-box; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; color: var(--fg);
       background: var(--bg); margin: 0 auto; padding: 16px 24px 64px; max-width: 1400px; }
h1 { font-size: 22px; margin: 8px 0; } h2 { font-size: 18px; margin: 28px 0 8px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 18px 0 6px; }
nav a { margin-right: 14px; } .muted { color: var(--muted); } .note { background: var(--soft); padding: 8px 12px;
       border-left: 3px solid var(--fault-line); }
table { border-collapse: collapse; margin: 6px 0 10px; } th, td { border: 1px solid var(--line); padding: 4px 8px;
       text-align: right; vertical-align: top; } th { background: var(--soft); cursor: pointer; white-space: nowrap; }
td.name, th.name { text-align: left; } .ci { color: var(--muted); font-size: 12px; white-space: nowrap; }
.scroll { overflow-x: auto; }
.charts { display: flex; flex-wrap: wrap; gap: 12px 28px; align-items: flex-start; }
.bad { color: var(--bad); } .good { color: var(--good); }
details.task { border: 1px solid var(--line); border-radius: 6px; margin: 8px 0; padding: 4px 10px; }
details.task > summary { cursor: pointer; font-weight: 600; padding: 4px 0; }
details.episode { border-top: 1px dashed var(--line); margin: 6px 0; padding: 4px 0 4px 10px; }
details.episode > summary { cursor: pointer; }
ol.steps { padding-left: 0; list-style: none; margin: 6px 0; }
li.step { border-left: 3px solid var(--line); padding: 4px 10px; margin: 4px 0; background: var(--bg); }
li.step.fault { background: var(--fault); border-left-color: var(--fault-line); }
li.step.constraint { background: var(--constraint); border-left-color: var(--constraint-line); }
li.step.final { border-left-color: var(--good); }
.badge { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 8px; background: var(--soft);
         border: 1px solid var(--line); margin-left: 4px; }
.badge.fault { background: var(--fault-line); color: #fff; border-color: var(--fault-line); }
.badge.constraint { background: var(--constraint-line); color: #fff; border-color: var(--constraint-line); }
.badge.syntactic_error, .badge.execution_failure { color: var(--bad); }
pre { white-space: pre-wrap; word-break: break-word; margin: 4px 0; background: var(--soft); padding: 4px 6px;
      font-size: 12px; max-height: 260px; overflow: auto; }
pre.error { border-left: 3px solid var(--bad); }
input#task-filter { padding: 4px 8px; width: 320px; }
"""

JS = """
(function () {
  function num(cell) { var v = cell.getAttribute('data-sort'); return v === null || v === '' ? NaN : parseFloat(v); }
  document.querySelectorAll('table.sortable th').forEach(function (th, col) {
    th.addEventListener('click', function () {
      var table = th.closest('table'), body = table.tBodies[0];
      var rows = Array.prototype.slice.call(body.rows), asc = th.getAttribute('data-dir') !== 'asc';
      rows.sort(function (a, b) {
        var x = num(a.cells[col]), y = num(b.cells[col]);
        if (isNaN(x) && isNaN(y)) { return a.cells[col].textContent.localeCompare(b.cells[col].textContent); }
        if (isNaN(x)) { return 1; } if (isNaN(y)) { return -1; }
        return asc ? x - y : y - x;
      });
      rows.forEach(function (r) { body.appendChild(r); });
      th.setAttribute('data-dir', asc ? 'asc' : 'desc');
    });
  });
  var filter = document.getElementById('task-filter');
  if (filter) {
    filter.addEventListener('input', function () {
      var q = filter.value.toLowerCase();
      document.querySelectorAll('details.task').forEach(function (d) {
        d.style.display = d.textContent.toLowerCase().indexOf(q) >= 0 ? '' : 'none';
      });
    });
  }
  // #ID opens that task/episode/step and scrolls to it; #open=ID only opens it (for full-page captures).
  function openTarget() {
    var hash = decodeURIComponent((location.hash || '').slice(1)), stay = hash.indexOf('open=') === 0;
    var id = stay ? hash.slice(5) : hash, el = id ? document.getElementById(id) : null;
    if (!el) { return null; }
    for (var p = el; p; p = p.parentElement) { if (p.tagName === 'DETAILS') { p.open = true; } }
    if (!stay) { el.scrollIntoView(); }
    return el;
  }
  window.addEventListener('hashchange', openTarget);
  var target = openTarget();
  function visible(el) {
    var r = el.getBoundingClientRect();
    var shown = typeof el.checkVisibility === 'function' ? el.checkVisibility() : true;
    return shown && r.width > 0 && r.height > 0;
  }
  // Render self-check: per key element, whether it is shown and where it is on the page (CSS pixels).
  var check = {visible: {}, rects: {}};
  function record(name, el) {
    var r = el.getBoundingClientRect();
    check.visible[name] = visible(el);
    check.rects[name] = [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height].map(Math.round);
  }
  document.querySelectorAll('[data-check]').forEach(function (el) { record(el.getAttribute('data-check'), el); });
  if (target) { record('target', target); }
  var shapes = 0;
  document.querySelectorAll('svg.chart rect.bar, svg.chart polygon.persona').forEach(function (s) {
    var b = s.getBBox(); if (b.width > 0 && b.height > 0) { shapes += 1; }
  });
  var steps = 0;
  document.querySelectorAll('details.episode[open] li.step').forEach(function (s) { if (visible(s)) { steps += 1; } });
  check.chart_shapes = shapes;
  check.visible_steps = steps;
  document.body.setAttribute('data-render-check', JSON.stringify(check));
})();
"""
