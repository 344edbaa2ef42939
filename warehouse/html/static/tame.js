/* tame-wh pages: draws the charts (vega-embed, SVG) and runs the segment table (sort, filter).
   Text reaches the page only through textContent; nothing is parsed as markup. */
(function () {
  "use strict";

  var views = {};
  window.tameViews = views;

  function readJson(id) {
    var element = document.getElementById(id);
    return element ? JSON.parse(element.textContent) : null;
  }

  function renderCharts() {
    var jobs = [];
    document.querySelectorAll("[data-chart]").forEach(function (element) {
      var spec = readJson(element.getAttribute("data-chart"));
      // ast: Vega's expression interpreter instead of eval (the pages' policy forbids eval).
      jobs.push(
        window.vegaEmbed(element, spec, { actions: false, renderer: "svg", ast: true })
          .then(function (result) { views[element.id] = result.view; })
      );
    });
    Promise.all(jobs).then(
      function () { document.body.setAttribute("data-charts", "ready"); },
      function (error) {
        document.body.setAttribute("data-charts", "failed");
        console.error("tame-wh: a chart failed to render: " + error);
      }
    );
  }

  var COLUMNS = [
    { key: "id", label: "id", numeric: false },
    { key: "src", label: "source", numeric: false },
    { key: "ref", label: "reference", numeric: false },
    { key: "hyp", label: "hypothesis", numeric: false },
    { key: "tm_src", label: "TM source", numeric: false },
    { key: "tm_tgt", label: "TM target", numeric: false },
    { key: "exposure", label: "exposure", numeric: true },
    { key: "bin", label: "bin", numeric: false },
    { key: "chrf", label: "chrF++", numeric: true }
  ];
  var SEARCHED = ["id", "src", "ref", "hyp", "tm_src", "tm_tgt"];

  function segmentRows(shared, run) {
    var position = {};
    shared.seg.forEach(function (seg, i) { position[seg] = i; });
    var errored = {};
    run.err.forEach(function (seg) { errored[seg] = true; });
    var rows = [];
    for (var k = 0; k < run.hyp.length; k++) {
      var seg = run.idx ? run.idx[k] : k;
      var i = position[seg];
      var row = {
        id: shared.id[i], src: shared.src[i], ref: shared.ref[i],
        tm_src: shared.tm_src ? shared.tm_src[i] : null,
        tm_tgt: shared.tm_tgt ? shared.tm_tgt[i] : null,
        exposure: shared.exposure ? shared.exposure[i] : null,
        bin: shared.bin ? shared.bin[i] : null,
        hyp: run.hyp[k], chrf: run.chrf[k], error: errored[seg] === true, order: i
      };
      row.text = SEARCHED.map(function (key) { return row[key] || ""; }).join("\n").toLowerCase();
      rows.push(row);
    }
    return rows;
  }

  function segmentTable() {
    var table = document.getElementById("segments");
    if (!table) { return; }
    var shared = (window.tameShared || {})[table.getAttribute("data-shared")];
    var run = readJson("segments-run");
    if (!shared || !run) {
      console.error("tame-wh: segment data missing");
      return;
    }
    var rows = segmentRows(shared, run);
    var sort = { key: "chrf", direction: 1 };
    var filter = document.getElementById("segment-filter");
    var binFilter = document.getElementById("segment-bin");
    var count = document.getElementById("segment-count");
    var collator = new Intl.Collator(undefined, { numeric: true });
    var headRow = table.tHead.rows[0];
    var body = table.tBodies[0];

    COLUMNS.forEach(function (column) {
      var th = document.createElement("th");
      th.scope = "col";
      th.setAttribute("data-key", column.key);
      if (column.numeric) { th.className = "num"; }
      var button = document.createElement("button");
      button.type = "button";
      button.textContent = column.label;
      button.addEventListener("click", function () {
        sort = { key: column.key, direction: sort.key === column.key ? -sort.direction : 1 };
        render();
      });
      th.appendChild(button);
      headRow.appendChild(th);
    });

    function compare(a, b) {
      var x = a[sort.key], y = b[sort.key];
      var xMissing = x === null || x === undefined, yMissing = y === null || y === undefined;
      if (xMissing || yMissing) { return xMissing === yMissing ? 0 : (xMissing ? 1 : -1); }
      var order = typeof x === "number" ? x - y : collator.compare(String(x), String(y));
      return order * sort.direction;
    }

    function render() {
      var needle = filter.value.trim().toLowerCase();
      var bin = binFilter.value;
      var shown = rows.filter(function (row) {
        return (!needle || row.text.indexOf(needle) !== -1) && (!bin || row.bin === bin);
      });
      shown.sort(function (a, b) { return compare(a, b) || a.order - b.order; });
      var fragment = document.createDocumentFragment();
      shown.forEach(function (row) {
        var tr = document.createElement("tr");
        tr.setAttribute("data-id", row.id);
        if (row.error) { tr.className = "errored"; tr.title = "errored entry"; }
        COLUMNS.forEach(function (column) {
          var td = document.createElement("td");
          var value = row[column.key];
          if (column.numeric) {
            td.className = "num";
            td.textContent = value === null || value === undefined ? "" :
              value.toFixed(column.key === "exposure" ? 3 : 2);
          } else {
            td.textContent = value === null || value === undefined ? "" : value;
          }
          tr.appendChild(td);
        });
        fragment.appendChild(tr);
      });
      body.replaceChildren(fragment);
      Array.prototype.forEach.call(headRow.cells, function (th) {
        var key = th.getAttribute("data-key");
        th.setAttribute("aria-sort", key !== sort.key ? "none" :
          (sort.direction > 0 ? "ascending" : "descending"));
      });
      count.textContent = shown.length + " of " + rows.length + " segments";
    }

    filter.addEventListener("input", render);
    binFilter.addEventListener("change", render);
    render();
  }

  segmentTable();
  renderCharts();
})();
