/* primbench's pages (report, compare, site): inline, no network; the one table script of every page.
   Every data table sorts by its headings: each heading's text is a button, so a click, or Tab to it
   and Enter or Space, sorts (a number column numerically, rows without a number last either way),
   and the heading says how (aria-sort). A long table gets a filter box, or uses the one its page
   put before it (.table-controls[data-table]), with a "show all" box where some rows are folded
   (tr.folded) until asked for. A link to a row (a chart point, an address with #op/variant/...)
   opens the folded section it is in, shows it if the filter or the fold hid it, and scrolls to it. */
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
  /* The heading's content inside a button: focusable by Tab, and Enter or Space click it. */
  function button(th) {
    var sort = document.createElement("button");
    sort.type = "button";
    sort.className = "sort";
    while (th.firstChild) sort.appendChild(th.firstChild);
    th.appendChild(sort);
  }
  function sortable(table) {
    var head = table.tHead && table.tHead.rows[table.tHead.rows.length - 1];
    if (!head || !table.tBodies[0]) return;
    var headings = Array.prototype.slice.call(head.cells);
    headings.forEach(function (th, column) {
      if (!th.textContent.trim()) return;  /* an empty heading has nothing to say it sorts */
      th.classList.add("sortable");
      button(th);
      /* On the heading: a click on its button, and a script's th.click(), both come here. */
      th.addEventListener("click", function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows), up = th.dataset.dir !== "up";
        var numeric = th.classList.contains("num") || th.dataset.sort === "number";
        headings.forEach(function (other) { other.removeAttribute("aria-sort"); if (other !== th) delete other.dataset.dir; });
        th.dataset.dir = up ? "up" : "down";
        th.setAttribute("aria-sort", up ? "ascending" : "descending");
        /* Each row's key is read once, not at every comparison: a case table has 1,296 rows. */
        var keyed = rows.map(function (row) {
          var cell = row.cells[column];
          return {row: row, key: numeric ? number(cell) : (cell ? cell.textContent : "")};
        });
        /* Stable: equal keys keep their order. */
        keyed.sort(function (a, b) {
          var u = a.key, v = b.key;
          if (!numeric) return (up ? 1 : -1) * u.localeCompare(v);
          if (u === null || v === null) return (u === null) - (v === null);
          return up ? u - v : v - u;
        });
        var sorted = document.createDocumentFragment();
        keyed.forEach(function (entry) { sorted.appendChild(entry.row); });
        body.appendChild(sorted);
      });
    });
  }
  /* The page's own controls for the table, or new ones (a filter box and a count) before it. */
  function controlsFor(table, index) {
    if (!table.id) table.id = "table-" + index;
    var found = document.querySelector('.table-controls[data-table="' + table.id + '"]');
    if (found || table.tBodies[0].rows.length <= FILTER_FROM_ROWS) return found;
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
    count.className = "muted count";
    controls.appendChild(label);
    controls.appendChild(count);
    var anchor = table.closest(".table-wrap") || table;
    anchor.parentNode.insertBefore(controls, anchor);
    return controls;
  }
  function filterable(table, index) {
    var controls = controlsFor(table, index);
    var input = controls && controls.querySelector("input.filter");
    if (!input) return;
    var showAll = controls.querySelector("input.show-all"), count = controls.querySelector(".count");
    var none = table.querySelector("tr.none-shown");
    function apply() {
      var words = input.value.toLowerCase().split(/\s+/).filter(Boolean), shown = 0, rows = table.tBodies[0].rows;
      var all = !showAll || showAll.checked;
      Array.prototype.forEach.call(rows, function (row) {
        var text = row.textContent.toLowerCase();
        row.hidden = !((all || !row.classList.contains("folded")) && words.every(function (w) { return text.indexOf(w) >= 0; }));
        shown += row.hidden ? 0 : 1;
      });
      if (none) none.hidden = shown > 0;
      if (count) count.textContent = words.length ? " " + shown + " of " + rows.length + " rows" :
        " " + rows.length + " rows; a heading sorts (click it, or Tab to it and press Enter)";
    }
    input.addEventListener("input", apply);
    if (showAll) showAll.addEventListener("change", apply);
    /* Shows every row: a link to a hidden row must land on it. */
    table.primbenchShowAll = function () {
      if (input.value || (showAll && !showAll.checked)) { input.value = ""; if (showAll) showAll.checked = true; apply(); }
    };
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
    if (target.hidden && table && table.primbenchShowAll) table.primbenchShowAll();
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
