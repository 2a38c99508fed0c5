// Sorting (click a header; numbers by their full value) and filtering (text box, select boxes)
// of every table of the report; rows are hidden, never removed.
(function () {
  "use strict";
  function update(block) {
    var table = block.querySelector("table");
    var text = block.querySelector(".search").value.toLowerCase();
    var selects = block.querySelectorAll("select.filter");
    var shown = 0, rows = table.tBodies[0].rows;
    for (var i = 0; i < rows.length; i++) {
      var row = rows[i], keep = !text || row.textContent.toLowerCase().indexOf(text) >= 0;
      for (var j = 0; keep && j < selects.length; j++) {
        var want = selects[j].value;
        keep = !want || row.cells[+selects[j].dataset.col].textContent === want;
      }
      row.hidden = !keep;
      if (keep) shown++;
    }
    block.querySelector(".count").textContent =
      shown === rows.length ? rows.length + " rows" : shown + " of " + rows.length + " rows";
  }
  function sort(table, col, th) {
    var asc = !th.classList.contains("asc");
    table.querySelectorAll("th").forEach(function (h) { h.classList.remove("asc", "desc"); });
    th.classList.add(asc ? "asc" : "desc");
    var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col], y = b.cells[col], c;
      if (x.dataset.v !== undefined && y.dataset.v !== undefined) {
        c = parseFloat(x.dataset.v) - parseFloat(y.dataset.v);
      } else if (x.dataset.v !== undefined || y.dataset.v !== undefined) {
        c = x.dataset.v !== undefined ? -1 : 1;  // numbers before empty cells
      } else {
        c = x.textContent.localeCompare(y.textContent, undefined, { numeric: true });
      }
      return asc ? c : -c;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  document.querySelectorAll(".table-block").forEach(function (block) {
    var table = block.querySelector("table");
    block.querySelector(".search").addEventListener("input", function () { update(block); });
    block.querySelectorAll("select.filter").forEach(function (s) {
      s.addEventListener("change", function () { update(block); });
    });
    table.querySelectorAll("thead th").forEach(function (th, col) {
      th.addEventListener("click", function () { sort(table, col, th); });
    });
  });
})();
