/* primbench report: inline, no network. Every data table sorts by a click on its heading (a
   number column numerically, rows without a number last either way); a long table gets a filter
   box; a link to a case's row (a chart point, an address with #op/variant/...) opens the folded
   section it is in, shows it if the filter hid it, and scrolls to it. */
(function () {
  "use strict";
  var FILTER_FROM_ROWS = 10;
  function number(cell) {
    if (!cell) return null;
    var value = cell.dataset.value;
    if (value === undefined) {
      var sup = cell.querySelector("sup");
      /* "2<sup>28</sup>" is 2 to the 28th, not 228 */
      if (sup && /^\s*2\s*$/.test(cell.textContent.slice(0, cell.textContent.indexOf(sup.textContent)))) {
        return Math.pow(2, parseFloat(sup.textContent));
      }
      value = cell.textContent.replace(/[,\s×%]/g, "").replace(/^\u2212/, "-");
    }
    var parsed = parseFloat(value);
    return isFinite(parsed) ? parsed : null;
  }
  function sortable(table) {
    var head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    if (!head || !table.tBodies[0]) return;
    var headings = Array.prototype.slice.call(head.cells);
    headings.forEach(function (th, column) {
      th.classList.add("sortable");
      th.tabIndex = 0;
      function sort() {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows), up = th.dataset.dir !== "up";
        var numeric = th.classList.contains("num");
        headings.forEach(function (other) { other.removeAttribute("aria-sort"); if (other !== th) delete other.dataset.dir; });
        th.dataset.dir = up ? "up" : "down";
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        rows.sort(function (a, b) {
          var x = a.cells[column], y = b.cells[column];
          if (!numeric) return (up ? 1 : -1) * (x ? x.textContent : "").localeCompare(y ? y.textContent : "");
          var u = number(x), v = number(y);
          if (u === null || v === null) return (u === null) - (v === null);
          return up ? u - v : v - u;
        });
        rows.forEach(function (row) { body.appendChild(row); });
      }
      th.addEventListener("click", sort);
      th.addEventListener("keydown", function (event) { if (event.key === "Enter") sort(); });
    });
  }
  function filterable(table, index) {
    if (table.tBodies[0].rows.length <= FILTER_FROM_ROWS) return;
    if (!table.id) table.id = "table-" + index;
    var controls = document.createElement("div");
    controls.className = "table-controls";
    controls.dataset.table = table.id;
    var label = document.createElement("label");
    label.textContent = "filter ";
    var input = document.createElement("input");
    input.type = "search";
    input.className = "filter";
    input.placeholder = "variant, size, status";
    label.appendChild(input);
    var count = document.createElement("span");
    count.className = "muted";
    controls.appendChild(label);
    controls.appendChild(count);
    var anchor = table.closest(".table-wrap") || table;
    anchor.parentNode.insertBefore(controls, anchor);
    function apply() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean), shown = 0, rows = table.tBodies[0].rows;
      Array.prototype.forEach.call(rows, function (row) {
        var text = row.textContent.toLowerCase();
        row.hidden = !words.every(function (w) { return text.indexOf(w) >= 0; });
        shown += row.hidden ? 0 : 1;
      });
      count.textContent = words.length ? " " + shown + " of " + rows.length + " rows" : " " + rows.length + " rows; click a heading to sort";
    }
    input.addEventListener("input", apply);
    table.primbenchClearFilter = function () { if (input.value) { input.value = ""; apply(); } };
    apply();
  }
  Array.prototype.forEach.call(document.querySelectorAll("table.data"), function (table, index) {
    sortable(table);
    filterable(table, index);
  });
  function reveal(hash) {
    if (!hash || hash.length < 2) return null;
    var target = document.getElementById(decodeURIComponent(hash.slice(1)));
    if (!target) return null;
    for (var node = target.parentElement; node; node = node.parentElement) {
      if (node.tagName === "DETAILS") node.open = true;
    }
    var table = target.closest("table");
    if (target.hidden && table && table.primbenchClearFilter) table.primbenchClearFilter();
    return target;
  }
  /* Before the browser follows the link: the row it scrolls to must be shown by then. */
  document.addEventListener("click", function (event) {
    var link = event.target.closest && event.target.closest("a");
    var href = link && link.getAttribute("href");
    if (href && href.charAt(0) === "#") reveal(href);
  });
  /* Opened at, or sent to, a folded row's address: the browser found nothing to scroll to. */
  function revealAndScroll() {
    var target = reveal(location.hash);
    if (target) target.scrollIntoView({block: "center"});
  }
  window.addEventListener("hashchange", revealAndScroll);
  revealAndScroll();
})();
